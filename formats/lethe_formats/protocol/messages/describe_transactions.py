"""DescribeTransactions (key 65, KIP-664), version 0, flexible 0+.

``kafka-transactions.sh describe`` asks a transaction coordinator for the
state of some transactional ids.

Request::

    transactional_ids [string]

Response::

    throttle_time_ms  int32
    transaction_states [error_code int16, transactional_id string,
                        transaction_state string, transaction_timeout_ms int32,
                        transaction_start_time_ms int64, producer_id int64,
                        producer_epoch int16, topics [topic string, partitions [int32]]]

``transaction_state`` is the coordinator's state name as Kafka spells it
(``Empty``, ``Ongoing``, ``PrepareCommit``, ``CompleteAbort``...); an id the
coordinator does not own answers NOT_COORDINATOR, an unknown one
TRANSACTIONAL_ID_NOT_FOUND.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, array, message, proto

__all__ = [
    "DescribeTransactionsRequest",
    "DescribeTransactionsResponse",
    "DescribedTransaction",
    "DescribedTransactionTopic",
]


@message(api_key=65, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeTransactionsRequest(Struct):
    transactional_ids: tuple[str, ...] = proto(array(STRING), "0+")


@dataclass(frozen=True, slots=True)
class DescribedTransactionTopic(Struct):
    topic: str = proto(STRING, "0+")
    partitions: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class DescribedTransaction(Struct):
    error_code: int = proto(INT16, "0+")
    transactional_id: str = proto(STRING, "0+")
    transaction_state: str = proto(STRING, "0+")
    transaction_timeout_ms: int = proto(INT32, "0+")
    transaction_start_time_ms: int = proto(INT64, "0+")
    producer_id: int = proto(INT64, "0+")
    producer_epoch: int = proto(INT16, "0+")
    topics: tuple[DescribedTransactionTopic, ...] = proto(array(DescribedTransactionTopic), "0+")


@message(api_key=65, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeTransactionsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    transaction_states: tuple[DescribedTransaction, ...] = proto(array(DescribedTransaction), "0+")
