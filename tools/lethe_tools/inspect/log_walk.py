"""Walk a ``.log`` segment once and tell an observer what is in it.

Theory of operation
-------------------
``walk_log`` is the traversal ``lethe dump`` shares between its renderers
(kafka-dump-log text, JSON lines): it drives the shallow
:class:`~lethe_formats.records.scan.LogScanner`, decodes records only when
deep iteration was asked for, and hands each entry to a :class:`LogObserver`.
Rendering is the observer's business; the walk itself never formats.

It also keeps the two pieces of bookkeeping kafka-dump-log does while it
iterates, so every renderer reports them the same way:

* **non-consecutive offsets** (deep only): record offsets are compared one by
  one across the whole file; each gap is kept as ``(previous, next)`` in the
  order found. Kafka prepends to a list and prints it as is, so its stderr
  lists the gaps newest first; renderers reverse ``gaps`` to match;
* **where the valid entries end**: ``end_position``, the bytes after it
  (``trailing_bytes``) and the :class:`FormatError` that stopped the scan.
  A torn tail (``TruncatedError``) is what Kafka reports as "Found N invalid
  bytes"; any other stop error is corruption Kafka would die on.

A batch whose records fail to decode is reported through ``on_error`` and the
walk goes on with the next entry: the batch framing is intact, so one broken
batch should not hide the rest of the segment.

The magic 0/1 inner messages carry no "is valid" flag, so
:func:`legacy_crc_valid` recomputes each inner message's CRC32 from its
fields: the layout is fixed, so re-encoding gives back the covered bytes::

    magic int8 | attributes int8 | [timestamp int64, v1] | keyLength int32 | key
    | valueLength int32 | value          (CRC32 covers exactly these bytes)
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lethe_formats.crc import crc32
from lethe_formats.errors import FormatError, TruncatedError
from lethe_formats.model import BatchHeader, LegacyMessage, Record
from lethe_formats.records.scan import (
    Buffer,
    LogScanner,
    ScannedEntry,
    decode_legacy_inner,
    decode_records,
)

from lethe_tools.progress import NoProgress, ScanProgress

__all__ = ["LogObserver", "LogWalk", "legacy_crc", "legacy_crc_valid", "walk_log"]


class LogObserver(Protocol):
    """Receives the entries of a segment in file order."""

    def on_batch(
        self, entry: ScannedEntry, header: BatchHeader, records: tuple[Record, ...] | None
    ) -> None:
        """A magic-2 batch; ``records`` is None in a shallow walk."""

    def on_legacy(
        self,
        entry: ScannedEntry,
        message: LegacyMessage,
        inner: tuple[LegacyMessage, ...] | None,
        inner_valid: Sequence[bool] | None,
    ) -> None:
        """A magic 0/1 entry; ``inner`` (the entry itself when uncompressed) if deep."""

    def on_error(self, error: FormatError) -> None:
        """A batch whose records could not be decoded (the walk continues)."""


@dataclass(slots=True)
class LogWalk:
    """What a walk found besides the entries themselves."""

    size: int
    end_position: int = 0
    stop_error: FormatError | None = None
    gaps: list[tuple[int, int]] = field(default_factory=list)
    errors: int = 0

    @property
    def trailing_bytes(self) -> int:
        return self.size - self.end_position

    @property
    def torn_tail(self) -> bool:
        """The scan stopped on an incomplete last entry (or none at all)."""
        return self.stop_error is None or isinstance(self.stop_error, TruncatedError)


def walk_log(
    data: Buffer,
    observer: LogObserver,
    *,
    file: str | None = None,
    deep: bool = False,
    max_bytes: int | None = None,
    progress: ScanProgress | None = None,
) -> LogWalk:
    """Walk ``data`` (a whole segment, or its first ``max_bytes``) into ``observer``."""
    tracker = progress if progress is not None else NoProgress()
    with memoryview(data) as whole:
        view = whole if max_bytes is None else whole[:max_bytes]
        try:
            return _walk(view, observer, file, deep, tracker)
        finally:
            view.release()


def _walk(
    view: memoryview, observer: LogObserver, file: str | None, deep: bool, progress: ScanProgress
) -> LogWalk:
    result = LogWalk(size=len(view))
    scanner = LogScanner(view, file=file)
    last = -1
    gaps = result.gaps
    for entry in scanner:
        header = entry.header
        progress.update(entry.position)
        if isinstance(header, BatchHeader):
            records = None
            if deep:
                try:
                    records = decode_records(view, entry, file=file)
                except FormatError as error:
                    result.errors += 1
                    observer.on_error(error)
                else:
                    base = header.base_offset
                    for record in records:
                        offset = base + record.offset_delta
                        if last != -1 and offset != last + 1:
                            gaps.append((last, offset))
                        last = offset
            observer.on_batch(entry, header, records)
        else:
            inner = None
            valid: list[bool] | None = None
            if deep:
                try:
                    inner = decode_legacy_inner(view, entry, file=file)
                except FormatError as error:
                    result.errors += 1
                    observer.on_error(error)
                else:
                    valid = _inner_validity(header, inner, entry.crc_valid)
                    for message in inner:
                        if last != -1 and message.offset != last + 1:
                            gaps.append((last, message.offset))
                        last = message.offset
            observer.on_legacy(entry, header, inner, valid)
    result.end_position = scanner.end_position
    result.stop_error = scanner.stop_error
    return result


def _inner_validity(
    wrapper: LegacyMessage, inner: tuple[LegacyMessage, ...], wrapper_valid: bool | None
) -> list[bool]:
    if len(inner) == 1 and inner[0] is wrapper:
        return [bool(wrapper_valid)]
    return [legacy_crc_valid(message) for message in inner]


_V0_HEAD = struct.Struct(">bb")
_V1_HEAD = struct.Struct(">bbq")
_LENGTH = struct.Struct(">i")


def legacy_crc_valid(message: LegacyMessage) -> bool:
    """Whether ``message.crc`` is the CRC32 of its re-encoded covered bytes."""
    return legacy_crc(message) == message.crc


def legacy_crc(message: LegacyMessage) -> int:
    """The CRC32 of a magic 0/1 message's covered bytes, re-encoded from its fields."""
    if message.magic == 0:
        head = _V0_HEAD.pack(message.magic, message.attributes)
    else:
        timestamp = -1 if message.timestamp is None else message.timestamp
        head = _V1_HEAD.pack(message.magic, message.attributes, timestamp)
    parts = [head]
    for blob in (message.key, message.value):
        if blob is None:
            parts.append(_LENGTH.pack(-1))
        else:
            parts.append(_LENGTH.pack(len(blob)))
            parts.append(blob)
    return crc32(b"".join(parts))
