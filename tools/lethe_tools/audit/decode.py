"""Decode one discovered item into table rows: the code every Spark task runs.

Theory of operation
-------------------
A task receives :class:`~lethe_tools.audit.discover.Item` s and calls
:func:`decode_item` for each; rows accumulate column by column in a
:class:`Tables` (one :class:`Columns` per table, columns in schema order) that
the data source turns into Arrow batches whenever it has grown large enough.
``decode_item`` is a generator that yields between log entries so a 1 GiB
segment never holds more than one flush worth of rows in memory.

Segments are memory-mapped and walked with lethe's fast path
(``lethe_formats.records.scan``): :class:`LogScanner` for the entry headers and
their CRCs (C, at CRC speed), ``decode_records`` / ``decode_legacy_inner`` for
the records of each entry at the deep levels. Three levels (:data:`LEVELS`)::

    batches   headers + CRC only               batches, segments rows; scan/CRC problems
    validate  + every record decoded           + record problems, offsets rows (no records rows)
    records   + every record decoded           + records rows (no offsets rows)
    all       + every record decoded           + records rows and offsets rows

Per entry::

    entry header -> batches row            (always)
    CRC mismatch -> problems row           (ChecksumError, field crc)
    records      -> problems row if they do not decode; records rows (level records)
    __consumer_offsets records -> offsets rows (offsets.offset_rows)
    scan end     -> segments row           (+ problems row for the error that ended it)

At the levels with records rows, runs of plain magic-2 batches (not control,
CRC correct, records decodable) skip the per-record objects: the C walker
(``lethe_formats.records.columns``) returns packed rows that
:mod:`lethe_tools.audit.fastpath` turns into Arrow columns, and each entry it
leaves (legacy, control, damaged, ``__consumer_offsets``) takes the per-entry
path above, so both paths give the same rows and problems::

    walk -> rows of batches b1..bk -> entry bk+1 by the full rules -> walk ...

The job decodes every file once at level ``all`` and its tasks write every
table's rows straight to Parquet (:mod:`lethe_tools.audit.sink`); the data
source's single-table levels decode only as deep as their table needs.

Nothing here may fail a task: every error, typed or not, becomes a problems
row naming file, position, field and the error class; the item is then
finished with whatever was decoded before the fault.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator, Sequence
from typing import Any

from lethe_formats.crc import crc32, crc32c
from lethe_formats.errors import ChecksumError, FormatError
from lethe_formats.model import BatchHeader, LegacyMessage, Record
from lethe_formats.records import columns as c_columns
from lethe_formats.records import scan
from lethe_formats.records.columns import key_hash
from lethe_formats.records.control import control_type
from lethe_formats.records.scan import (
    LogScanner,
    ScannedEntry,
    decode_legacy_inner,
    decode_records,
)

from lethe_tools.audit import fastpath
from lethe_tools.audit.arrow import listed_batch
from lethe_tools.audit.discover import Item
from lethe_tools.audit.files import decode_small_file
from lethe_tools.audit.offsets import CONSUMER_OFFSETS_TOPIC, offset_rows
from lethe_tools.audit.rows import Columns, Tables, problem_row

__all__ = ["LEVELS", "Columns", "Tables", "decode_item", "key_hash"]

#: How deep a segment is decoded; see the module docstring.
LEVELS = ("batches", "validate", "records", "all")
_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _codec(attributes: int) -> str:
    codec = attributes & 0x07
    return _CODECS[codec] if codec < len(_CODECS) else f"unknown({codec})"


class _Segment:
    """Running figures of one segment for its segments row."""

    def __init__(self) -> None:
        self.batches = 0
        self.records = 0
        self.first: int | None = None
        self.last: int | None = None
        self.min_ts: int | None = None
        self.max_ts: int | None = None
        self.crc_failures = 0

    def add(self, base: int, last: int, count: int, max_ts: int, crc_ok: bool) -> None:
        self.batches += 1
        self.records += count
        self.first = base if self.first is None else self.first
        self.last = last
        if max_ts != -1:
            self.min_ts = max_ts if self.min_ts is None else min(self.min_ts, max_ts)
            self.max_ts = max_ts if self.max_ts is None else max(self.max_ts, max_ts)
        self.crc_failures += 0 if crc_ok else 1

    def add_many(self, base: Any, last: Any, count: Any, max_ts: Any) -> None:
        """:meth:`add` for walked batches (numpy columns, CRCs correct)."""
        self.batches += len(base)
        self.records += int(count.sum())
        self.first = int(base[0]) if self.first is None else self.first
        self.last = int(last[-1])
        stamped = max_ts[max_ts != -1]
        if len(stamped):
            low, high = int(stamped.min()), int(stamped.max())
            self.min_ts = low if self.min_ts is None else min(self.min_ts, low)
            self.max_ts = high if self.max_ts is None else max(self.max_ts, high)


def decode_item(item: Item, level: str, out: Tables) -> Iterator[None]:
    """Append the rows of ``item`` to ``out``; yields where the caller may flush."""
    try:
        if item.kind == "log":
            yield from _SegmentDecoder(item, level, out).run()
        else:
            decode_small_file(item, out)
    except Exception as error:  # a task must finish: the fault becomes a row
        out.problems.add(problem_row(item, error, item.kind))


def _open(path: str) -> tuple[Any, mmap.mmap | bytes]:
    handle = open(path, "rb")  # noqa: SIM115 - closed by the caller with the map
    if os.fstat(handle.fileno()).st_size == 0:
        return handle, b""
    return handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class _SegmentDecoder:
    """Walks one ``.log`` file and appends its batches, records, offsets and segment rows."""

    def __init__(self, item: Item, level: str, out: Tables) -> None:
        self.item = item
        self.records = level in ("records", "all")
        self.offsets = level in ("validate", "all")
        self.deep = level in ("validate", "records", "all")
        self.out = out
        self.summary = _Segment()
        self.data: Any = b""

    def run(self) -> Iterator[None]:
        item = self.item
        handle, self.data = _open(item.path)
        try:
            if self._walkable():
                yield from self._walk()
            else:
                yield from self._scan(LogScanner(self.data, file=item.path, verify_crc=True))
        finally:
            if isinstance(self.data, mmap.mmap):
                self.data.close()
            handle.close()

    def _walkable(self) -> bool:
        """Whether the C walker takes this segment's plain batches (records rows, no offsets)."""
        return (
            self.records
            and c_columns.AVAILABLE
            and scan.implementation() == "c"
            and self.item.topic != CONSUMER_OFFSETS_TOPIC
        )

    def _scan(self, scanner: LogScanner) -> Iterator[None]:
        """Every entry through the record-by-record path, then the segments row."""
        for entry in scanner:
            self._entry(entry)
            yield None
        self._finish(scanner)

    def _finish(self, scanner: LogScanner) -> None:
        """The segments row where ``scanner`` ended, after the problem that ended it."""
        stop = scanner.stop_error
        if stop is not None:
            self.problem(stop, "segment")
        self._segment_row(scanner.end_position, stop)

    def _walk(self) -> Iterator[None]:
        """The C walker for runs of plain batches, the full path for each entry it leaves."""
        item, pos, end = self.item, 0, len(self.data)
        while True:
            walked = fastpath.walk(self.data, pos)
            if len(walked.batches):
                self._walked(walked)
                pos = walked.next
                yield None
                continue
            if pos >= end:
                self._segment_row(pos, None)
                return
            scanner = LogScanner(self.data, file=item.path, start=pos, verify_crc=True, chunk=1)
            entry = next(iter(scanner), None)
            if entry is None:  # the scan ends here: a torn tail or a bad header
                self._finish(scanner)
                return
            self._entry(entry)
            pos = entry.position + entry.header.size_in_bytes
            yield None

    def _walked(self, walked: fastpath.Walked) -> None:
        rows, records = walked.batches, walked.records
        base = rows["base_offset"]
        last = base + rows["last_offset_delta"]
        self.summary.add_many(base, last, rows["records_count"], rows["max_timestamp"])
        out = self.out
        out.batches.add_chunk(len(rows), fastpath.batch_chunk(self.item, rows), listed_batch)
        if len(records):
            chunk = fastpath.record_chunk(self.item, rows, records)
            out.records.add_chunk(len(records), chunk, listed_batch)

    def _entry(self, entry: ScannedEntry) -> None:
        if isinstance(entry.header, BatchHeader):
            self._v2(entry, entry.header)
        else:
            self._legacy(entry, entry.header)

    def problem(self, error: BaseException, stage: str, position: int | None = None) -> None:
        self.out.problems.add(problem_row(self.item, error, stage, position))

    def _segment_row(self, valid: int, stop: FormatError | None) -> None:
        item, summary = self.item, self.summary
        self.out.segments.add(
            (
                item.logdir,
                item.topic,
                item.partition,
                item.path,
                item.base_offset,
                item.extra_suffix,
                item.is_active,
                item.size,
                item.modified_ms,
                valid,
                summary.batches,
                summary.records,
                summary.first,
                summary.last,
                summary.min_ts,
                summary.max_ts,
                summary.crc_failures,
                None if stop is None else str(stop),
            )
        )

    def _crc_problem(self, pos: int, stored: int, covered: tuple[int, int], magic: int) -> None:
        """A ChecksumError at the entry's crc field (+17 for magic 2, +12 for magic 0/1)."""
        with memoryview(self.data) as view:
            chunk = view[covered[0] : covered[1]]
            computed = crc32c(chunk) if magic == 2 else crc32(chunk)
        field_at = pos + (17 if magic == 2 else 12)
        failure = ChecksumError(
            stored, computed, file=self.item.path, position=field_at, field="crc"
        )
        self.problem(failure, "segment")

    def _v2(self, entry: ScannedEntry, header: BatchHeader) -> None:
        item, pos = self.item, entry.position
        crc_ok = entry.crc_valid is not False
        last = header.base_offset + header.last_offset_delta
        self.summary.add(
            header.base_offset, last, header.records_count, header.max_timestamp, crc_ok
        )
        attributes = header.attributes
        horizon = header.base_timestamp if attributes & 0x40 else None
        self.out.batches.add(
            (
                item.topic,
                item.partition,
                item.path,
                item.base_offset,
                pos,
                header.batch_length + 12,
                header.base_offset,
                last,
                2,
                attributes,
                _codec(attributes),
                "LogAppendTime" if attributes & 0x08 else "CreateTime",
                bool(attributes & 0x20),
                bool(attributes & 0x10),
                horizon,
                header.base_timestamp,
                header.max_timestamp,
                header.producer_id,
                header.producer_epoch,
                header.base_sequence,
                header.partition_leader_epoch,
                header.records_count,
                header.crc,
                crc_ok,
            )
        )
        if not crc_ok:
            self._crc_problem(pos, header.crc, (pos + 21, pos + header.size_in_bytes), 2)
        if self.deep:
            self._v2_records(entry, header, horizon)

    def _v2_records(self, entry: ScannedEntry, header: BatchHeader, horizon: int | None) -> None:
        item, pos = self.item, entry.position
        try:
            records = decode_records(self.data, entry, file=item.path)
        except FormatError as failure:
            self.problem(failure, "records")
            return
        if not records:
            return
        if self.records:
            _append_records(self, pos, header, records, horizon)
        elif header.attributes & 0x20:
            self.control_types(records, pos)  # validated for its problems rows
        if self.offsets and item.topic == CONSUMER_OFFSETS_TOPIC:
            rows, errors = offset_rows(item.path, item.partition or 0, header, records)
            for row in rows:
                self.out.offsets.add(row)
            for bad in errors:
                self.problem(bad.at(file=item.path), "offsets", pos)

    def control_types(self, records: Sequence[Record], pos: int) -> list[int | None]:
        kinds: list[int | None] = []
        for record in records:
            try:
                kinds.append(int(control_type(record)))
            except FormatError as failure:
                self.problem(failure.at(file=self.item.path), "records", pos)
                kinds.append(None)
        return kinds

    def _legacy(self, entry: ScannedEntry, header: LegacyMessage) -> None:
        item, pos = self.item, entry.position
        crc_ok = entry.crc_valid is not False
        inner: tuple[LegacyMessage, ...] = (header,)
        if header.attributes & 0x07:
            try:
                inner = decode_legacy_inner(self.data, entry, file=item.path)
            except FormatError as failure:
                self.problem(failure, "records")
                inner = ()
        timestamp = -1 if header.timestamp is None else header.timestamp
        base = inner[0].offset if inner else header.offset
        self.summary.add(base, header.offset, len(inner), timestamp, crc_ok)
        kind = header.timestamp_type.dump_name
        self.out.batches.add(
            (
                item.topic,
                item.partition,
                item.path,
                item.base_offset,
                pos,
                header.message_size + 12,
                base,
                header.offset,
                header.magic,
                header.attributes,
                _codec(header.attributes),
                kind,
                False,
                False,
                None,
                timestamp,
                timestamp,
                -1,
                -1,
                -1,
                -1,
                len(inner),
                header.crc,
                crc_ok,
            )
        )
        if not crc_ok:
            self._crc_problem(pos, header.crc, (pos + 16, pos + header.size_in_bytes), 0)
        if self.records:
            append_time = timestamp if kind == "LogAppendTime" else None
            for message in inner:
                self.out.records.add(_legacy_record(self.item, pos, message, append_time))


