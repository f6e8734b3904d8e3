"""Fetch (key 1), versions 4-17 (Kafka 4.0 dropped v0-3), flexible 12+.

Request: ``cluster_id`` (tag 0, v12+), ``replica_id`` (v0-14; a follower's id,
-1 for consumers), ``replica_state`` (tag 1, v15+: the same for v15+),
``max_wait_ms``, ``min_bytes``, ``max_bytes`` (0x7fffffff), ``isolation_level``,
``session_id``/``session_epoch`` (v7+, incremental fetch sessions, KIP-227),
``topics [topic (v0-12) | topic_id (v13+), partitions [partition,
current_leader_epoch (v9+), fetch_offset, last_fetched_epoch (v12+),
log_start_offset (v5+, followers only), partition_max_bytes,
replica_directory_id (tag 0, v17+)]]``, ``forgotten_topics_data`` (v7+),
``rack_id`` (v11+), ``tombstone_flag_aware`` (tag 10087, v12+: lethe's KIP-87
extension, catalog KIP87-PRD-6; a consumer sets it to get flagged tombstones
as written, without it the broker nulls their values; Kafka skips the tag).

Response: ``throttle_time_ms``, ``error_code`` (v7+), ``session_id`` (v7+),
``responses [topic | topic_id, partitions [partition_index, error_code,
high_watermark, last_stable_offset (v4+), log_start_offset (v5+: the leader's
log start offset, KIP-107), diverging_epoch (tag 0), current_leader (tag 1),
snapshot_id (tag 2), aborted_transactions (nullable), preferred_read_replica
(v11+), records]]``, ``node_endpoints`` (tag 0, v16+). A broker may put a
:class:`~lethe_formats.protocol.regions.ByteRegion` (a file region) in ``records``;
decoding always gives bytes.
"""

# proto() returns a dataclasses.field; ruff cannot tell (RUF009 on non-builtin types).

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lethe_formats.protocol.regions import ByteRegion
from lethe_formats.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    ZERO_UUID,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "TOMBSTONE_FLAG_AWARE_TAG",
    "AbortedTransaction",
    "EpochEndOffset",
    "FetchPartition",
    "FetchRequest",
    "FetchResponse",
    "FetchTopic",
    "FetchableTopicResponse",
    "ForgottenTopic",
    "LeaderIdAndEpoch",
    "NodeEndpoint",
    "PartitionData",
    "ReplicaState",
    "SnapshotId",
]


#: The tag of the KIP-87 consumer signal (10000 + the KIP number, as KIP-694's tags).
TOMBSTONE_FLAG_AWARE_TAG = 10087


@dataclass(frozen=True, slots=True)
class ReplicaState(Struct):
    replica_id: int = proto(INT32, "15+", default=-1)
    replica_epoch: int = proto(INT64, "15+", default=-1)


@dataclass(frozen=True, slots=True)
class FetchPartition(Struct):
    partition: int = proto(INT32, "0+")
    current_leader_epoch: int = proto(INT32, "9+", default=-1, ignorable=True)
    fetch_offset: int = proto(INT64, "0+")
    last_fetched_epoch: int = proto(INT32, "12+", default=-1)
    log_start_offset: int = proto(INT64, "5+", default=-1, ignorable=True)
    partition_max_bytes: int = proto(INT32, "0+")
    replica_directory_id: uuid.UUID = proto(UUID, "17+", tag=0, default=ZERO_UUID, ignorable=True)


