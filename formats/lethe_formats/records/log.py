"""A whole ``.log`` segment: a sequence of v2 batches and/or v0/v1 messages.

Theory of operation
-------------------
Every log entry, whatever its magic, starts the same way, which is what makes
a segment readable without knowing its format version in advance::

    offset 0   8  baseOffset / offset   int64
    offset 8   4  batchLength / size    int32   bytes after this field
    offset 12  4  partitionLeaderEpoch (v2) / crc (v0, v1)
    offset 16  1  magic                 int8    0, 1 or 2

:func:`decode_log` walks the entries in order. Before touching an entry it
checks that the 17 bytes up to the magic are present and that the claimed
length fits in what is left; a tail that fails either test is a torn write
(TruncatedError at the entry's position, which Kafka's recovery truncates
and kafka-dump-log reports as "Found N invalid bytes at the end"). A magic
above 2 is UnsupportedMagicError. Each entry is then decoded by the schema of
its magic (``records.batch`` or ``records.legacy``).
"""

from __future__ import annotations

import struct

from lethe_formats.errors import CorruptRecordError, TruncatedError, UnsupportedMagicError
from lethe_formats.model import LOG_OVERHEAD, LegacyMessage, RecordBatch
from lethe_formats.records.batch import decode_batch
from lethe_formats.records.legacy import decode_message

__all__ = ["MAGIC_OFFSET", "decode_log", "entry_bounds"]

#: Where the magic byte sits in every log entry.
MAGIC_OFFSET = 16
Buffer = bytes | bytearray | memoryview


def entry_bounds(data: Buffer, position: int, *, file: str | None = None) -> tuple[int, int]:
    """(magic, end position) of the entry at ``position``, checked against the data."""
    left = len(data) - position
    if left < MAGIC_OFFSET + 1:
        raise TruncatedError(
            f"torn entry: {left} bytes at the end, too few for an entry header",
            file=file,
            position=position,
            field="batch_length",
        )
    (size,) = struct.unpack_from(">i", data, position + 8)
    if size < MAGIC_OFFSET + 1 - LOG_OVERHEAD:
        raise CorruptRecordError(
            f"entry size {size} is too small to hold a magic byte",
            file=file,
            position=position + 8,
            field="batch_length",
        )
    if size > left - LOG_OVERHEAD:
        raise TruncatedError(
            f"torn entry: size {size} but only {left - LOG_OVERHEAD} bytes follow",
            file=file,
            position=position,
            field="batch_length",
        )
    magic = data[position + MAGIC_OFFSET]
    if magic > 2:
        raise UnsupportedMagicError(
            f"unknown magic {magic}", file=file, position=position + MAGIC_OFFSET, field="magic"
        )
    return magic, position + LOG_OVERHEAD + size


def decode_log(
    data: Buffer, *, file: str | None = None, verify_crc: bool = True
) -> list[RecordBatch | LegacyMessage]:
    """Every entry of a segment, in file order (v2 batches and legacy messages)."""
    entries: list[RecordBatch | LegacyMessage] = []
    position = 0
    while position < len(data):
        magic, end = entry_bounds(data, position, file=file)
        if magic == 2:
            entries.append(decode_batch(data, position, file=file, verify_crc=verify_crc))
        else:
            entries.append(decode_message(data, position, file=file, verify_crc=verify_crc))
        position = end
    return entries
