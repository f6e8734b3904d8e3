"""Reading a segment's entries the way the cleaner reads them, with typed errors.

Theory of operation
-------------------
The cleaner reads a segment in chunks of its I/O buffer (``readInto``) and
works on the *complete* entries of each chunk (``ByteBufferLogInputStream``):
an entry cut by the chunk's end is simply not there yet, and the next chunk
starts at it. :func:`iter_entries` yields those entries from
``data[start:end)``; an entry whose claimed size does not fit the window ends
the iteration quietly, anything else wrong raises:

* a length or magic that cannot be an entry -> the scanner's typed error;
* a CRC mismatch -> :class:`~lethe_formats.errors.ChecksumError`. Kafka's
  cleaner does not check CRCs; lethe does, so a flipped bit never gets
  copied into a freshly written segment (the log is skipped instead).

Every error names the segment file and the absolute byte position, so the
cleaner's log line points at the damage. :func:`v2_records` and
:func:`legacy_records` deep-read one entry (decompressing if needed).
"""

from __future__ import annotations

from collections.abc import Iterator

from lethe_formats.crc import crc32, crc32c
from lethe_formats.errors import ChecksumError, CorruptRecordError, TruncatedError
from lethe_formats.model import BatchHeader, LegacyMessage, Record
from lethe_formats.records.scan import (
    Buffer,
    LogScanner,
    ScannedEntry,
    decode_legacy_inner,
    decode_records,
)

__all__ = ["CleanerCorruptError", "iter_entries", "legacy_records", "v2_records"]

#: Raised for data the cleaner refuses to rewrite (a FormatError: file, position, field).
CleanerCorruptError = CorruptRecordError


def iter_entries(
    data: Buffer, start: int, end: int, file: str | None = None
) -> Iterator[ScannedEntry]:
    """Complete entries in ``data[start:end)`` with valid CRCs (module docstring)."""
    window = memoryview(data)[:end]  # no copy; released with the generator
    scanner = LogScanner(window, file=file, start=start, verify_crc=True)
    for entry in scanner:
        if entry.crc_valid is False:
            raise _checksum_error(window, entry, file)
        yield entry
    error = scanner.stop_error
    if error is not None and not isinstance(error, TruncatedError):
        raise error


def _checksum_error(data: memoryview, entry: ScannedEntry, file: str | None) -> ChecksumError:
    header, pos = entry.header, entry.position
    if isinstance(header, BatchHeader):
        computed = crc32c(data[pos + 21 : pos + header.size_in_bytes])
        return ChecksumError(header.crc, computed, file=file, position=pos + 17, field="crc")
    computed = crc32(data[pos + 16 : pos + header.size_in_bytes])
    return ChecksumError(header.crc, computed, file=file, position=pos + 12, field="crc")


def v2_records(data: Buffer, entry: ScannedEntry, file: str | None) -> tuple[Record, ...]:
    """The records of a magic-2 entry."""
    return decode_records(data, entry, file=file)


def legacy_records(
    data: Buffer, entry: ScannedEntry, file: str | None
) -> tuple[LegacyMessage, ...]:
    """The messages of a legacy entry: its inner messages, or itself if uncompressed."""
    header = entry.header
    assert isinstance(header, LegacyMessage)
    if header.attributes & 0x07 == 0:
        return (header,)
    return decode_legacy_inner(data, entry, file=file, verify_crc=True)
