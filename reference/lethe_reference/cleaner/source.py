"""The cleaner's view of one segment, and the reads every step shares.

Theory of operation
-------------------
A :class:`SourceSegment` is a segment as plain data: its ``.log`` bytes, its
mtime (the legacy horizon and the cleaned segment's mtime come from it), the
sizes of its indexes (for grouping) and its ``.txnindex`` entries. The helpers
answer what Kafka asks its ``LogSegments`` and ``LogSegment``:

* :func:`covering` is ``logSegments(from, to)``: the floor segment of ``from``
  and every segment below ``to``;
* :func:`collect_aborted` is ``collectAbortedTransactions``;
* :func:`next_offset` is ``readNextOffset``;
* :func:`whole_segment` reads and checks every entry before anything is
  written: CRCs, no torn entry, offsets that start at the base and increase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lethe_formats.errors import CorruptRecordError
from lethe_formats.model import AbortedTxn, BatchHeader
from lethe_formats.records.scan import ScannedEntry

from lethe_reference.cleaner.entries import iter_entries

__all__ = ["SourceSegment", "collect_aborted", "covering", "next_offset", "whole_segment"]


@dataclass(frozen=True, slots=True)
class SourceSegment:
    """One segment of the log as the cleaner sees it."""

    base_offset: int
    data: bytes
    last_modified_ms: int
    offset_index_bytes: int = 0
    time_index_bytes: int = 0
    aborted: tuple[AbortedTxn, ...] = ()
    file: str | None = None

    @property
    def size(self) -> int:
        return len(self.data)


def covering(segments: Sequence[SourceSegment], start: int, end: int) -> list[SourceSegment]:
    """``logSegments(start, end)``: the floor segment of ``start`` and all below ``end``."""
    if start >= end:
        return []
    floor = max((i for i, s in enumerate(segments) if s.base_offset <= start), default=0)
    return [s for s in segments[floor:] if s.base_offset < end]


def whole_segment(segment: SourceSegment) -> list[ScannedEntry]:
    """Every entry of the segment, checked: CRCs, no entry cut short, and offsets
    that start at the segment's base and increase (a flipped bit in a baseOffset,
    which no CRC covers, would otherwise silently drop or misplace records)."""
    entries = list(iter_entries(segment.data, 0, segment.size, segment.file))
    previous = segment.base_offset - 1
    for entry in entries:
        header = entry.header
        first = header.base_offset if isinstance(header, BatchHeader) else header.offset
        last = header.last_offset if isinstance(header, BatchHeader) else header.offset
        if first <= previous or last < first:
            raise CorruptRecordError(
                f"offsets [{first}, {last}] do not follow {previous} in a segment based at "
                f"{segment.base_offset}",
                file=segment.file,
                position=entry.position,
                field="baseOffset",
            )
        previous = last
    end = entries[-1].position + entries[-1].header.size_in_bytes if entries else 0
    if end != segment.size:
        raise CorruptRecordError(
            f"Log segment may be corrupt: {segment.size - end} bytes at the end do not "
            "form a complete batch",
            file=segment.file,
            position=end,
            field="batch",
        )
    return entries


def collect_aborted(segments: Sequence[SourceSegment], start: int, upper: int) -> list[AbortedTxn]:
    """``collectAbortedTransactions``: from the floor segment of ``start`` on, the
    aborted transactions overlapping ``[start, upper)``; stop at a segment whose
    index reaches a last stable offset >= ``upper``."""
    found: list[AbortedTxn] = []
    for segment in covering(segments, start, 2**63 - 1):
        for txn in segment.aborted:
            if txn.last_offset >= start and txn.first_offset < upper:
                found.append(txn)
            if txn.last_stable_offset >= upper:
                return found
    return found


def next_offset(segment: SourceSegment) -> int:
    """``readNextOffset``: one past the last entry's last offset (base if empty)."""
    last = segment.base_offset - 1
    for entry in iter_entries(segment.data, 0, segment.size, segment.file):
        header = entry.header
        last = header.last_offset if isinstance(header, BatchHeader) else header.offset
    return last + 1
