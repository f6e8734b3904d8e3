"""AlterPartitionReassignments (key 45, KIP-455), version 0, flexible 0+.

Request::

    timeout_ms  int32 (default 60000)
    topics [name string, partitions [partition_index int32,
            replicas [int32] (nullable, default null: cancel a pending reassignment)]]

Response::

    throttle_time_ms  int32
    error_code        int16
    error_message     string (nullable)
    responses [name string, partitions [partition_index int32, error_code int16,
               error_message string (nullable)]]

A reassignment to the same replicas in another order changes only the order:
nothing is copied, and the first replica becomes the preferred leader, which
ElectLeaders (key 43) then elects.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "AlterPartitionReassignmentsRequest",
    "AlterPartitionReassignmentsResponse",
    "ReassignablePartition",
    "ReassignablePartitionResponse",
    "ReassignableTopic",
    "ReassignableTopicResponse",
]


@dataclass(frozen=True, slots=True)
class ReassignablePartition(Struct):
    partition_index: int = proto(INT32, "0+")
    replicas: tuple[int, ...] | None = proto(array(INT32), "0+", nullable="0+", default=None)


@dataclass(frozen=True, slots=True)
class ReassignableTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[ReassignablePartition, ...] = proto(array(ReassignablePartition), "0+")


@message(api_key=45, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsRequest(Struct):
    timeout_ms: int = proto(INT32, "0+", default=60000)
    topics: tuple[ReassignableTopic, ...] = proto(array(ReassignableTopic), "0+")


@dataclass(frozen=True, slots=True)
class ReassignablePartitionResponse(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class ReassignableTopicResponse(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[ReassignablePartitionResponse, ...] = proto(
        array(ReassignablePartitionResponse), "0+"
    )


@message(api_key=45, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    responses: tuple[ReassignableTopicResponse, ...] = proto(array(ReassignableTopicResponse), "0+")
