"""Fast path: scan and decode Kafka log segments (held to parity with the Construct decoders).

Theory of operation
-------------------
A segment is a run of log entries, each ``baseOffset int64 | length int32 |
...`` where ``length`` counts the bytes after itself (``LOG_OVERHEAD`` = 12).
Byte 16 of every entry is the magic, so one small read tells what follows::

    0         8        12                   16      17     21          61
    +---------+--------+--------------------+-------+------+---- ... ---+---------+
    |baseOff  |length  |partitionLeaderEpoch| magic | crc  | attributes | records |  magic 2
    +---------+--------+--------------------+-------+------+---- ... ---+---------+
    |offset   |size    | crc                | magic | attr | [ts] keyLen key valLen val  magic 0/1
    +---------+--------+--------------------+-------+------+---- ... ---+

Two levels:

* :class:`LogScanner` is *shallow*: per entry one ``struct.unpack_from`` of
  the whole 61-byte header and one CRC over a memoryview slice (no copy).
  With the C extension, runs of plain v2 batches are walked by
  ``_cscan.scan_v2`` (a few hundred ns per batch, then the CRC at GB/s);
  whatever it declines (legacy, torn or implausible entries) gets the full
  rules here. It never raises while iterating: a torn tail, an impossible
  length or an unknown magic ends the iteration and is kept in ``stop_error``.
* :func:`decode_records` / :func:`decode_legacy_inner` / :func:`read_log`
  are *deep*. Records of a magic-2 batch are decoded by the C extension
  ``_cscan`` when it is built, else by ``_pyscan``; both raise the same error
  class at the same position. ``LETHE_PURE_PYTHON=1`` or
  :func:`set_implementation` selects the pure path.

Positions in errors are absolute. Inside compressed data there is no file
position, so such errors point at the compressed block (the records section)
and their message names the byte within the decompressed data.
"""

from __future__ import annotations

import importlib
import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, replace
from types import ModuleType

from crc32c import crc32c as _raw_crc32c

from lethe_formats import crc as _crc
from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
    VarintError,
)
from lethe_formats.model import (
    BatchHeader,
    Compression,
    Header,
    LegacyMessage,
    Record,
    RecordBatch,
)
from lethe_formats.records import _pyscan

__all__ = [
    "Buffer",
    "LogScanner",
    "ScannedEntry",
    "SectionStats",
    "decode_legacy_inner",
    "decode_records",
    "implementation",
    "read_log",
    "record_stats",
    "set_implementation",
    "stats_of",
]

Buffer = bytes | bytearray | memoryview | mmap.mmap

_HEADER = struct.Struct(">qiibIhiqqqhii")  # the 61-byte magic-2 batch header
_PREFIX = struct.Struct(">qi4xb")  # baseOffset, length, magic: 17 bytes
_PREFIX_SIZE = 17
_V2_MIN_LENGTH = 61 - 12
#: Smallest length per magic: RECORD_OVERHEAD_V0 (Kafka checks no more for v1), batch overhead.
_MIN_LENGTH = {0: _pyscan.LEGACY_MIN_SIZE, 1: _pyscan.LEGACY_MIN_SIZE, 2: _V2_MIN_LENGTH}
_CHUNK = 256  # entries per call of the C scanner: bounded memory, negligible overhead

#: DecodeError kinds of the C extension -> the classes _pyscan raises.
_C_ERRORS: dict[str, type[FormatError]] = {
    "invalid": InvalidRecordError,
    "varint": VarintError,
    "corrupt": CorruptRecordError,
}

_cscan: ModuleType | None
try:
    _cscan = importlib.import_module("lethe_formats.records._cscan")
except ImportError:  # pragma: no cover - depends on the build
    _cscan = None

_use_c = _cscan is not None and os.environ.get("LETHE_PURE_PYTHON", "") in ("", "0")


def implementation() -> str:
    """``"c"`` when records are decoded by the C extension, else ``"python"``."""
    return "c" if _use_c else "python"


def set_implementation(name: str) -> str:
    """Select ``"c"`` or ``"python"`` for this process; return the previous choice.

    Raises ImportError for ``"c"`` when the extension is not built, so a test
    asking for the C path can never silently run the pure one.
    """
    global _use_c  # noqa: PLW0603 - a process-wide switch by design
    previous = implementation()
    if name == "c":
        if _cscan is None:
            raise ImportError("lethe_formats.records._cscan is not built")
        _use_c = True
    elif name == "python":
        _use_c = False
    else:
        raise ValueError(f"unknown implementation {name!r}")
    return previous


