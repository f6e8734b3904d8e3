"""Shallow view of encoded log entries: just what the segment writer must know.

Kafka's ``LogSegment.append`` and ``UnifiedLog`` never decompress a batch to
decide where it goes: they use the *shallow* entries of a ``MemoryRecords``
(one v2 batch, or one legacy message / compressed wrapper) and read a few
header fields. This module reads exactly those fields from raw bytes, so the
writer can be fed anything Kafka would accept, including the golden batches
Kafka itself wrote (the byte-identity test does that).

Fields read, at these byte offsets from the start of each entry::

    magic 2 (DefaultRecordBatch)            magic 0/1 (LegacyRecord)
    0   baseOffset       int64              0   offset (absolute; wrapper: last inner)
    8   batchLength      int32              8   messageSize int32
    16  magic            int8               12  crc uint32
    21  attributes       int16              16  magic int8
    23  lastOffsetDelta  int32              17  attributes int8
    35  maxTimestamp     int64              18  timestamp int64 (v1 only)
    43  producerId       int64
    57  recordsCount     int32
    61  first record: length varint, attributes int8, timestampDelta varlong,
        offsetDelta varint, keyLength varint, key = version int16 + type int16
        (read only for control batches, which are never compressed)

A legacy wrapper's first offset is unknown without decompressing it, so
``base_offset`` is None there; callers that append such entries pass the
first offset themselves (the broker knows it because it assigned it).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lethe_formats.errors import CorruptRecordError, TruncatedError, UnsupportedMagicError
from lethe_formats.model import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_BIT,
    ControlType,
)
from lethe_formats.varint import read_varint, read_varlong

__all__ = ["ShallowEntry", "shallow_entries"]

_HEAD = struct.Struct(">qiib")  # offset/baseOffset, size/batchLength, crc or leader epoch, magic
_V2_FIELDS = struct.Struct(">hiqqqhii")  # attributes .. recordsCount, from byte 21
_CONTROL_KEY = struct.Struct(">hh")
_LEGACY_MIN_SIZE = {0: 14, 1: 22}  # RECORD_OVERHEAD_V0 / _V1 (crc .. valueLength)


@dataclass(frozen=True, slots=True)
class ShallowEntry:
    """One shallow entry: a v2 batch or a legacy message (possibly a wrapper)."""

    position: int
    size: int
    magic: int
    base_offset: int | None
    last_offset: int
    max_timestamp: int
    producer_id: int
    is_transactional: bool
    is_control: bool
    control_type: ControlType | None


def shallow_entries(data: bytes, *, file: str | None = None) -> list[ShallowEntry]:
    """Split ``data`` into shallow entries; every byte must belong to one."""
    entries: list[ShallowEntry] = []
    position = 0
    while position < len(data):
        entry = _read_entry(data, position, file)
        entries.append(entry)
        position += entry.size
    return entries


def _read_entry(data: bytes, pos: int, file: str | None) -> ShallowEntry:
    if len(data) - pos < _HEAD.size:
        raise TruncatedError(
            "data ends inside an entry header", file=file, position=pos, field="log entry"
        )
    offset, length, _, magic = _HEAD.unpack_from(data, pos)
    size = length + LOG_OVERHEAD
    if length < 0 or pos + size > len(data):
        raise TruncatedError(
            f"entry claims {length} bytes, {len(data) - pos - LOG_OVERHEAD} remain",
            file=file,
            position=pos + 8,
            field="batchLength",
        )
    if magic == 2:
        return _read_v2(data, pos, size, offset, file)
    if magic in (0, 1):
        return _read_legacy(data, pos, size, offset, magic=magic, file=file)
    raise UnsupportedMagicError(
        f"unknown magic {magic}", file=file, position=pos + 16, field="magic"
    )


def _read_v2(data: bytes, pos: int, size: int, base: int, file: str | None) -> ShallowEntry:
    if size < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordError(
            f"batch of {size} bytes is smaller than the {RECORD_BATCH_OVERHEAD}-byte header",
            file=file,
            position=pos + 8,
            field="batchLength",
        )
    attrs, last_delta, _, max_ts, pid, _, _, count = _V2_FIELDS.unpack_from(data, pos + 21)
    control = None
    if attrs & CONTROL_BIT and count > 0:
        control = _control_type(data, pos, size, attrs, file)
    return ShallowEntry(
        position=pos,
        size=size,
        magic=2,
        base_offset=base,
        last_offset=base + last_delta,
        max_timestamp=max_ts,
        producer_id=pid,
        is_transactional=bool(attrs & TRANSACTIONAL_BIT),
        is_control=bool(attrs & CONTROL_BIT),
        control_type=control,
    )


def _control_type(
    data: bytes, pos: int, size: int, attrs: int, file: str | None
) -> ControlType | None:
    """The type in the first control record's key, or None for an unknown type."""
    if attrs & COMPRESSION_MASK:
        raise CorruptRecordError(
            "control batch is compressed", file=file, position=pos + 21, field="attributes"
        )
    end = pos + size
    window = memoryview(data)[:end]
    at = pos + RECORD_BATCH_OVERHEAD
    _, at = read_varint(window, at, "record length")
    at += 1  # record attributes
    _, at = read_varlong(window, at, "timestampDelta")
    _, at = read_varint(window, at, "offsetDelta")
    key_length, at = read_varint(window, at, "keyLength")
    if key_length < _CONTROL_KEY.size or at + _CONTROL_KEY.size > end:
        raise CorruptRecordError(
            "control record key is shorter than 4 bytes",
            file=file,
            position=at,
            field="control key",
        )
    _, kind = _CONTROL_KEY.unpack_from(data, at)
    return ControlType(kind) if kind in ControlType._value2member_map_ else None


def _read_legacy(
    data: bytes, pos: int, size: int, offset: int, *, magic: int, file: str | None
) -> ShallowEntry:
    if size - LOG_OVERHEAD < _LEGACY_MIN_SIZE[magic]:
        raise CorruptRecordError(
            f"message of {size - LOG_OVERHEAD} bytes is shorter than the v{magic} minimum",
            file=file,
            position=pos + 8,
            field="messageSize",
        )
    attrs = data[pos + 17]
    timestamp = NO_TIMESTAMP
    if magic == 1:
        (timestamp,) = struct.unpack_from(">q", data, pos + 18)
    return ShallowEntry(
        position=pos,
        size=size,
        magic=magic,
        base_offset=None if attrs & COMPRESSION_MASK else offset,
        last_offset=offset,
        max_timestamp=timestamp,
        producer_id=-1,
        is_transactional=False,
        is_control=False,
        control_type=None,
    )
