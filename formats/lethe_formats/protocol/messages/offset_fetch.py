"""OffsetFetch (key 9), versions 1-9 (Kafka 4.0 dropped v0, KIP-896), flexible 6+.

A member (or an admin) reads committed offsets. Two shapes, split at v8
(KIP-709, several groups per request)::

    request  v1-7: group_id | topics [name, partition_indexes [int32]]
                   (topics nullable v2+: null = every committed topic)
                   | require_stable bool (v7+)
             v8+:  groups [group_id, member_id nullable (v9+), member_epoch int32 (v9+),
                           topics nullable [name, partition_indexes [int32]]]
                   | require_stable bool
    response v1-7: throttle_time_ms int32 (v3+)
                   | topics [name, partitions [partition_index, committed_offset int64,
                             committed_leader_epoch int32 (v5+), metadata nullable,
                             error_code int16]]
                   | error_code int16 (v2+)
             v8+:  throttle_time_ms | groups [group_id, topics [same as above], error_code]

A partition without a committed offset has committed_offset -1, metadata ""
and error 0. ``require_stable`` (KIP-447) asks for UNSTABLE_OFFSET_COMMIT (88)
instead of offsets that a pending transaction may still change; it is not
ignorable. ``member_id``/``member_epoch`` (v9) let a KIP-848 member be checked;
classic consumers send null and -1.

Kafka declares separate element structs for the v1-7 and v8+ shapes; their
fields are the same on the wire, so one element class serves both; its field
ranges start at 0 and the enclosing array's range decides where it appears.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
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
    "NO_OFFSET",
    "OffsetFetchRequest",
    "OffsetFetchRequestGroup",
    "OffsetFetchRequestTopic",
    "OffsetFetchResponse",
    "OffsetFetchResponseGroup",
    "OffsetFetchResponsePartition",
    "OffsetFetchResponseTopic",
]

#: ``committed_offset`` of a partition with no committed offset.
NO_OFFSET = -1


@dataclass(frozen=True, slots=True)
class OffsetFetchRequestTopic(Struct):
    name: str = proto(STRING, "0+")
    partition_indexes: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class OffsetFetchRequestGroup(Struct):
    group_id: str = proto(STRING, "8+")
    member_id: str | None = proto(STRING, "9+", nullable="9+", default=None, ignorable=True)
    member_epoch: int = proto(INT32, "9+", default=-1, ignorable=True)
    topics: tuple[OffsetFetchRequestTopic, ...] | None = proto(
        array(OffsetFetchRequestTopic), "8+", nullable="8+"
    )


@message(api_key=9, kind="request", valid="1-9", flexible="6+")
@dataclass(frozen=True, slots=True)
class OffsetFetchRequest(Struct):
    group_id: str = proto(STRING, "0-7")
    topics: tuple[OffsetFetchRequestTopic, ...] | None = proto(
        array(OffsetFetchRequestTopic), "0-7", nullable="2-7"
    )
    groups: tuple[OffsetFetchRequestGroup, ...] = proto(array(OffsetFetchRequestGroup), "8+")
    require_stable: bool = proto(BOOL, "7+")


@dataclass(frozen=True, slots=True)
class OffsetFetchResponsePartition(Struct):
    partition_index: int = proto(INT32, "0+")
    committed_offset: int = proto(INT64, "0+")
    committed_leader_epoch: int = proto(INT32, "5+", default=-1, ignorable=True)
    metadata: str | None = proto(STRING, "0+", nullable="0+")
    error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class OffsetFetchResponseTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[OffsetFetchResponsePartition, ...] = proto(
        array(OffsetFetchResponsePartition), "0+"
    )


@dataclass(frozen=True, slots=True)
class OffsetFetchResponseGroup(Struct):
    group_id: str = proto(STRING, "8+")
    topics: tuple[OffsetFetchResponseTopic, ...] = proto(array(OffsetFetchResponseTopic), "8+")
    error_code: int = proto(INT16, "8+")


@message(api_key=9, kind="response", valid="1-9", flexible="6+")
@dataclass(frozen=True, slots=True)
class OffsetFetchResponse(Struct):
    throttle_time_ms: int = proto(INT32, "3+", ignorable=True)
    topics: tuple[OffsetFetchResponseTopic, ...] = proto(array(OffsetFetchResponseTopic), "0-7")
    error_code: int = proto(INT16, "2-7", ignorable=True)
    groups: tuple[OffsetFetchResponseGroup, ...] = proto(array(OffsetFetchResponseGroup), "8+")