@dataclass(frozen=True, slots=True)
class ScannedEntry:
    """One log entry found by a shallow scan."""

    position: int
    header: BatchHeader | LegacyMessage
    crc_valid: bool | None


if _cscan is not None:
    try:
        _cscan.init(Record, Header, BatchHeader, ScannedEntry)
    except TypeError:  # pragma: no cover - a model layout the C side cannot fill
        _cscan = None
        _use_c = False


class LogScanner:
    """Shallow iterator over the entries of a segment (see the module docstring).

    ``max_entry_size`` bounds an entry's total size (like Kafka's
    ``--max-message-size``); a larger claimed size stops the scan.
    ``chunk`` is how many entries the C scanner reads ahead per call; a caller
    that takes only the first entry asks for 1.
    """

    def __init__(
        self,
        data: Buffer,
        *,
        file: str | None = None,
        start: int = 0,
        verify_crc: bool = True,
        max_entry_size: int | None = None,
        chunk: int = _CHUNK,
    ) -> None:
        if start < 0:
            raise ValueError(f"start must be >= 0, not {start}")
        self._data = data
        self._file = file
        self._start = start
        self._verify = verify_crc
        self._max = max_entry_size
        self._chunk = max(1, chunk)
        self.stop_error: FormatError | None = None
        self.end_position = start

    def __iter__(self) -> Iterator[ScannedEntry]:
        self.stop_error = None
        with memoryview(self._data) as view:
            yield from self._scan(view)

    def _scan(self, view: memoryview) -> Iterator[ScannedEntry]:
        end = len(view)
        pos = self._start
        verify = self._verify
        unpack_header = _HEADER.unpack_from
        fast = _cscan.scan_v2 if _use_c and _cscan is not None else None
        max_size = -1 if self._max is None else self._max
        while pos < end:
            if fast is not None:  # C takes every plain v2 batch; the rest comes here
                entries, after = fast(view, pos, verify, _raw_crc32c, max_size, self._chunk)
                if entries:
                    yield from entries
                    pos = after
                    continue
            self.end_position = pos
            size, magic, error = self._check_prefix(view, pos, end)
            if error is not None:
                self.stop_error = error
                return
            if magic == 2:
                fields = unpack_header(view, pos)
                valid = _raw_crc32c(view[pos + 21 : pos + size]) == fields[4] if verify else None
                yield ScannedEntry(pos, BatchHeader(*fields), valid)
            else:
                try:
                    entry = self._legacy(view, pos, size)
                except FormatError as failure:
                    self.stop_error = failure
                    return
                yield entry
            pos += size
        self.end_position = pos

    def _check_prefix(
        self, view: memoryview, pos: int, end: int
    ) -> tuple[int, int, FormatError | None]:
        """(entry size, magic, None) or the error that stops the scan at ``pos``.

        Same checks in the same order as ``records.log`` + ``records.batch``
        (and Kafka's FileLogInputStream): fewer than 17 bytes is a torn tail,
        a length too small to reach the magic is corrupt, a length beyond the
        data is a torn tail, then the magic, then the magic's own minimum.
        """
        file = self._file
        if end - pos < _PREFIX_SIZE:
            return 0, 0, _torn(pos, end, file)
        _base, length, magic = _PREFIX.unpack_from(view, pos)
        name = "messageSize" if magic in (0, 1) else "batchLength"
        if length < _PREFIX_SIZE - 12:
            return 0, 0, _too_small(name, length, _PREFIX_SIZE - 12, pos, file)
        size = length + 12
        if self._max is not None and size > self._max:
            message = f"entry of {size} bytes exceeds the maximum of {self._max}"
            return 0, 0, CorruptRecordError(message, file=file, position=pos + 8, field=name)
        if size > end - pos:
            return 0, 0, _torn(pos, end, file)
        floor = _MIN_LENGTH.get(magic)
        if floor is None:
            unknown = f"unknown magic {magic}"
            return 0, 0, UnsupportedMagicError(unknown, file=file, position=pos + 16, field="magic")
        if length < floor:
            return 0, 0, _too_small(name, length, floor, pos, file)
        return size, magic, None

    def _legacy(self, view: memoryview, pos: int, size: int) -> ScannedEntry:
        try:
            message, valid = _pyscan.legacy_entry(view, pos, size, self._verify)
        except FormatError as failure:
            raise failure.at(file=self._file) from None
        return ScannedEntry(pos, message, valid)


