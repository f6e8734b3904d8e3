"""The ``.log`` file of one segment: append, positional reads, shallow and deep scans.

Theory of operation
-------------------
Kafka's ``FileRecords`` is a file channel plus a size: appends go to the end,
reads are ``slice(position, size)``, and searches iterate the *shallow*
entries (a v2 batch, or a legacy message / compressed wrapper) from a byte
position. :class:`SegmentFile` is the same over a plain file descriptor:

* the size is tracked in memory (the file is never longer: a torn tail is cut
  by :meth:`SegmentFile.truncate_to` during recovery);
* :meth:`SegmentFile.read` is one ``pread``; :meth:`SegmentFile.region` is the
  same slice unread, a :class:`~.file_region.FileRegion` a server sends with
  ``sendfile`` (Kafka's ``FileRecords.slice``), for slices of
  :data:`REGION_MIN_BYTES` or more: a smaller one is read, as the encoder would
  copy it into the frame anyway;
* :meth:`SegmentFile.scan` maps ``[0, end)`` read-only and runs
  ``lethe_formats``' :class:`~lethe_formats.records.scan.LogScanner` from a
  position. The scan is a context manager because the iterator holds a view
  of the mapping: leaving the ``with`` closes the iterator first, then the map.

The entry helpers give what Kafka's ``RecordBatch`` interface gives for any
magic (:func:`last_offset`, :func:`max_timestamp`), and :func:`record_stamps`
deep-iterates one entry into ``(offset, timestamp)`` pairs, decompressing as
needed (``FileRecords.searchForTimestamp`` does the same).
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

from lethe_formats.errors import FormatError
from lethe_formats.model import NO_TIMESTAMP, BatchHeader, TimestampType
from lethe_formats.records.scan import (
    Buffer,
    LogScanner,
    ScannedEntry,
    decode_legacy_inner,
    decode_records,
)

from lethe_reference.storage.errors import CorruptMessageError
from lethe_reference.storage.file_region import FileRegion

__all__ = ["REGION_MIN_BYTES", "SegmentFile", "last_offset", "max_timestamp", "record_stamps"]

#: Slices this long are regions (module docstring); the protocol encoder keeps a
#: value this long as a buffer of its own (``lethe_formats.protocol.regions``).
REGION_MIN_BYTES = 32 * 1024


def last_offset(entry: ScannedEntry) -> int:
    """The entry's last offset (a legacy wrapper's offset is its last inner one)."""
    header = entry.header
    return header.last_offset if isinstance(header, BatchHeader) else header.offset


def max_timestamp(entry: ScannedEntry) -> int:
    """The batch ``maxTimestamp``; a legacy message's timestamp (-1 for magic 0)."""
    header = entry.header
    if isinstance(header, BatchHeader):
        return header.max_timestamp
    return NO_TIMESTAMP if header.timestamp is None else header.timestamp


def record_stamps(data: Buffer, entry: ScannedEntry) -> Iterator[tuple[int, int]]:
    """``(offset, timestamp)`` of every record of ``entry``, in order.

    A stored batch whose records do not decode raises :class:`CorruptMessageError`
    (Kafka's record iterators throw CorruptRecord/InvalidRecordException there).
    """
    try:
        yield from _record_stamps(data, entry)
    except FormatError as error:
        raise CorruptMessageError(f"Record is corrupt: {error}") from None


def _record_stamps(data: Buffer, entry: ScannedEntry) -> Iterator[tuple[int, int]]:
    header = entry.header
    if isinstance(header, BatchHeader):
        append_time = header.timestamp_type is TimestampType.LOG_APPEND_TIME
        for record in decode_records(data, entry):
            stamp = header.max_timestamp if append_time else header.base_timestamp
            yield (
                header.base_offset + record.offset_delta,
                stamp if append_time else stamp + record.timestamp_delta,
            )
        return
    wrapper_time = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    for message in decode_legacy_inner(data, entry):
        inner = header.timestamp if wrapper_time else message.timestamp
        yield message.offset, NO_TIMESTAMP if inner is None else inner


class SegmentFile:
    """An open ``.log`` file; see the module docstring. Not task-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self.size = os.fstat(self._fd).st_size

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Write ``data`` at the end; returns the position it starts at."""
        position = self.size
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(self._fd, view[written:], position + written)
        self.size += len(view)
        return position

    def read(self, position: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``position`` (fewer at the end of the file)."""
        size = max(0, min(size, self.size - position))
        return os.pread(self._fd, size, position) if size else b""

    def region(self, position: int, size: int) -> bytes | FileRegion:
        """:meth:`read`, unread from :data:`REGION_MIN_BYTES` on (module docstring)."""
        size = max(0, min(size, self.size - position))
        if size < REGION_MIN_BYTES:
            return self.read(position, size)
        try:
            return FileRegion(self._fd, position, size, self.path)
        except OSError:  # no descriptor left (EMFILE): the bytes serve as well
            return self.read(position, size)

    @contextlib.contextmanager
    def scan(
        self,
        start: int = 0,
        *,
        end: int | None = None,
        verify_crc: bool = False,
        chunk: int | None = None,
    ) -> Iterator[tuple[Iterator[ScannedEntry], LogScanner, Buffer]]:
        """``(entries, scanner, data)`` for entries in ``[start, end)``; see the module docstring.

        ``data`` is the mapping the entry positions refer to (for deep reads);
        ``scanner.stop_error`` tells why a scan stopped early. ``chunk``: entries
        the C scanner reads ahead (the scanner's default when None); a caller that
        stops after a few entries asks for few, as a scan ahead costs its headers.
        """
        limit = self.size if end is None else min(end, self.size)
        if start >= limit:
            empty = LogScanner(b"")
            yield iter(()), empty, b""
            return
        with mmap.mmap(self._fd, limit, access=mmap.ACCESS_READ) as mapped:
            ahead = {} if chunk is None else {"chunk": chunk}
            scanner = LogScanner(
                mapped, file=str(self.path), start=start, verify_crc=verify_crc, **ahead
            )
            entries = iter(scanner)
            try:
                yield entries, scanner, mapped
            finally:
                close = getattr(entries, "close", None)
                if close is not None:
                    close()

    def truncate_to(self, size: int) -> int:
        """Cut the file to ``size`` bytes; returns the number of bytes removed."""
        if size >= self.size:
            return 0
        removed = self.size - size
        os.ftruncate(self._fd, size)
        self.size = size
        return removed

    def flush(self) -> None:
        os.fsync(self._fd)

    def last_modified_ms(self) -> int:
        """The file's mtime in epoch ms (``File.lastModified``)."""
        return os.fstat(self._fd).st_mtime_ns // 1_000_000

    def rename(self, target: Path) -> None:
        os.replace(self.path, target)
        self.path = target

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
