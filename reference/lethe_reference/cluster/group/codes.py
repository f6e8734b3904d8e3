"""Kafka error codes the group coordinator answers with (``Errors`` of Kafka 4.0).

Theory of operation
-------------------
Plain ``int`` constants with Kafka's names, kept in this one module until the
protocol layer's error-code table (``lethe_formats.protocol``) lands; then this
module re-exports from there and nothing else changes. Results carry these
codes; the handler layer copies them into responses.

The two ``*_append_error`` functions are Kafka's translation of a failed write to
``__consumer_offsets`` into what the client is told
(``appendGroupMetadataErrorToResponseError`` and its offset-commit twin): a
client cannot act on "not enough replicas", it can on "find the coordinator
again".
"""

from __future__ import annotations

__all__ = [
    "COORDINATOR_LOAD_IN_PROGRESS",
    "COORDINATOR_NOT_AVAILABLE",
    "FENCED_INSTANCE_ID",
    "GROUP_ID_NOT_FOUND",
    "GROUP_MAX_SIZE_REACHED",
    "ILLEGAL_GENERATION",
    "INCONSISTENT_GROUP_PROTOCOL",
    "INVALID_COMMIT_OFFSET_SIZE",
    "INVALID_FETCH_SIZE",
    "INVALID_GROUP_ID",
    "INVALID_SESSION_TIMEOUT",
    "KAFKA_STORAGE_ERROR",
    "MEMBER_ID_REQUIRED",
    "MESSAGE_TOO_LARGE",
    "NONE",
    "NOT_COORDINATOR",
    "NOT_ENOUGH_REPLICAS",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "NOT_LEADER_OR_FOLLOWER",
    "OFFSET_METADATA_TOO_LARGE",
    "REBALANCE_IN_PROGRESS",
    "RECORD_LIST_TOO_LARGE",
    "REQUEST_TIMED_OUT",
    "UNKNOWN_MEMBER_ID",
    "UNKNOWN_SERVER_ERROR",
    "UNKNOWN_TOPIC_OR_PARTITION",
    "group_append_error",
    "offset_append_error",
]

UNKNOWN_SERVER_ERROR = -1
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
MESSAGE_TOO_LARGE = 10
OFFSET_METADATA_TOO_LARGE = 12
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
RECORD_LIST_TOO_LARGE = 18
NOT_ENOUGH_REPLICAS = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
INVALID_COMMIT_OFFSET_SIZE = 28
KAFKA_STORAGE_ERROR = 56
GROUP_ID_NOT_FOUND = 69
MEMBER_ID_REQUIRED = 79
GROUP_MAX_SIZE_REACHED = 81
FENCED_INSTANCE_ID = 82
INVALID_FETCH_SIZE = 4

_RETRY_ELSEWHERE = {
    UNKNOWN_TOPIC_OR_PARTITION: COORDINATOR_NOT_AVAILABLE,
    NOT_ENOUGH_REPLICAS: COORDINATOR_NOT_AVAILABLE,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND: COORDINATOR_NOT_AVAILABLE,
    REQUEST_TIMED_OUT: COORDINATOR_NOT_AVAILABLE,
    NOT_LEADER_OR_FOLLOWER: NOT_COORDINATOR,
    KAFKA_STORAGE_ERROR: NOT_COORDINATOR,
}
_TOO_LARGE = (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE)


def group_append_error(code: int) -> int:
    """What a JoinGroup/SyncGroup client is told when writing group metadata failed."""
    if code in _TOO_LARGE:
        return UNKNOWN_SERVER_ERROR
    return _RETRY_ELSEWHERE.get(code, code)


def offset_append_error(code: int) -> int:
    """What an OffsetCommit client is told when writing its offsets failed."""
    if code in _TOO_LARGE:
        return INVALID_COMMIT_OFFSET_SIZE
    return _RETRY_ELSEWHERE.get(code, code)
