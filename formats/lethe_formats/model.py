"""Typed values every decoder returns: the contract between formats, tools and broker.

The Construct schemas (normative), the fast path and the Kaitai parsers all
decode into these frozen dataclasses, so parity tests compare plain values.
Fields keep the stored representation (deltas, raw attribute bits) so that a
value re-encodes to the same bytes; properties derive what readers want
(absolute offsets, timestamps, flags). Keys, values and header keys stay
``bytes``: Kafka treats them as opaque, and invalid UTF-8 must round-trip.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "COMPRESSION_MASK",
    "CONTROL_BIT",
    "DELETE_HORIZON_BIT",
    "KIP87_TOMBSTONE_BIT",
    "LOG_OVERHEAD",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "RECORD_BATCH_OVERHEAD",
    "TIMESTAMP_TYPE_BIT",
    "TRANSACTIONAL_BIT",
    "AbortedTxn",
    "BatchHeader",
    "Compression",
    "ControlType",
    "EndTxnMarker",
    "Header",
    "LegacyMessage",
    "OffsetIndexEntry",
    "Record",
    "RecordBatch",
    "TimeIndexEntry",
    "TimestampType",
]

#: Size of the v2 batch header up to and including ``recordsCount``.
RECORD_BATCH_OVERHEAD = 61
#: ``baseOffset`` (8) + ``batchLength`` (4): bytes not counted by ``batchLength``.
LOG_OVERHEAD = 12
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1


class Compression(enum.IntEnum):
    """Codec ids in attribute bits 0-2 (all magics)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def dump_name(self) -> str:
        """Name as kafka-dump-log prints it (``compresscodec: lz4``)."""
        return self.name.lower()


class TimestampType(enum.IntEnum):
    """Attribute bit 3; v0 messages have no timestamp type at all."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def dump_name(self) -> str:
        """Name as kafka-dump-log prints it."""
        return {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[self.value]


class ControlType(enum.IntEnum):
    """``type`` in a control record key (ControlRecordType.java)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


# Attribute bits of a v2 batch (DefaultRecordBatch.java).
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40

#: KIP-87 extension (never adopted by Kafka): bit 0 of the *record* attributes
#: byte marks an explicit tombstone. Kafka writes that byte as 0 and ignores
#: it on read, so a stock client never sees the bit; see records/attributes.py.
KIP87_TOMBSTONE_BIT = 0x01


@dataclass(frozen=True, slots=True)
class Header:
    """A record header (KIP-82): key is UTF-8 on the wire, kept as bytes here."""

    key: bytes
    value: bytes | None


@dataclass(frozen=True, slots=True)
class Record:
    """A magic-2 record exactly as stored: deltas are relative to its batch."""

    attributes: int
    timestamp_delta: int
    offset_delta: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()

    @property
    def is_tombstone(self) -> bool:
        """Kafka's definition: a null value (the key is irrelevant here)."""
        return self.value is None

    @property
    def has_kip87_tombstone_flag(self) -> bool:
        """The KIP-87 extension bit; always False for data Kafka wrote."""
        return bool(self.attributes & KIP87_TOMBSTONE_BIT)


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The 61-byte header of a magic-2 record batch (byte layout in records/batch.py)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_BIT)

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: the base timestamp doubles as the horizon when bit 6 is set."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_sequence(self) -> int:
        """``baseSequence + lastOffsetDelta``, wrapping at Int.MAX like Kafka."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        total = self.base_sequence + self.last_offset_delta
        return total - 0x7FFFFFFF - 1 if total > 0x7FFFFFFF else total


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """A magic-2 batch with its records decoded (decompressed if needed)."""

    header: BatchHeader
    records: tuple[Record, ...]

    def offset_of(self, record: Record) -> int:
        return self.header.base_offset + record.offset_delta

    def timestamp_of(self, record: Record) -> int:
        """LogAppendTime overrides every record timestamp with maxTimestamp."""
        if self.header.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return self.header.max_timestamp
        return self.header.base_timestamp + record.timestamp_delta

    def sequence_of(self, record: Record) -> int:
        if self.header.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        total = self.header.base_sequence + record.offset_delta
        return total - 0x7FFFFFFF - 1 if total > 0x7FFFFFFF else total


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """Key (version, type) and value (version, coordinator epoch) of a COMMIT/ABORT record."""

    key_version: int
    control_type: ControlType
    value_version: int
    coordinator_epoch: int


@dataclass(frozen=True, slots=True)
class LegacyMessage:
    """A magic 0/1 log entry (``offset | size | message``).

    ``offset`` is absolute. For a compressed wrapper it is the offset of the
    last inner message, and ``inner`` holds the decompressed inner messages
    with absolute offsets (v1 relative offsets already resolved).
    ``timestamp`` is None for magic 0.
    """

    offset: int
    message_size: int
    crc: int
    magic: int
    attributes: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    inner: tuple[LegacyMessage, ...] = ()

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def size_in_bytes(self) -> int:
        return self.message_size + LOG_OVERHEAD


@dataclass(frozen=True, slots=True)
class OffsetIndexEntry:
    """8 bytes in ``.index``: offset relative to the segment base, byte position in ``.log``."""

    relative_offset: int
    position: int


@dataclass(frozen=True, slots=True)
class TimeIndexEntry:
    """12 bytes in ``.timeindex``: max timestamp so far, relative offset of its batch."""

    timestamp: int
    relative_offset: int


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """34 bytes in ``.txnindex`` (AbortedTxn.java)."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
