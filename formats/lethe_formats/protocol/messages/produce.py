"""Produce (key 0), versions 0-12 as Kafka 4.0 advertises them, flexible 9+.

Kafka 4.0 rejects v0-2 requests but still lists them in ApiVersions because
librdkafka will not send compressed batches otherwise (KAFKA-18659); the
definition covers them so such bytes can be decoded and answered.

Request: ``transactional_id`` (v3+, nullable, default null), ``acks int16``,
``timeout_ms int32``, ``topic_data [name, partition_data [index int32,
records (nullable)]]``. ``records`` is the raw record-batch bytes.

Response: ``responses [name, partition_responses [index, error_code,
base_offset, log_append_time_ms (v2+, -1), log_start_offset (v5+, -1),
record_errors (v8+) [batch_index, batch_index_error_message], error_message
(v8+, null), current_leader (tag 0, v10+)]]``, ``throttle_time_ms`` (v1+),
``node_endpoints`` (tag 0, v10+). Nothing is written for acks=0.
"""

# proto() returns a dataclasses.field; ruff cannot tell (RUF009 on non-builtin types).

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "BatchIndexAndErrorMessage",
    "LeaderIdAndEpoch",
    "NodeEndpoint",
    "PartitionProduceData",
    "PartitionProduceResponse",
    "ProduceRequest",
    "ProduceResponse",
    "TopicProduceData",
    "TopicProduceResponse",
]


@dataclass(frozen=True, slots=True)
class PartitionProduceData(Struct):
    index: int = proto(INT32, "0+")
    records: bytes | None = proto(RECORDS, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class TopicProduceData(Struct):
    name: str = proto(STRING, "0+")
    partition_data: tuple[PartitionProduceData, ...] = proto(array(PartitionProduceData), "0+")


@message(api_key=0, kind="request", valid="0-12", flexible="9+")
@dataclass(frozen=True, slots=True)
class ProduceRequest(Struct):
    transactional_id: str | None = proto(STRING, "3+", nullable="3+", default=None)
    acks: int = proto(INT16, "0+")
    timeout_ms: int = proto(INT32, "0+")
    topic_data: tuple[TopicProduceData, ...] = proto(array(TopicProduceData), "0+")


@dataclass(frozen=True, slots=True)
class BatchIndexAndErrorMessage(Struct):
    batch_index: int = proto(INT32, "8+")
    batch_index_error_message: str | None = proto(STRING, "8+", nullable="8+", default=None)


@dataclass(frozen=True, slots=True)
class LeaderIdAndEpoch(Struct):
    leader_id: int = proto(INT32, "10+", default=-1)
    leader_epoch: int = proto(INT32, "10+", default=-1)


@dataclass(frozen=True, slots=True)
class PartitionProduceResponse(Struct):
    index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    base_offset: int = proto(INT64, "0+")
    log_append_time_ms: int = proto(INT64, "2+", default=-1, ignorable=True)
    log_start_offset: int = proto(INT64, "5+", default=-1, ignorable=True)
    record_errors: tuple[BatchIndexAndErrorMessage, ...] = proto(
        array(BatchIndexAndErrorMessage), "8+", ignorable=True
    )
    error_message: str | None = proto(STRING, "8+", nullable="8+", default=None, ignorable=True)
    current_leader: LeaderIdAndEpoch = proto(LeaderIdAndEpoch, "10+", tag=0)


@dataclass(frozen=True, slots=True)
class TopicProduceResponse(Struct):
    name: str = proto(STRING, "0+")
    partition_responses: tuple[PartitionProduceResponse, ...] = proto(
        array(PartitionProduceResponse), "0+"
    )


@dataclass(frozen=True, slots=True)
class NodeEndpoint(Struct):
    node_id: int = proto(INT32, "10+")
    host: str = proto(STRING, "10+")
    port: int = proto(INT32, "10+")
    rack: str | None = proto(STRING, "10+", nullable="10+", default=None)


@message(api_key=0, kind="response", valid="0-12", flexible="9+")
@dataclass(frozen=True, slots=True)
class ProduceResponse(Struct):
    responses: tuple[TopicProduceResponse, ...] = proto(array(TopicProduceResponse), "0+")
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    node_endpoints: tuple[NodeEndpoint, ...] = proto(array(NodeEndpoint), "10+", tag=0)
