"""Verify one ``.log`` segment with a shallow scan, and summarise it for cross-checks.

Theory of operation
-------------------
``verify_segment`` makes one pass of :class:`LogScanner` (61-byte header
unpack plus CRC per batch, both in C) and keeps Python work per batch to a few
integer comparisons and three ``array`` appends; records are decoded only for
the rare batches that need it, so verification runs at CRC speed on real
segments. What it checks, per entry (positions name the faulty field)::

    byte +0   baseOffset      > previous entry's last offset; >= the file name's base
    byte +17  crc             CRC-32C (magic 2) / +12 CRC32 (magic 0/1) matches
    byte +21  attributes      codec 0-4; bit 6 (delete horizon) only on magic 2
    byte +23  lastOffsetDelta >= 0 and >= recordsCount - 1 (records fit in [base, last])
    byte +57  recordsCount    >= 0
    tail      the scan ends exactly at the end of the file (else torn tail / corruption)

A compressed batch's stream is opened as Kafka's reader opens it (LZ4 frame
descriptor, gzip magic and method, zstd magic; ``check_stream_header``): a
frame Kafka refuses, such as LZ4 with dependent blocks, is reported at the
faulty byte even though its CRC is right. ``deep=True`` decompresses it all.

Batches with the KIP-534 delete horizon (attribute bit 6) are decoded: Kafka
writes them in ``MemoryRecords.filterTo`` with baseTimestamp = horizon and
record deltas relative to it, so every record timestamp must still be <=
maxTimestamp and (CreateTime, non-empty) their maximum must equal it. A
horizon on a batch with no tombstone and no control record is *not* reported:
the cleaner keeps the flag on every batch it rewrote, and in the golden
``compaction/pass2`` the surviving batches keep it after their tombstones are
gone. ``deep=True`` decodes every batch and also checks that record offsets
strictly increase inside ``[baseOffset, lastOffset]``; for a compressed
magic 0/1 wrapper, that the inner messages' CRCs match, their offsets
increase, and the last one is the wrapper's offset.

The returned :class:`SegmentSummary` (batch start positions, last offsets and
max timestamps as ``array('q')``) is what the index, time index, transaction
index and checkpoint checks compare against, without rescanning the log.
"""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass, field

from lethe_formats.compression import check_stream_header
from lethe_formats.crc import crc32, crc32c
from lethe_formats.errors import FormatError, TruncatedError
from lethe_formats.model import BatchHeader, LegacyMessage
from lethe_formats.records.scan import (
    Buffer,
    LogScanner,
    ScannedEntry,
    decode_legacy_inner,
    decode_records,
)

from lethe_tools.inspect.log_walk import legacy_crc
from lethe_tools.inspect.problems import Problems
from lethe_tools.progress import NoProgress, ScanProgress

__all__ = ["SegmentSummary", "verify_segment"]

#: baseOffset (magic 2) or offset (magic 0/1): the first 8 bytes of every entry.
_FIRST_OFFSET = struct.Struct(">q")
#: A v2 batch's records (the compressed stream, if any) start here.
_RECORDS_AT = 61


@dataclass(slots=True)
class SegmentSummary:
    """Where each batch starts and which offsets/timestamps it covers."""

    path: str
    base_offset: int | None
    size: int
    positions: array[int] = field(default_factory=lambda: array("q"))
    last_offsets: array[int] = field(default_factory=lambda: array("q"))
    max_timestamps: array[int] = field(default_factory=lambda: array("q"))
    first_offset: int | None = None
    end_position: int = 0

    @property
    def next_offset(self) -> int | None:
        """Last offset + 1 of the last batch, None for an empty segment."""
        return self.last_offsets[-1] + 1 if self.last_offsets else None


def verify_segment(
    data: Buffer,
    path: str,
    base_offset: int | None,
    problems: Problems,
    *,
    deep: bool = False,
    progress: ScanProgress | None = None,
) -> SegmentSummary:
    """Check the segment ``data`` (named ``path``), adding to ``problems``."""
    checker = _SegmentChecker(data, path, problems, deep)
    return checker.run(base_offset, progress if progress is not None else NoProgress())


