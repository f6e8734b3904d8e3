"""Lookups inside one segment: offset -> position, reads, timestamp searches.

Theory of operation
-------------------
Every lookup starts with a sparse index and finishes with a short forward scan
of the ``.log`` (``LogSegment`` / ``FileRecords`` in Kafka):

* :func:`translate_offset`: the offset index gives the greatest indexed batch
  at or below the target; scanning forward, the first batch whose *last*
  offset is >= the target contains it (``searchForOffsetWithSize``);
* :func:`read`: from that batch's start position, ``min(max_size, max_position
  - start)`` bytes, or at least the first batch with ``min_one_message``; as
  bytes, or with ``as_region`` as a file region the server sends unread
  (``FileRecords.slice``, :mod:`.file_region`).
  Kafka slices the file by bytes, so a read may end inside a batch; clients
  drop such a partial trailing batch (``firstEntryIncomplete`` says when even
  the first one is cut);
* :func:`find_offset_by_timestamp`: the time index gives the greatest entry
  with timestamp <= the target, the offset index a position for
  ``max(its offset, starting offset)``; then the first record with timestamp
  >= target *and* offset >= starting offset (``findOffsetByTimestamp``);
* :func:`offset_of_max_timestamp`: the batch holding the segment's max
  timestamp so far, and in it the first record carrying that timestamp (used
  by ListOffsets MAX_TIMESTAMP);
* :func:`read_next_offset`: one past the last offset in the segment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from lethe_formats.model import NO_TIMESTAMP, BatchHeader

from lethe_reference.storage.file_records import last_offset, max_timestamp, record_stamps
from lethe_reference.storage.file_region import FileRegion
from lethe_reference.storage.time_index import TimestampOffset

if TYPE_CHECKING:
    from lethe_reference.storage.segment import LogSegment

__all__ = [
    "LogOffsetPosition",
    "SegmentRead",
    "TimestampAndOffset",
    "find_offset_by_timestamp",
    "largest_timestamp_after",
    "offset_of_max_timestamp",
    "read",
    "read_next_offset",
    "scan_tail",
    "translate_offset",
]


class LogOffsetPosition(NamedTuple):
    """The batch found for an offset: its last offset, start position and size."""

    offset: int
    position: int
    size: int


class TimestampAndOffset(NamedTuple):
    """A record's timestamp and offset, with its batch's leader epoch if known."""

    timestamp: int
    offset: int
    leader_epoch: int | None


@dataclass(frozen=True, slots=True)
class SegmentRead:
    """Bytes read from one segment, starting at the batch holding the fetch offset."""

    records: bytes | FileRegion
    position: int
    first_entry_incomplete: bool = False


#: Entries the scanner reads ahead per call in :func:`translate_offset`.
_TRANSLATE_CHUNK = 8


def translate_offset(
    segment: LogSegment, offset: int, starting_position: int = 0
) -> LogOffsetPosition | None:
    """The first batch whose last offset is >= ``offset``, or None past the end.

    The offset index puts the scan within ``index.interval.bytes`` of the batch,
    so a few entries per C call suffice: the default read-ahead (256 headers)
    cost a Fetch about 240 us for batches it never looked at."""
    start = max(segment.state.offset_index.lookup(offset).position, starting_position)
    with segment.log.scan(start, chunk=_TRANSLATE_CHUNK) as (entries, _scanner, _data):
        for entry in entries:
            last = last_offset(entry)
            if last >= offset:
                return LogOffsetPosition(last, entry.position, entry.header.size_in_bytes)
    return None


def read(
    segment: LogSegment,
    start_offset: int,
    max_size: int,
    max_position: int | None,
    *,
    min_one_message: bool = False,
    as_region: bool = False,
) -> SegmentRead | None:
    """Kafka's ``LogSegment.read``; None when ``start_offset`` is past the segment.
    ``as_region``: the records as a :class:`FileRegion` when large enough."""
    if max_size < 0:
        raise ValueError(f"Invalid max size {max_size} for log read from segment {segment}")
    found = translate_offset(segment, start_offset)
    if found is None:
        return None
    adjusted = max(max_size, found.size) if min_one_message else max_size
    if adjusted == 0 or max_position is None:
        return SegmentRead(b"", found.position)
    fetch_size = max(0, min(max_position - found.position, adjusted))
    file = segment.log
    return SegmentRead(
        file.region(found.position, fetch_size)
        if as_region
        else file.read(found.position, fetch_size),
        found.position,
        first_entry_incomplete=adjusted < found.size,
    )


def find_offset_by_timestamp(
    segment: LogSegment, timestamp: int, starting_offset: int
) -> TimestampAndOffset | None:
    """First record with timestamp >= ``timestamp`` and offset >= ``starting_offset``."""
    state = segment.state
    indexed = state.time_index.lookup(timestamp)
    position = state.offset_index.lookup(max(indexed.offset, starting_offset)).position
    with segment.log.scan(position) as (entries, _scanner, data):
        for entry in entries:
            if max_timestamp(entry) < timestamp:
                continue
            for offset, stamp in record_stamps(data, entry):
                if stamp >= timestamp and offset >= starting_offset:
                    return TimestampAndOffset(stamp, offset, _epoch(entry.header))
    return None


def offset_of_max_timestamp(segment: LogSegment) -> TimestampAndOffset | None:
    """The first record carrying the segment's max timestamp (None for magic 0 or empty)."""
    best = segment.state.max_timestamp_and_offset_so_far
    position = segment.state.offset_index.lookup(best.offset).position
    with segment.log.scan(position) as (entries, _scanner, data):
        for entry in entries:
            if max_timestamp(entry) != best.timestamp:
                continue
            if entry.header.magic == 0:
                return None
            for offset, stamp in record_stamps(data, entry):
                if stamp == best.timestamp:
                    return TimestampAndOffset(stamp, offset, _epoch(entry.header))
            return None
    return None


def largest_timestamp_after(segment: LogSegment, position: int) -> TimestampOffset:
    """Max batch timestamp (and that batch's last offset) from ``position`` on."""
    best = TimestampOffset(NO_TIMESTAMP, -1)
    with segment.log.scan(position) as (entries, _scanner, _data):
        for entry in entries:
            stamp = max_timestamp(entry)
            if stamp > best.timestamp:
                best = TimestampOffset(stamp, last_offset(entry))
    return best


def read_next_offset(segment: LogSegment) -> int:
    """One past the last offset in the segment, or its base offset when empty."""
    return scan_tail(segment)[0]


def scan_tail(segment: LogSegment) -> tuple[int, bool]:
    """``(next offset, whole)``: scanning from the last offset index entry, whether
    the ``.log`` ends exactly at an entry boundary (False: a torn or corrupt tail)."""
    start = segment.state.offset_index.lookup(segment.state.offset_index.last_offset).position
    next_offset = segment.base_offset
    with segment.log.scan(start) as (entries, scanner, _data):
        for entry in entries:
            next_offset = last_offset(entry) + 1
        whole = scanner.stop_error is None
    return next_offset, whole


def _epoch(header: object) -> int | None:
    if isinstance(header, BatchHeader) and header.partition_leader_epoch >= 0:
        return header.partition_leader_epoch
    return None