def _too_small(name: str, length: int, floor: int, pos: int, file: str | None) -> FormatError:
    return CorruptRecordError(
        f"{name} {length} is smaller than the minimum {floor}",
        file=file,
        position=pos + 8,
        field=name,
    )


def _torn(pos: int, end: int, file: str | None) -> TruncatedError:
    return TruncatedError(
        f"log entry is torn: only {end - pos} bytes remain", file=file, position=pos, field="entry"
    )


def _relocate(
    error: FormatError, position: int, file: str | None, note: str | None = None
) -> FormatError:
    """Re-point an error raised inside decompressed data at the compressed block.

    Offsets inside decompressed bytes are no file positions: the error moves
    to the block's first byte and its message keeps the inner offset (the
    same convention as the Construct schemas' ``Compressed``).
    """
    clone = error.at(file=file)
    note = note or f"at byte {error.position} of the decompressed data"
    clone.message = f"{note}: {error.message}"
    clone.args = (clone.message,)
    clone.position = position
    return clone


def _decompress(
    codec: int, payload: memoryview, magic: int, position: int, file: str | None
) -> bytes:
    """Decompress; a codec error's position inside the compressed bytes is a file position."""
    from lethe_formats.compression import decompress  # noqa: PLC0415 - optional until needed

    try:
        return decompress(Compression(codec), payload, magic=magic)
    except FormatError as error:
        raise error.at(file=file, offset=position) from None


def _section(buf: Buffer, start: int, end: int, count: int) -> tuple[Record, ...]:
    if _use_c and _cscan is not None:
        try:
            result: tuple[Record, ...] = _cscan.decode_section(buf, start, end, count)
        except _cscan.DecodeError as failure:
            kind, message, position, field = failure.args
            raise _C_ERRORS[kind](message, position=position, field=field) from None
        return result
    with memoryview(buf) as view:
        return _pyscan.decode_section(view, start, end, count)


def decode_records(
    data: Buffer, entry: ScannedEntry, *, file: str | None = None
) -> tuple[Record, ...]:
    """Every record of the magic-2 batch ``entry`` (decompressed first if needed)."""
    header = entry.header
    if not isinstance(header, BatchHeader):
        raise TypeError("decode_records needs a magic-2 entry; use decode_legacy_inner")
    pos = entry.position
    start = pos + 61
    end = pos + 12 + header.batch_length
    count = header.records_count
    if end > len(data):
        raise ValueError(f"entry at {pos} does not lie within data of {len(data)} bytes")
    if count < 0:
        raise InvalidRecordError(
            f"invalid recordsCount {count}", file=file, position=pos + 57, field="recordsCount"
        )
    codec = header.attributes & 0x07
    if codec == 0:
        try:
            return _section(data, start, end, count)
        except FormatError as error:
            raise error.at(file=file, offset=start) from None
    if codec > Compression.ZSTD:
        raise UnsupportedCompressionError(
            f"unknown compression codec {codec}", file=file, position=pos + 21, field="attributes"
        )
    with memoryview(data) as view:
        raw = _decompress(codec, view[start:end], 2, start, file)
    try:
        return _section(raw, 0, len(raw), count)
    except FormatError as error:
        raise _relocate(error, start, file) from None


@dataclass(frozen=True, slots=True)
class SectionStats:
    """What a broker checks of each record of a batch it appends, without the records:
    their count, lowest and highest timestamp delta (0 when there are none), how many
    have a null key, and whether the offset deltas run 0, 1, ... in order."""

    count: int
    min_timestamp_delta: int
    max_timestamp_delta: int
    null_keys: int
    offset_deltas_in_order: bool


def stats_of(records: tuple[Record, ...]) -> SectionStats:
    """The :class:`SectionStats` of decoded records."""
    deltas = [record.timestamp_delta for record in records] or [0]
    return SectionStats(
        len(records),
        min(deltas),
        max(deltas),
        sum(record.key is None for record in records),
        all(record.offset_delta == index for index, record in enumerate(records)),
    )


