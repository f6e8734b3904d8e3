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

import struct
from dataclasses import dataclass
from typing import Any

from construct import ConstructError

from lethe_formats.coordinator._fields import encode_uvarint
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
    "encode_transaction_key",
    "encode_transaction_value",
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


def encode_transaction_key(transactional_id: str) -> bytes:
    """Key version 0: int16 0, then the id as an int16-length string."""
    raw = transactional_id.encode()
    return struct.pack(">hh", 0, len(raw)) + raw


def _compact_string(text: str) -> bytes:
    raw = text.encode()
    return encode_uvarint(len(raw) + 1) + raw


def _tagged(value: TransactionLogValue) -> bytes:
    """v1's tagged fields, each written only when it differs from its default
    (-1, -1, 0), as Kafka's generated writer does; unknown tags kept."""
    entries = list(value.unknown_tags)
    if value.previous_producer_id != -1:
        entries.append((0, struct.pack(">q", value.previous_producer_id)))
    if value.next_producer_id != -1:
        entries.append((1, struct.pack(">q", value.next_producer_id)))
    if value.client_transaction_version != 0:
        entries.append((2, struct.pack(">h", value.client_transaction_version)))
    entries.sort()
    out = encode_uvarint(len(entries))
    for tag, data in entries:
        out += encode_uvarint(tag) + encode_uvarint(len(data)) + data
    return out


def encode_transaction_value(value: TransactionLogValue) -> bytes:
    """Value bytes at version 1 (the only version Kafka 4.0 writes), flexible.

    The golden ``__transaction_state-24`` records are reproduced byte for byte
    by this layout (tests/formats/coordinator).
    """
    if value.version != 1:
        raise UnsupportedVersionError(f"TransactionLogValue: writes version 1, not {value.version}")
    out = struct.pack(
        ">hqhib",
        1,
        value.producer_id,
        value.producer_epoch,
        value.transaction_timeout_ms,
        value.transaction_status,
    )
    partitions = value.transaction_partitions
    if partitions is None:
        out += b"\x00"
    else:
        out += encode_uvarint(len(partitions) + 1)
        for entry in partitions:
            out += _compact_string(entry.topic) + encode_uvarint(len(entry.partition_ids) + 1)
            out += b"".join(struct.pack(">i", p) for p in entry.partition_ids)
            out += encode_uvarint(len(entry.unknown_tags))
            for tag, data in entry.unknown_tags:
                out += encode_uvarint(tag) + encode_uvarint(len(data)) + data
    out += struct.pack(
        ">qq", value.transaction_last_update_timestamp_ms, value.transaction_start_timestamp_ms
    )
    return out + _tagged(value)