class _SegmentChecker:
    """One segment's checks; state shared by the per-batch helpers."""

    def __init__(self, data: Buffer, path: str, problems: Problems, deep: bool) -> None:
        self.data = data
        self.path = path
        self.problems = problems
        self.deep = deep

    def add(self, message: str, position: int, field: str) -> None:
        self.problems.add(self.path, message, position=position, field=field)

    def run(self, base_offset: int | None, progress: ScanProgress) -> SegmentSummary:
        summary = SegmentSummary(self.path, base_offset, len(self.data))
        scanner = LogScanner(self.data, file=self.path)
        positions = summary.positions.append
        lasts = summary.last_offsets.append
        maxima = summary.max_timestamps.append
        deep = self.deep
        tracking = not isinstance(progress, NoProgress)
        previous_last = -1 if base_offset is None else base_offset - 1
        for entry in scanner:
            header = entry.header
            position = entry.position
            if isinstance(header, BatchHeader):
                first = header.base_offset
                delta = header.last_offset_delta
                count = header.records_count
                last = first + delta
                max_ts = header.max_timestamp
                # any codec and the delete-horizon bit (0x40) make attributes & 0x47 non-zero
                if deep or header.attributes & 0x47 or not 0 <= count <= delta + 1 or delta < 0:
                    self.check_v2(entry, header)
            else:
                first = last = header.offset
                max_ts = -1 if header.timestamp is None else header.timestamp
                self.check_legacy(entry, header)
            if first <= previous_last:
                self.order_problem(first, previous_last, position, base_offset)
            if entry.crc_valid is False:
                self.crc_problem(entry)
            positions(position)
            lasts(last)
            maxima(max_ts)
            if last > previous_last:  # noqa: PLR1730 - cheaper than a max() call per batch
                previous_last = last
            if tracking:
                progress.update(position)
        if summary.positions:
            summary.first_offset = _FIRST_OFFSET.unpack_from(self.data, summary.positions[0])[0]
        summary.end_position = scanner.end_position
        self.check_tail(scanner.stop_error, summary)
        return summary

    def order_problem(self, first: int, previous: int, position: int, base: int | None) -> None:
        if position == 0 and base is not None:
            message = f"first offset {first} is below the segment's base offset {base}"
        else:
            message = f"offset {first} is not above the previous batch's last offset {previous}"
        self.add(message, position, "baseOffset")

    def crc_problem(self, entry: ScannedEntry) -> None:
        header = entry.header
        pos = entry.position
        with memoryview(self.data) as view:
            if isinstance(header, BatchHeader):
                computed = crc32c(view[pos + 21 : pos + header.size_in_bytes])
                where = pos + 17
            else:
                computed = crc32(view[pos + 16 : pos + header.size_in_bytes])
                where = pos + 12
        self.add(
            f"Record is corrupt (stored crc = {header.crc}, computed crc = {computed})",
            where,
            "crc",
        )

    def check_v2(self, entry: ScannedEntry, header: BatchHeader) -> None:
        pos = entry.position
        codec = header.attributes & 0x07
        count = header.records_count
        delta = header.last_offset_delta
        if codec > 4:
            self.add(f"unknown compression codec {codec}", pos + 21, "attributes")
        elif count < 0:
            self.add(f"recordsCount {count} is negative", pos + 57, "recordsCount")
        elif delta < 0 or delta < count - 1:
            self.add(
                f"lastOffsetDelta {delta} cannot hold {count} records with distinct offsets",
                pos + 23,
                "lastOffsetDelta",
            )
        elif entry.crc_valid is False:
            return  # a CRC mismatch says it all: decoding garbage would only add noise
        elif self.deep or header.attributes & 0x40:
            self.check_records(entry, header)
        elif codec:
            self.check_stream(entry, header, codec)

    def check_stream(self, entry: ScannedEntry, header: BatchHeader, codec: int) -> None:
        """The first bytes of a compressed batch's stream, as Kafka's reader opens
        it (an LZ4 frame with dependent blocks, say, has a right CRC and still
        cannot be read by Kafka); ``deep`` decompresses the whole stream."""
        start = entry.position + _RECORDS_AT
        with memoryview(self.data) as view:
            head = bytes(view[start : min(start + 16, entry.position + header.size_in_bytes)])
        try:
            check_stream_header(codec, head)
        except FormatError as error:
            self.problems.error(error.at(file=self.path, offset=start), self.path)

    def check_records(self, entry: ScannedEntry, header: BatchHeader) -> None:
        """Decode one batch: offsets inside [base, last] and increasing;
        timestamps consistent with maxTimestamp (the delete-horizon rules above)."""
        try:
            records = decode_records(self.data, entry, file=self.path)
        except FormatError as error:
            self.problems.error(error, self.path)
            return
        pos = entry.position
        previous = -1
        top: int | None = None
        for index, record in enumerate(records):
            delta = record.offset_delta
            if delta <= previous or delta > header.last_offset_delta:
                self.add(
                    f"record offset {header.base_offset + delta} is not increasing inside the "
                    f"batch's [{header.base_offset}, {header.last_offset}]",
                    pos + 61,
                    f"records[{index}].offsetDelta",
                )
                return
            previous = delta
            timestamp = header.base_timestamp + record.timestamp_delta
            top = timestamp if top is None or timestamp > top else top
        if header.attributes & 0x08 or top is None or top == header.max_timestamp:
            return  # LogAppendTime: record timestamps are maxTimestamp by definition
        horizon = " (delete horizon set)" if header.attributes & 0x40 else ""
        self.add(
            f"largest record timestamp {top} differs from maxTimestamp "
            f"{header.max_timestamp}{horizon}",
            pos + 35,
            "maxTimestamp",
        )

    def check_legacy(self, entry: ScannedEntry, message: LegacyMessage) -> None:
        position = entry.position
        attributes = message.attributes & 0xFF
        if attributes & 0x40:
            self.add(
                f"attribute bit 6 (delete horizon, KIP-534) is set on a magic {message.magic} "
                "message; only magic 2 batches carry a delete horizon",
                position + 17,
                "attributes",
            )
        codec = attributes & 0x07
        if codec > 3:  # zstd (4) needs magic 2; 5-7 are not codecs
            self.add(
                f"compression codec {codec} is not allowed for magic {message.magic}",
                position + 17,
                "attributes",
            )
        elif codec and self.deep and entry.crc_valid is not False:
            self.check_inner(entry, message)

    def check_inner(self, entry: ScannedEntry, wrapper: LegacyMessage) -> None:
        """A compressed magic 0/1 wrapper: inner CRCs, increasing offsets, and the
        wrapper's offset being the last inner one (kafka-facts 3.4)."""
        try:
            inner = decode_legacy_inner(self.data, entry, file=self.path)
        except FormatError as error:
            self.problems.error(error, self.path)
            return
        previous: int | None = None
        for index, message in enumerate(inner):
            if previous is not None and message.offset <= previous:
                self.add(
                    f"inner message offset {message.offset} is not above the previous {previous}",
                    entry.position,
                    f"inner[{index}].offset",
                )
            computed = legacy_crc(message)
            if computed != message.crc:
                self.add(
                    f"inner message {index} (offset {message.offset}): Record is corrupt "
                    f"(stored crc = {message.crc}, computed crc = {computed})",
                    entry.position,
                    f"inner[{index}].crc",
                )
            previous = message.offset
        if inner and inner[-1].offset != wrapper.offset:
            self.add(
                f"wrapper offset {wrapper.offset} is not the last inner offset {inner[-1].offset}",
                entry.position,
                "offset",
            )

    def check_tail(self, stop: FormatError | None, summary: SegmentSummary) -> None:
        if stop is None:
            return
        if isinstance(stop, TruncatedError):
            trailing = summary.size - summary.end_position
            self.add(
                f"torn tail: the last {trailing} bytes do not hold a complete batch "
                "(Kafka truncates them during recovery)",
                summary.end_position,
                "entry",
            )
            return
        self.problems.error(stop, self.path)
