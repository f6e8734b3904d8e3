"""``__transaction_state`` records: what the transaction coordinator writes.

Byte layouts (Kafka 4.0's TransactionLogKey / TransactionLogValue)::

    TransactionLogKey                       since
      version          int16                (0; another version is a key Kafka
      transactionalId  string               v0   does not know and skips)

    TransactionLogValue                     since   (v1 flexible)
      version                          int16
      producerId                       int64   v0
      previousProducerId               int64   tag 0, v1 (-1 = none)
      nextProducerId                   int64   tag 1, v1 (-1 = none)
      producerEpoch                    int16   v0
      transactionTimeoutMs             int32   v0
      transactionStatus                int8    v0   (TransactionState id)
      transactionPartitions            [topic string | partitionIds [int32]]?  v0
      transactionLastUpdateTimestampMs int64   v0
      transactionStartTimestampMs      int64   v0
      clientTransactionVersion         int16   tag 2, v1 (0)

A null value is a tombstone (the transactional id expired). The states are
Kafka's ``TransactionState`` ids, :data:`TRANSACTION_STATES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from construct import ConstructError

from lethe_formats.coordinator._message import (
    ArrayOf,
    Field,
    MessageSpec,
    Reject,
    StructSpec,
    UnsupportedVersionError,
    Versions,
    message_schema,
    since,
    version_cases,
)
from lethe_formats.errors import CorruptRecordError, FormatError
from lethe_formats.primitives import Window

__all__ = [
    "TRANSACTION_LOG_VALUE",
    "TRANSACTION_STATES",
    "TransactionLogKey",
    "TransactionLogValue",
    "TransactionPartitions",
    "decode_transaction_key",
    "decode_transaction_value",
]

#: ``TransactionState`` by id, as Kafka 4.0 names them.
TRANSACTION_STATES = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)

Tags = tuple[tuple[int, bytes], ...]


@dataclass(frozen=True, slots=True)
class TransactionLogKey:
    """The key; ``version`` other than 0 is a key type Kafka does not know."""

    version: int
    transactional_id: str | None


@dataclass(frozen=True, slots=True)
class TransactionPartitions:
    topic: str
    partition_ids: tuple[int, ...]
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class TransactionLogValue:
    """A transactional id's state."""

    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_status: int
    transaction_partitions: tuple[TransactionPartitions, ...] | None
    transaction_last_update_timestamp_ms: int
    transaction_start_timestamp_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0
    version: int = 1
    unknown_tags: Tags = ()


_PARTITIONS = StructSpec(
    TransactionPartitions,
    (Field("topic", "string"), Field("partition_ids", ArrayOf("int32"))),
)

TRANSACTION_LOG_VALUE = MessageSpec(
    "TransactionLogValue",
    StructSpec(
        TransactionLogValue,
        (
            Field("producer_id", "int64"),
            Field("previous_producer_id", "int64", since(1), tag=0),
            Field("next_producer_id", "int64", since(1), tag=1),
            Field("producer_epoch", "int16"),
            Field("transaction_timeout_ms", "int32"),
            Field("transaction_status", "int8"),
            Field("transaction_partitions", ArrayOf(_PARTITIONS), nullable=since(0)),
            Field("transaction_last_update_timestamp_ms", "int64"),
            Field("transaction_start_timestamp_ms", "int64"),
            Field("client_transaction_version", "int16", since(1), tag=2),
        ),
    ),
    versions=Versions(0, 1),
    flexible=since(1),
)


def _message(context: Any) -> str:
    return f"TransactionLogValue: unsupported version {context.version}"


_VALUE_SCHEMA = message_schema(
    version_cases(TRANSACTION_LOG_VALUE), Reject(UnsupportedVersionError, _message)
)


def _string(data: bytes, at: int, field: str) -> tuple[str, int]:
    if len(data) < at + 2:
        raise CorruptRecordError("truncated string length", position=at, field=field)
    length = int.from_bytes(data[at : at + 2], "big", signed=True)
    if length < 0 or len(data) < at + 2 + length:
        raise CorruptRecordError(f"bad string length {length}", position=at, field=field)
    return data[at + 2 : at + 2 + length].decode("utf-8", "replace"), at + 2 + length


def decode_transaction_key(data: bytes | None) -> TransactionLogKey:
    """The key (``TransactionLog.readTxnRecordKey``): version 0 carries the id."""
    if data is None or len(data) < 2:
        raise CorruptRecordError("a transaction log record needs a key", position=0, field="key")
    version = int.from_bytes(data[:2], "big", signed=True)
    if version != 0:
        return TransactionLogKey(version, None)
    transactional_id, _ = _string(data, 2, "key.transactionalId")
    return TransactionLogKey(0, transactional_id)


def decode_transaction_value(data: bytes | None) -> TransactionLogValue | None:
    """The value, or None for a tombstone."""
    if data is None:
        return None
    try:
        value: TransactionLogValue = _VALUE_SCHEMA.parse_stream(Window(bytes(data)))
    except FormatError as error:
        error.field = f"value.{error.field}" if error.field else "value"
        raise
    except ConstructError as error:
        raise CorruptRecordError(str(error), position=0, field="value") from None
    return value