def _append_records(
    decoder: _SegmentDecoder,
    pos: int,
    header: BatchHeader,
    records: tuple[Record, ...],
    horizon: int | None,
) -> None:
    """The records rows of one magic-2 batch, a list comprehension per column."""
    item, count = decoder.item, len(records)
    base = header.base_offset
    is_control = bool(header.attributes & 0x20)
    if header.attributes & 0x08:
        timestamps = [header.max_timestamp] * count
    else:
        first = header.base_timestamp
        timestamps = [first + record.timestamp_delta for record in records]
    keys = [record.key for record in records]
    values = [record.value for record in records]
    decoder.out.records.extend(
        count,
        topic=item.topic,
        partition=item.partition,
        file=item.path,
        segment_base_offset=item.base_offset,
        batch_position=pos,
        offset=[base + record.offset_delta for record in records],
        timestamp=timestamps,
        key_hash=[key_hash(key) for key in keys],
        key_size=[-1 if key is None else len(key) for key in keys],
        value_size=[-1 if value is None else len(value) for value in values],
        is_tombstone=[value is None for value in values],
        is_control=is_control,
        control_type=decoder.control_types(records, pos) if is_control else None,
        headers_count=[len(record.headers) for record in records],
        record_attributes=[record.attributes for record in records],
        magic=2,
        is_transactional=bool(header.attributes & 0x10),
        producer_id=header.producer_id,
        delete_horizon=horizon,
    )


def _legacy_record(
    item: Item, pos: int, message: LegacyMessage, append_time: int | None
) -> tuple[Any, ...]:
    """A records row of a magic 0/1 message (LogAppendTime: the wrapper's timestamp)."""
    stamp = message.timestamp if append_time is None else append_time
    return (
        item.topic,
        item.partition,
        item.path,
        item.base_offset,
        pos,
        message.offset,
        -1 if stamp is None else stamp,
        key_hash(message.key),
        -1 if message.key is None else len(message.key),
        -1 if message.value is None else len(message.value),
        message.value is None,
        False,
        None,
        0,
        message.attributes,
        message.magic,
        False,
        -1,
        None,
    )