@dataclass(frozen=True, slots=True)
class FetchTopic(Struct):
    topic: str = proto(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = proto(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[FetchPartition, ...] = proto(array(FetchPartition), "0+")


@dataclass(frozen=True, slots=True)
class ForgottenTopic(Struct):
    topic: str = proto(STRING, "7-12", ignorable=True)
    topic_id: uuid.UUID = proto(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[int, ...] = proto(array(INT32), "7+")


@message(api_key=1, kind="request", valid="4-17", flexible="12+")
@dataclass(frozen=True, slots=True)
class FetchRequest(Struct):
    cluster_id: str | None = proto(
        STRING, "12+", nullable="12+", tag=0, default=None, ignorable=True
    )
    replica_id: int = proto(INT32, "0-14", default=-1)
    replica_state: ReplicaState = proto(ReplicaState, "15+", tag=1)
    max_wait_ms: int = proto(INT32, "0+")
    min_bytes: int = proto(INT32, "0+")
    max_bytes: int = proto(INT32, "3+", default=0x7FFFFFFF, ignorable=True)
    isolation_level: int = proto(INT8, "4+", ignorable=True)
    session_id: int = proto(INT32, "7+", ignorable=True)
    session_epoch: int = proto(INT32, "7+", default=-1, ignorable=True)
    topics: tuple[FetchTopic, ...] = proto(array(FetchTopic), "0+")
    forgotten_topics_data: tuple[ForgottenTopic, ...] = proto(array(ForgottenTopic), "7+")
    rack_id: str = proto(STRING, "11+", ignorable=True)
    #: KIP-87 (lethe extension): the consumer reads the record tombstone flag itself.
    tombstone_flag_aware: bool = proto(
        BOOL, "12+", tag=TOMBSTONE_FLAG_AWARE_TAG, default=False, ignorable=True
    )


@dataclass(frozen=True, slots=True)
class EpochEndOffset(Struct):
    epoch: int = proto(INT32, "12+", default=-1)
    end_offset: int = proto(INT64, "12+", default=-1)


@dataclass(frozen=True, slots=True)
class LeaderIdAndEpoch(Struct):
    leader_id: int = proto(INT32, "12+", default=-1)
    leader_epoch: int = proto(INT32, "12+", default=-1)


@dataclass(frozen=True, slots=True)
class SnapshotId(Struct):
    end_offset: int = proto(INT64, "0+", default=-1)
    epoch: int = proto(INT32, "0+", default=-1)


@dataclass(frozen=True, slots=True)
class AbortedTransaction(Struct):
    producer_id: int = proto(INT64, "4+")
    first_offset: int = proto(INT64, "4+")


@dataclass(frozen=True, slots=True)
class PartitionData(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    high_watermark: int = proto(INT64, "0+")
    last_stable_offset: int = proto(INT64, "4+", default=-1, ignorable=True)
    log_start_offset: int = proto(INT64, "5+", default=-1, ignorable=True)
    diverging_epoch: EpochEndOffset = proto(EpochEndOffset, "12+", tag=0)
    current_leader: LeaderIdAndEpoch = proto(LeaderIdAndEpoch, "12+", tag=1)
    snapshot_id: SnapshotId = proto(SnapshotId, "12+", tag=2)
    aborted_transactions: tuple[AbortedTransaction, ...] | None = proto(
        array(AbortedTransaction), "4+", nullable="4+", ignorable=True
    )
    preferred_read_replica: int = proto(INT32, "11+", default=-1)
    records: bytes | ByteRegion | None = proto(RECORDS, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class FetchableTopicResponse(Struct):
    topic: str = proto(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = proto(UUID, "13+", default=ZERO_UUID, ignorable=True)
    partitions: tuple[PartitionData, ...] = proto(array(PartitionData), "0+")


@dataclass(frozen=True, slots=True)
class NodeEndpoint(Struct):
    node_id: int = proto(INT32, "16+")
    host: str = proto(STRING, "16+")
    port: int = proto(INT32, "16+")
    rack: str | None = proto(STRING, "16+", nullable="16+", default=None)


@message(api_key=1, kind="response", valid="4-17", flexible="12+")
@dataclass(frozen=True, slots=True)
class FetchResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    error_code: int = proto(INT16, "7+", ignorable=True)
    session_id: int = proto(INT32, "7+")
    responses: tuple[FetchableTopicResponse, ...] = proto(array(FetchableTopicResponse), "0+")
    node_endpoints: tuple[NodeEndpoint, ...] = proto(array(NodeEndpoint), "16+", tag=0)
