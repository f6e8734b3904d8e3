"""InitProducerId (key 22, KIP-98), versions 0-5, flexible 2+.

Gives an idempotent or transactional producer its producer id and epoch.

Request::

    transactional_id        string, nullable (null: idempotent, not transactional)
    transaction_timeout_ms  int32
    producer_id             int64 (v3+, default -1: the id the producer had, KIP-360)
    producer_epoch          int16 (v3+, default -1)

Response::

    throttle_time_ms  int32
    error_code        int16
    producer_id       int64 (default -1)
    producer_epoch    int16

v1 is v0 (the broker answers before throttling); v4 may answer PRODUCER_FENCED,
v5 TRANSACTION_ABORTABLE (KIP-890). A broker still loading its producer-id
block answers COORDINATOR_LOAD_IN_PROGRESS with id -1, epoch -1.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, message, proto

__all__ = ["NO_PRODUCER_EPOCH", "NO_PRODUCER_ID", "InitProducerIdRequest", "InitProducerIdResponse"]

#: "No producer id" / "no epoch" (Kafka's RecordBatch.NO_PRODUCER_ID / NO_PRODUCER_EPOCH).
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


@message(api_key=22, kind="request", valid="0-5", flexible="2+")
@dataclass(frozen=True, slots=True)
class InitProducerIdRequest(Struct):
    transactional_id: str | None = proto(STRING, "0+", nullable="0+")
    transaction_timeout_ms: int = proto(INT32, "0+")
    producer_id: int = proto(INT64, "3+", default=NO_PRODUCER_ID)
    producer_epoch: int = proto(INT16, "3+", default=NO_PRODUCER_EPOCH)


@message(api_key=22, kind="response", valid="0-5", flexible="2+")
@dataclass(frozen=True, slots=True)
class InitProducerIdResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    producer_id: int = proto(INT64, "0+", default=NO_PRODUCER_ID)
    producer_epoch: int = proto(INT16, "0+")
