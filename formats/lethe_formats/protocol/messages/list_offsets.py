"""ListOffsets (key 2), versions 1-10 (Kafka 4.0 dropped v0), flexible 6+.

Request: ``replica_id int32`` (-1 consumer, -2 debugging), ``isolation_level
int8`` (v2+; 0 read uncommitted, 1 read committed), ``topics [name, partitions
[partition_index, current_leader_epoch (v4+, -1), timestamp int64]]``,
``timeout_ms`` (v10+). Special timestamps: -1 latest, -2 earliest, -3 max
timestamp (v7+), -4 earliest local (v8+), -5 latest tiered (v9+).

Response: ``throttle_time_ms`` (v2+), ``topics [name, partitions
[partition_index, error_code, timestamp (-1), offset (-1), leader_epoch (v4+, -1)]]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    INT8,
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
    "ListOffsetsPartition",
    "ListOffsetsPartitionResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "ListOffsetsTopic",
    "ListOffsetsTopicResponse",
]


@dataclass(frozen=True, slots=True)
class ListOffsetsPartition(Struct):
    partition_index: int = proto(INT32, "0+")
    current_leader_epoch: int = proto(INT32, "4+", default=-1, ignorable=True)
    timestamp: int = proto(INT64, "0+")


@dataclass(frozen=True, slots=True)
class ListOffsetsTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[ListOffsetsPartition, ...] = proto(array(ListOffsetsPartition), "0+")


@message(api_key=2, kind="request", valid="1-10", flexible="6+")
@dataclass(frozen=True, slots=True)
class ListOffsetsRequest(Struct):
    replica_id: int = proto(INT32, "0+")
    isolation_level: int = proto(INT8, "2+")
    topics: tuple[ListOffsetsTopic, ...] = proto(array(ListOffsetsTopic), "0+")
    timeout_ms: int = proto(INT32, "10+", ignorable=True)


@dataclass(frozen=True, slots=True)
class ListOffsetsPartitionResponse(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    timestamp: int = proto(INT64, "1+", default=-1)
    offset: int = proto(INT64, "1+", default=-1)
    leader_epoch: int = proto(INT32, "4+", default=-1)


@dataclass(frozen=True, slots=True)
class ListOffsetsTopicResponse(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[ListOffsetsPartitionResponse, ...] = proto(
        array(ListOffsetsPartitionResponse), "0+"
    )


@message(api_key=2, kind="response", valid="1-10", flexible="6+")
@dataclass(frozen=True, slots=True)
class ListOffsetsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "2+", ignorable=True)
    topics: tuple[ListOffsetsTopicResponse, ...] = proto(array(ListOffsetsTopicResponse), "0+")
