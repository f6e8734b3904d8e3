"""Kafka error codes the group coordinator answers with (``Errors`` of Kafka 4.0).

Theory of operation
-------------------
The codes are members of the protocol layer's one error table
(:class:`lethe_formats.protocol.error_codes.ErrorCode`, an ``IntEnum``), named
here so the coordinator's modules read ``codes.UNKNOWN_MEMBER_ID``. Results
carry them as ints; the handler layer copies them into responses.

The two ``*_append_error`` functions are Kafka's translation of a failed write to
``__consumer_offsets`` into what the client is told
(``appendGroupMetadataErrorToResponseError`` and its offset-commit twin): a
client cannot act on "not enough replicas", it can on "find the coordinator
again".
"""

from __future__ import annotations

from lethe_formats.protocol.error_codes import ErrorCode

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
    "UNSTABLE_OFFSET_COMMIT",
    "group_append_error",
    "offset_append_error",
]

UNKNOWN_SERVER_ERROR = ErrorCode.UNKNOWN_SERVER_ERROR
NONE = ErrorCode.NONE
UNKNOWN_TOPIC_OR_PARTITION = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
INVALID_FETCH_SIZE = ErrorCode.INVALID_FETCH_SIZE
NOT_LEADER_OR_FOLLOWER = ErrorCode.NOT_LEADER_OR_FOLLOWER
REQUEST_TIMED_OUT = ErrorCode.REQUEST_TIMED_OUT
MESSAGE_TOO_LARGE = ErrorCode.MESSAGE_TOO_LARGE
OFFSET_METADATA_TOO_LARGE = ErrorCode.OFFSET_METADATA_TOO_LARGE
COORDINATOR_LOAD_IN_PROGRESS = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
COORDINATOR_NOT_AVAILABLE = ErrorCode.COORDINATOR_NOT_AVAILABLE
NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR
RECORD_LIST_TOO_LARGE = ErrorCode.RECORD_LIST_TOO_LARGE
NOT_ENOUGH_REPLICAS = ErrorCode.NOT_ENOUGH_REPLICAS
NOT_ENOUGH_REPLICAS_AFTER_APPEND = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
ILLEGAL_GENERATION = ErrorCode.ILLEGAL_GENERATION
INCONSISTENT_GROUP_PROTOCOL = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
INVALID_GROUP_ID = ErrorCode.INVALID_GROUP_ID
UNKNOWN_MEMBER_ID = ErrorCode.UNKNOWN_MEMBER_ID
INVALID_SESSION_TIMEOUT = ErrorCode.INVALID_SESSION_TIMEOUT
REBALANCE_IN_PROGRESS = ErrorCode.REBALANCE_IN_PROGRESS
INVALID_COMMIT_OFFSET_SIZE = ErrorCode.INVALID_COMMIT_OFFSET_SIZE
KAFKA_STORAGE_ERROR = ErrorCode.KAFKA_STORAGE_ERROR
GROUP_ID_NOT_FOUND = ErrorCode.GROUP_ID_NOT_FOUND
MEMBER_ID_REQUIRED = ErrorCode.MEMBER_ID_REQUIRED
GROUP_MAX_SIZE_REACHED = ErrorCode.GROUP_MAX_SIZE_REACHED
FENCED_INSTANCE_ID = ErrorCode.FENCED_INSTANCE_ID
UNSTABLE_OFFSET_COMMIT = ErrorCode.UNSTABLE_OFFSET_COMMIT

_RETRY_ELSEWHERE: dict[int, int] = {
    UNKNOWN_TOPIC_OR_PARTITION: COORDINATOR_NOT_AVAILABLE,
    NOT_ENOUGH_REPLICAS: COORDINATOR_NOT_AVAILABLE,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND: COORDINATOR_NOT_AVAILABLE,
    REQUEST_TIMED_OUT: COORDINATOR_NOT_AVAILABLE,
    NOT_LEADER_OR_FOLLOWER: NOT_COORDINATOR,
    KAFKA_STORAGE_ERROR: NOT_COORDINATOR,
}
_TOO_LARGE: tuple[int, ...] = (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE)


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
