"""The index-against-log checks kafka-dump-log makes while it dumps an index.

Theory of operation
-------------------
``kafka-dump-log --files X.index`` does not only print the entries: for each
entry it opens the sibling ``X.log`` at the entry's position and compares the
first batch's last offset with the entry's offset. ``--files X.timeindex``
looks each entry's offset up in ``X.index``, scans forward to the batch whose
last offset reaches it, and compares that batch's largest *record* timestamp
(a deep read) with the entry. Disagreements are collected and printed to
stderr after all files, in Kafka's words (see :mod:`lethe_tools.render.dump_text`).

Both functions mirror ``DumpLogSegments.dumpIndex`` / ``dumpTimeIndex``:

* entries stop at the first entry ``i > 0`` whose offset is the base offset
  (zeros of a preallocated, untrimmed index);
* the offset-index lookup is ``OffsetIndex.lookup``: the last entry whose
  offset is <= the target, else position 0;
* a missing ``.log`` means no checks (Kafka would die; the entries still print).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from lethe_formats.errors import FormatError
from lethe_formats.model import BatchHeader
from lethe_formats.records.scan import (
    Buffer,
    LogScanner,
    ScannedEntry,
    decode_legacy_inner,
    decode_records,
)
from lethe_formats.storage.index import read_offset_index, read_time_index

__all__ = ["TimeIndexFindings", "check_index_entries", "check_time_index_entries", "index_rows"]

NO_TIMESTAMP = -1


@dataclass(slots=True)
class TimeIndexFindings:
    """The three lists DumpLogSegments.TimeIndexDumpErrors keeps, for one file."""

    mismatches: list[tuple[int, int]] = field(default_factory=list)
    out_of_order: list[tuple[int, int]] = field(default_factory=list)
    not_found: list[tuple[int, int]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.mismatches or self.out_of_order or self.not_found)


def index_rows(data: bytes, base_offset: int) -> list[tuple[int, int]]:
    """(absolute offset, position) of each entry kafka-dump-log prints."""
    return [(base_offset + e.relative_offset, e.position) for e in read_offset_index(data)]


def time_rows(data: bytes, base_offset: int) -> list[tuple[int, int]]:
    """(timestamp, absolute offset) of each entry kafka-dump-log prints."""
    return [(e.timestamp, base_offset + e.relative_offset) for e in read_time_index(data)]


def _first_entry(log: Buffer, position: int) -> ScannedEntry | None:
    if position < 0 or position >= len(log):
        return None
    for entry in LogScanner(log, start=position, verify_crc=False):
        return entry
    return None


def _last_offset(entry: ScannedEntry) -> int:
    header = entry.header
    return header.last_offset if isinstance(header, BatchHeader) else header.offset


def check_index_entries(rows: Sequence[tuple[int, int]], log: Buffer) -> list[tuple[int, int]]:
    """(index offset, log offset) for every entry whose batch ends elsewhere,
    newest first as Kafka prepends them; -1 when no batch starts there."""
    mismatches: list[tuple[int, int]] = []
    for offset, position in rows:
        entry = _first_entry(log, position)
        found = -1 if entry is None else _last_offset(entry)
        if found != offset:
            mismatches.insert(0, (offset, found))
    return mismatches


def _lookup(index: Sequence[tuple[int, int]], offset: int) -> int:
    slot = bisect_right(index, (offset, 2**63)) - 1
    return index[slot][1] if slot >= 0 else 0


def _max_record_timestamp(log: Buffer, entry: ScannedEntry) -> int:
    header = entry.header
    top = NO_TIMESTAMP
    if isinstance(header, BatchHeader):
        if header.attributes & 0x08:
            return header.max_timestamp if header.records_count else NO_TIMESTAMP
        base = header.base_timestamp
        for record in decode_records(log, entry):
            top = max(top, base + record.timestamp_delta)
        return top
    if header.magic == 1 and header.attributes & 0x08:
        return header.timestamp if header.timestamp is not None else NO_TIMESTAMP
    for message in decode_legacy_inner(log, entry):
        if message.timestamp is not None:
            top = max(top, message.timestamp)
    return top


def check_time_index_entries(
    rows: Sequence[tuple[int, int]], index: Sequence[tuple[int, int]], log: Buffer
) -> TimeIndexFindings:
    """What ``dumpTimeIndex`` records for ``rows`` (timestamp, offset)."""
    findings = TimeIndexFindings()
    previous = NO_TIMESTAMP
    for timestamp, offset in rows:
        found: ScannedEntry | None = None
        start = min(max(_lookup(index, offset), 0), len(log))  # a corrupt index may point anywhere
        for entry in LogScanner(log, start=start, verify_crc=False):
            if _last_offset(entry) >= offset:
                found = entry
                break
        if found is None:
            findings.not_found.append((offset, -1))
        elif _last_offset(found) != offset:
            findings.not_found.append((offset, _last_offset(found)))
        else:
            try:
                top = _max_record_timestamp(log, found)
            except FormatError:
                top = NO_TIMESTAMP
            if top != timestamp:
                findings.mismatches.append((timestamp, top))
            if previous >= timestamp:
                findings.out_of_order.append((timestamp, previous))
        previous = timestamp
    return findings
