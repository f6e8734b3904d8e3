"""OffsetForLeaderEpoch (key 23, KIP-101/KIP-320), versions 2-4 (Kafka 4.0's range), flexible 4+.

Request::

    replica_id  int32 (v3+, default -2: a consumer sends -1, a follower its id)
    topics [topic string, partitions [partition int32,
            current_leader_epoch int32 (default -1: not checked), leader_epoch int32]]

Response::

    throttle_time_ms  int32
    topics [topic string, partitions [error_code int16, partition int32,
            leader_epoch int32 (default -1), end_offset int64 (default -1)]]

For each partition, the end offset of ``leader_epoch`` in the leader's
epoch cache (``leader-epoch-checkpoint``): the start offset of the next
higher epoch, or the log end offset for the latest epoch. A consumer checks
with it that its position did not fall into a truncated range (KIP-320).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, array, message, proto

__all__ = [
    "EpochEndOffset",
    "OffsetForLeaderEpochRequest",
    "OffsetForLeaderEpochResponse",
    "OffsetForLeaderPartition",
    "OffsetForLeaderTopic",
    "OffsetForLeaderTopicResult",
]


@dataclass(frozen=True, slots=True)
class OffsetForLeaderPartition(Struct):
    partition: int = proto(INT32, "0+")
    current_leader_epoch: int = proto(INT32, "2+", default=-1, ignorable=True)
    leader_epoch: int = proto(INT32, "0+")


@dataclass(frozen=True, slots=True)
class OffsetForLeaderTopic(Struct):
    topic: str = proto(STRING, "0+")
    partitions: tuple[OffsetForLeaderPartition, ...] = proto(array(OffsetForLeaderPartition), "0+")


@message(api_key=23, kind="request", valid="2-4", flexible="4+")
@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochRequest(Struct):
    replica_id: int = proto(INT32, "3+", default=-2, ignorable=True)
    topics: tuple[OffsetForLeaderTopic, ...] = proto(array(OffsetForLeaderTopic), "0+")


@dataclass(frozen=True, slots=True)
class EpochEndOffset(Struct):
    error_code: int = proto(INT16, "0+")
    partition: int = proto(INT32, "0+")
    leader_epoch: int = proto(INT32, "1+", default=-1, ignorable=True)
    end_offset: int = proto(INT64, "0+", default=-1)


@dataclass(frozen=True, slots=True)
class OffsetForLeaderTopicResult(Struct):
    topic: str = proto(STRING, "0+")
    partitions: tuple[EpochEndOffset, ...] = proto(array(EpochEndOffset), "0+")


@message(api_key=23, kind="response", valid="2-4", flexible="4+")
@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochResponse(Struct):
    throttle_time_ms: int = proto(INT32, "2+", ignorable=True)
    topics: tuple[OffsetForLeaderTopicResult, ...] = proto(array(OffsetForLeaderTopicResult), "0+")