def record_stats(data: Buffer, entry: ScannedEntry, *, file: str | None = None) -> SectionStats:
    """:func:`decode_records`'s checks and errors over the magic-2 batch ``entry``, but
    only :class:`SectionStats` out: for an uncompressed batch the C fast path walks the
    records without creating them (what a produce request's validation needs)."""
    header = entry.header
    plain = isinstance(header, BatchHeader) and header.attributes & 0x07 == 0
    if not (plain and _use_c and _cscan is not None):
        return stats_of(decode_records(data, entry, file=file))
    assert isinstance(header, BatchHeader)
    pos = entry.position
    start, end, count = pos + 61, pos + 12 + header.batch_length, header.records_count
    if end > len(data) or count < 0:  # decode_records' own errors
        return stats_of(decode_records(data, entry, file=file))
    try:
        stats = _cscan.section_stats(data, start, end, count)
    except _cscan.DecodeError as failure:
        kind, message, position, field = failure.args
        error = _C_ERRORS[kind](message, position=position, field=field)
        raise error.at(file=file, offset=start) from None
    return SectionStats(*stats)


def decode_legacy_inner(
    data: Buffer, entry: ScannedEntry, *, file: str | None = None, verify_crc: bool = False
) -> tuple[LegacyMessage, ...]:
    """Inner messages of a compressed magic 0/1 wrapper, with absolute offsets.

    v0 inner offsets are absolute already; v1 ones are relative and
    absolute = wrapper offset - last inner offset + inner offset, where a
    wrapper offset of 0 (some librdkafka versions) means base 0. Like
    :func:`decode_records` this decodes and does not verify: inner CRCs are
    checked only with ``verify_crc=True`` (ChecksumError; :func:`read_log`
    passes its own flag), and each inner ``crc`` is kept for callers that
    report validity per message. An uncompressed entry is its own only
    message: ``(entry.header,)``, as Kafka's deep iteration yields it.
    """
    header = entry.header
    if not isinstance(header, LegacyMessage):
        raise TypeError("decode_legacy_inner needs a magic 0/1 entry; use decode_records")
    codec = header.attributes & 0x07
    if codec == 0:
        return (header,)
    pos = entry.position
    if codec >= Compression.ZSTD:  # undefined, or zstd which needs magic 2
        raise UnsupportedCompressionError(
            f"compression codec {codec} is not allowed for magic {header.magic}",
            file=file,
            position=pos + 17,
            field="attributes",
        )
    value_at = pos + header.size_in_bytes - len(header.value or b"")
    if header.value is None:
        raise InvalidRecordError(
            f"Found invalid compressed record set with null value (magic = {header.magic})",
            file=file,
            position=value_at - 4,
            field="value",
        )
    raw = _decompress(codec, memoryview(header.value), header.magic, value_at, file)
    try:
        inner = _pyscan.read_inner(raw, header, verify_crc)
    except FormatError as error:
        note = f"inner message at byte {error.position} of the decompressed value"
        raise _relocate(error, value_at, file, note) from None
    try:
        return _pyscan.absolute_offsets(header, inner, value_at)
    except FormatError as error:
        raise error.at(file=file) from None


def read_log(
    data: Buffer, *, file: str | None = None, verify_crc: bool = True
) -> Iterator[RecordBatch | LegacyMessage]:
    """Deep iteration: every batch with its records, every legacy message with
    its inner messages; raises the scan's ``stop_error`` after the last entry.
    A CRC mismatch raises :class:`ChecksumError` when ``verify_crc``."""
    scanner = LogScanner(data, file=file, verify_crc=verify_crc)
    for entry in scanner:
        header = entry.header
        if entry.crc_valid is False:
            raise _checksum_error(data, entry, file)
        if isinstance(header, BatchHeader):
            yield RecordBatch(header, decode_records(data, entry, file=file))
        elif header.attributes & 0x07:
            inner = decode_legacy_inner(data, entry, file=file, verify_crc=verify_crc)
            yield replace(header, inner=inner)
        else:
            yield header
    if scanner.stop_error is not None:
        raise scanner.stop_error


def _checksum_error(data: Buffer, entry: ScannedEntry, file: str | None) -> ChecksumError:
    header = entry.header
    pos = entry.position
    with memoryview(data) as view:
        if isinstance(header, BatchHeader):
            computed = _crc.crc32c(view[pos + 21 : pos + header.size_in_bytes])
            return ChecksumError(header.crc, computed, file=file, position=pos + 17, field="crc")
        computed = _crc.crc32(view[pos + 16 : pos + header.size_in_bytes])
        return ChecksumError(header.crc, computed, file=file, position=pos + 12, field="crc")
