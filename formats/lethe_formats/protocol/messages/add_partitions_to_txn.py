"""AddPartitionsToTxn (key 24, KIP-98), versions 0-5, flexible 3+.

A transactional producer tells its coordinator which partitions it is about to
write, so the coordinator knows where to send the transaction's markers.

Request (v0-3, the client form)::

    v3_and_below_transactional_id  string
    v3_and_below_producer_id       int64
    v3_and_below_producer_epoch    int16
    v3_and_below_topics            [name string, partitions [int32]]

Request (v4+, the broker form, KIP-890)::

    transactions [transactional_id string, producer_id int64,
                  producer_epoch int16, verify_only bool (default false),
                  topics [name string, partitions [int32]]]

A partition leader sends v4+ with ``verify_only`` true before appending a
transactional batch (``transaction.partition.verification.enable``): the
coordinator answers whether the partition is already part of the open
transaction, without adding it. v4+ batches several transactional ids, which
is why the client form (v0-3) and the broker form do not share fields.

Response::

    throttle_time_ms  int32
    error_code        int16 (v4+, top-level; ignorable)
    results_by_transaction [transactional_id string,
                            topic_results [AddPartitionsToTxnTopicResult]]   (v4+)
    results_by_topic_v3_and_below [AddPartitionsToTxnTopicResult]           (v0-3)

    AddPartitionsToTxnTopicResult: name string,
        results_by_partition [partition_index int32, partition_error_code int16]

v2 may answer PRODUCER_FENCED, v5 TRANSACTION_ABORTABLE (KIP-890).
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
    "AddPartitionsToTxnPartitionResult",
    "AddPartitionsToTxnRequest",
    "AddPartitionsToTxnResponse",
    "AddPartitionsToTxnResult",
    "AddPartitionsToTxnTopic",
    "AddPartitionsToTxnTopicResult",
    "AddPartitionsToTxnTransaction",
]


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnTransaction(Struct):
    transactional_id: str = proto(STRING, "4+")
    producer_id: int = proto(INT64, "4+")
    producer_epoch: int = proto(INT16, "4+")
    verify_only: bool = proto(BOOL, "4+", default=False)
    topics: tuple[AddPartitionsToTxnTopic, ...] = proto(array(AddPartitionsToTxnTopic), "4+")


@message(api_key=24, kind="request", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnRequest(Struct):
    transactions: tuple[AddPartitionsToTxnTransaction, ...] = proto(
        array(AddPartitionsToTxnTransaction), "4+"
    )
    v3_and_below_transactional_id: str = proto(STRING, "0-3")
    v3_and_below_producer_id: int = proto(INT64, "0-3")
    v3_and_below_producer_epoch: int = proto(INT16, "0-3")
    v3_and_below_topics: tuple[AddPartitionsToTxnTopic, ...] = proto(
        array(AddPartitionsToTxnTopic), "0-3"
    )


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnPartitionResult(Struct):
    partition_index: int = proto(INT32, "0+")
    partition_error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnTopicResult(Struct):
    name: str = proto(STRING, "0+")
    results_by_partition: tuple[AddPartitionsToTxnPartitionResult, ...] = proto(
        array(AddPartitionsToTxnPartitionResult), "0+"
    )


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnResult(Struct):
    transactional_id: str = proto(STRING, "4+")
    topic_results: tuple[AddPartitionsToTxnTopicResult, ...] = proto(
        array(AddPartitionsToTxnTopicResult), "4+"
    )


@message(api_key=24, kind="response", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "4+", ignorable=True)
    results_by_transaction: tuple[AddPartitionsToTxnResult, ...] = proto(
        array(AddPartitionsToTxnResult), "4+"
    )
    results_by_topic_v3_and_below: tuple[AddPartitionsToTxnTopicResult, ...] = proto(
        array(AddPartitionsToTxnTopicResult), "0-3"
    )
