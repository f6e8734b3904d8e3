"""ListPartitionReassignments (key 46, KIP-455), version 0, flexible 0+.

Request::

    timeout_ms  int32 (default 60000)
    topics      [name string, partition_indexes [int32]], nullable (null, the default:
                every ongoing reassignment)

Response::

    throttle_time_ms  int32
    error_code        int16
    error_message     string (nullable)
    topics [name string, partitions [partition_index int32, replicas [int32],
            adding_replicas [int32], removing_replicas [int32]]]

Only partitions with a reassignment in progress are listed; ``replicas`` is the
whole set during the move (the target replicas plus those still being removed).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "ListPartitionReassignmentsRequest",
    "ListPartitionReassignmentsResponse",
    "ListPartitionReassignmentsTopic",
    "OngoingPartitionReassignment",
    "OngoingTopicReassignment",
]


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsTopic(Struct):
    name: str = proto(STRING, "0+")
    partition_indexes: tuple[int, ...] = proto(array(INT32), "0+")


@message(api_key=46, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsRequest(Struct):
    timeout_ms: int = proto(INT32, "0+", default=60000)
    topics: tuple[ListPartitionReassignmentsTopic, ...] | None = proto(
        array(ListPartitionReassignmentsTopic), "0+", nullable="0+", default=None
    )


@dataclass(frozen=True, slots=True)
class OngoingPartitionReassignment(Struct):
    partition_index: int = proto(INT32, "0+")
    replicas: tuple[int, ...] = proto(array(INT32), "0+")
    adding_replicas: tuple[int, ...] = proto(array(INT32), "0+")
    removing_replicas: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class OngoingTopicReassignment(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[OngoingPartitionReassignment, ...] = proto(
        array(OngoingPartitionReassignment), "0+"
    )


@message(api_key=46, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    topics: tuple[OngoingTopicReassignment, ...] = proto(array(OngoingTopicReassignment), "0+")
