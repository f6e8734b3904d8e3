"""TxnOffsetCommit (key 28, KIP-98), versions 0-5, flexible 3+.

A transactional producer commits consumer offsets as part of its transaction:
the group coordinator keeps them pending until the transaction's marker reaches
the group's ``__consumer_offsets`` partition (visible on commit, dropped on
abort).

Request::

    transactional_id   string
    group_id           string
    producer_id        int64
    producer_epoch     int16
    generation_id      int32 (v3+, default -1)
    member_id          string (v3+, default "")
    group_instance_id  string, nullable (v3+, default null)
    topics [name string,
            partitions [partition_index int32, committed_offset int64,
                        committed_leader_epoch int32 (v2+, default -1, ignorable),
                        committed_metadata string (nullable)]]

Response::

    throttle_time_ms  int32
    topics [name string, partitions [partition_index int32, error_code int16]]

v3 adds the group member checks (ILLEGAL_GENERATION, FENCED_INSTANCE_ID,
UNKNOWN_MEMBER_ID), v4 TRANSACTION_ABORTABLE; with transaction version 2, v5
also adds the group to the transaction (no AddOffsetsToTxn needed).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, array, message, proto

__all__ = [
    "TxnOffsetCommitRequest",
    "TxnOffsetCommitRequestPartition",
    "TxnOffsetCommitRequestTopic",
    "TxnOffsetCommitResponse",
    "TxnOffsetCommitResponsePartition",
    "TxnOffsetCommitResponseTopic",
]


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitRequestPartition(Struct):
    partition_index: int = proto(INT32, "0+")
    committed_offset: int = proto(INT64, "0+")
    committed_leader_epoch: int = proto(INT32, "2+", default=-1, ignorable=True)
    committed_metadata: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitRequestTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[TxnOffsetCommitRequestPartition, ...] = proto(
        array(TxnOffsetCommitRequestPartition), "0+"
    )


@message(api_key=28, kind="request", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class TxnOffsetCommitRequest(Struct):
    transactional_id: str = proto(STRING, "0+")
    group_id: str = proto(STRING, "0+")
    producer_id: int = proto(INT64, "0+")
    producer_epoch: int = proto(INT16, "0+")
    generation_id: int = proto(INT32, "3+", default=-1)
    member_id: str = proto(STRING, "3+", default="")
    group_instance_id: str | None = proto(STRING, "3+", nullable="3+", default=None)
    topics: tuple[TxnOffsetCommitRequestTopic, ...] = proto(
        array(TxnOffsetCommitRequestTopic), "0+"
    )


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitResponsePartition(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitResponseTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[TxnOffsetCommitResponsePartition, ...] = proto(
        array(TxnOffsetCommitResponsePartition), "0+"
    )


@message(api_key=28, kind="response", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class TxnOffsetCommitResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    topics: tuple[TxnOffsetCommitResponseTopic, ...] = proto(
        array(TxnOffsetCommitResponseTopic), "0+"
    )
