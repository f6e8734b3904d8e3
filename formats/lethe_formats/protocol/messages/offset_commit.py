"""OffsetCommit (key 8), versions 2-9 (Kafka 4.0 dropped v0-1, KIP-896), flexible 8+.

A group member stores its consumed positions in ``__consumer_offsets``::

    request:  group_id | generation_id_or_member_epoch int32 | member_id
              | group_instance_id nullable (v7+) | retention_time_ms int64 (v2-4)
              | topics [name, partitions [partition_index int32,
                        committed_offset int64, committed_leader_epoch int32 (v6+),
                        committed_metadata nullable string]]
    response: throttle_time_ms int32 (v3+)
              | topics [name, partitions [partition_index int32, error_code int16]]

``generation_id_or_member_epoch`` is the classic group's generation, or the
member epoch of a KIP-848 consumer group (v9+); -1 with an empty member id
commits for a group without members (admin/standalone commits).
``retention_time_ms`` (-1: the broker's ``offsets.retention.minutes``) was
dropped in v5; since then only the broker config decides. The v1-only
``commit_timestamp`` left Kafka with v0-1.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "DEFAULT_RETENTION",
    "OffsetCommitRequest",
    "OffsetCommitRequestPartition",
    "OffsetCommitRequestTopic",
    "OffsetCommitResponse",
    "OffsetCommitResponsePartition",
    "OffsetCommitResponseTopic",
]

#: ``retention_time_ms`` meaning "use the broker's offsets.retention.minutes".
DEFAULT_RETENTION = -1


@dataclass(frozen=True, slots=True)
class OffsetCommitRequestPartition(Struct):
    partition_index: int = proto(INT32, "0+")
    committed_offset: int = proto(INT64, "0+")
    committed_leader_epoch: int = proto(INT32, "6+", default=-1, ignorable=True)
    committed_metadata: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class OffsetCommitRequestTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[OffsetCommitRequestPartition, ...] = proto(
        array(OffsetCommitRequestPartition), "0+"
    )


@message(api_key=8, kind="request", valid="2-9", flexible="8+")
@dataclass(frozen=True, slots=True)
class OffsetCommitRequest(Struct):
    group_id: str = proto(STRING, "0+")
    generation_id_or_member_epoch: int = proto(INT32, "1+", default=-1, ignorable=True)
    member_id: str = proto(STRING, "1+", ignorable=True)
    group_instance_id: str | None = proto(STRING, "7+", nullable="7+", default=None)
    retention_time_ms: int = proto(INT64, "2-4", default=DEFAULT_RETENTION, ignorable=True)
    topics: tuple[OffsetCommitRequestTopic, ...] = proto(array(OffsetCommitRequestTopic), "0+")


@dataclass(frozen=True, slots=True)
class OffsetCommitResponsePartition(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class OffsetCommitResponseTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[OffsetCommitResponsePartition, ...] = proto(
        array(OffsetCommitResponsePartition), "0+"
    )


@message(api_key=8, kind="response", valid="2-9", flexible="8+")
@dataclass(frozen=True, slots=True)
class OffsetCommitResponse(Struct):
    throttle_time_ms: int = proto(INT32, "3+", ignorable=True)
    topics: tuple[OffsetCommitResponseTopic, ...] = proto(array(OffsetCommitResponseTopic), "0+")
