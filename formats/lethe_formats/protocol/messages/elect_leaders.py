"""ElectLeaders (key 43, KIP-460), versions 0-2, flexible 2+.

Request::

    election_type      int8 (v1+; 0 the preferred replica, 1 unclean: the first live
                       replica when none is in sync)
    topic_partitions   [topic string, partitions [int32]], nullable (null: every partition)
    timeout_ms         int32 (default 60000)

Response::

    throttle_time_ms          int32
    error_code                int16 (v1+: the request's own error)
    replica_election_results  [topic string, partition_result [partition_id int32,
                              error_code int16, error_message string (nullable)]]

An operator's way to move leadership: a preferred election makes the first
replica of the partition's assignment its leader, if it is alive and in sync
(ELECTION_NOT_NEEDED (84) when it already leads). The conformance kit pairs it
with AlterPartitionReassignments, which puts the chosen replica first.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT8, INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "PREFERRED",
    "UNCLEAN",
    "ElectLeadersPartitionResult",
    "ElectLeadersRequest",
    "ElectLeadersResponse",
    "ElectLeadersTopic",
    "ElectLeadersTopicResult",
]

#: ``election_type`` values.
PREFERRED = 0
UNCLEAN = 1


@dataclass(frozen=True, slots=True)
class ElectLeadersTopic(Struct):
    topic: str = proto(STRING, "0+")
    partitions: tuple[int, ...] = proto(array(INT32), "0+")


@message(api_key=43, kind="request", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class ElectLeadersRequest(Struct):
    election_type: int = proto(INT8, "1+")
    topic_partitions: tuple[ElectLeadersTopic, ...] | None = proto(
        array(ElectLeadersTopic), "0+", nullable="0+"
    )
    timeout_ms: int = proto(INT32, "0+", default=60000)


@dataclass(frozen=True, slots=True)
class ElectLeadersPartitionResult(Struct):
    partition_id: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class ElectLeadersTopicResult(Struct):
    topic: str = proto(STRING, "0+")
    partition_result: tuple[ElectLeadersPartitionResult, ...] = proto(
        array(ElectLeadersPartitionResult), "0+"
    )


@message(api_key=43, kind="response", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class ElectLeadersResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "1+")
    replica_election_results: tuple[ElectLeadersTopicResult, ...] = proto(
        array(ElectLeadersTopicResult), "0+"
    )
