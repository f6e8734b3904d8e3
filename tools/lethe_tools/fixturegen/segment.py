"""Lay appended record bytes out in segments and indexes exactly as Kafka does.

The writer replays the leader's append path of Kafka 4.0 for one partition,
one ``append`` call standing for one ``UnifiedLog.append`` of a produce
request's records (a v2 batch, or a legacy message set):

1. **Roll** (``UnifiedLog.maybeRoll`` / ``LogSegment.shouldRoll``, size rule
   only): start a new segment, named after the append's first offset, when
   ``segment.size > segment.bytes - incoming.size``, when the append's last
   offset would not fit as an int32 relative to the segment's base offset, or
   when the caller forces it (``roll=True``, standing in for ``segment.ms``,
   whose wall-clock rule a generator has no business computing). The old
   segment becomes inactive: its time index gets the final entry below.
2. **Append** (``LogSegment.append``): remember where the append starts. If
   the max timestamp of the append is *strictly* greater than the segment's
   max so far, that becomes (max timestamp, last offset of the shallow batch
   holding it). Then, if *more than* ``index.interval.bytes`` were appended
   since the last index entry (this append not counted yet), add the offset
   index entry (last offset of the append -> its start position) and offer
   (max timestamp so far, its offset) to the time index; reset the counter.
   Finally count this append's bytes.
3. **Time index** (``TimeIndex.maybeAppend``): an entry is written only if its
   timestamp is greater than the last entry's, the "last entry" of an empty
   index being (-1, base offset). So all-v0 data gives an empty time index.
4. **Inactive / close** (``onBecomeInactiveSegment``, ``close``): offer the max
   so far once more; indexes are trimmed to their entries (no preallocation).
5. **Transactions** (``ProducerStateManager``): a transactional batch of a
   producer with no open transaction opens one at its base offset. A COMMIT or
   ABORT marker completes it (first offset = the open one, or the marker's own
   offset); an ABORT adds ``AbortedTxn(producerId, first, marker offset, LSO)``
   to the segment holding the marker, where LSO is the first offset of the
   earliest still-open transaction of *another* producer, else marker + 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lethe_formats.model import (
    NO_TIMESTAMP,
    AbortedTxn,
    ControlType,
    OffsetIndexEntry,
    TimeIndexEntry,
)

from lethe_tools.fixturegen.shallow import ShallowEntry, shallow_entries

__all__ = ["PartitionLogWriter", "SegmentContent"]

_INT32_MAX = 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class SegmentContent:
    """A finished segment: its log bytes and the entries of its three indexes."""

    base_offset: int
    log: bytes
    offset_index: tuple[OffsetIndexEntry, ...]
    time_index: tuple[TimeIndexEntry, ...]
    aborted_txns: tuple[AbortedTxn, ...]


@dataclass(slots=True)
class _ActiveSegment:
    base_offset: int
    log: bytearray = field(default_factory=bytearray)
    offset_index: list[OffsetIndexEntry] = field(default_factory=list)
    time_index: list[TimeIndexEntry] = field(default_factory=list)
    aborted_txns: list[AbortedTxn] = field(default_factory=list)
    bytes_since_last_index_entry: int = 0
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = -1

    def __post_init__(self) -> None:
        self.offset_of_max_timestamp = self.base_offset

    def maybe_append_time_entry(self, timestamp: int, offset: int) -> None:
        last = self.time_index[-1].timestamp if self.time_index else NO_TIMESTAMP
        if timestamp > last:
            self.time_index.append(TimeIndexEntry(timestamp, offset - self.base_offset))

    def append(self, data: bytes, entries: list[ShallowEntry], interval: int) -> None:
        position = len(self.log)
        self.log += data
        largest_ts, offset_of_largest = _max_timestamp(entries)
        if largest_ts > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = largest_ts, offset_of_largest
        if self.bytes_since_last_index_entry > interval:
            relative = entries[-1].last_offset - self.base_offset
            self.offset_index.append(OffsetIndexEntry(relative, position))
            self.maybe_append_time_entry(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += len(data)

    def finish(self) -> SegmentContent:
        self.maybe_append_time_entry(self.max_timestamp, self.offset_of_max_timestamp)
        return SegmentContent(
            base_offset=self.base_offset,
            log=bytes(self.log),
            offset_index=tuple(self.offset_index),
            time_index=tuple(self.time_index),
            aborted_txns=tuple(self.aborted_txns),
        )


def _max_timestamp(entries: list[ShallowEntry]) -> tuple[int, int]:
    """(max timestamp, last offset of the first shallow entry holding it), as LogValidator."""
    largest, offset = NO_TIMESTAMP, -1
    for entry in entries:
        if entry.max_timestamp > largest:
            largest, offset = entry.max_timestamp, entry.last_offset
    return largest, offset


class PartitionLogWriter:
    """Replays Kafka's append path for one partition; see the module docstring.

    ``start_offset`` names the first segment (default: the first append's
    first offset); an empty partition still gets one empty segment there.
    """

    def __init__(
        self,
        *,
        segment_bytes: int,
        index_interval_bytes: int,
        start_offset: int | None = None,
    ) -> None:
        self._segment_bytes = segment_bytes
        self._interval = index_interval_bytes
        self._start_offset = start_offset
        self._finished: list[SegmentContent] = []
        self._active: _ActiveSegment | None = None
        self._open_txns: dict[int, int] = {}  # producer id -> first offset of its open txn
        self._next_offset = start_offset if start_offset is not None else 0

    @property
    def next_offset(self) -> int:
        """The log end offset so far (one past the last appended offset)."""
        return self._next_offset

    def append(
        self,
        data: bytes,
        *,
        first_offset: int | None = None,
        roll: bool = False,
        roll_base_offset: int | None = None,
    ) -> None:
        """Append one produce request's records for this partition.

        ``first_offset`` is needed only when the data starts with a compressed
        legacy wrapper; ``roll``/``roll_base_offset`` force a new segment
        (the latter also names it, as a cleaned segment keeps its old name).
        """
        entries = shallow_entries(data)
        if not entries:
            raise ValueError("nothing to append")
        first = first_offset if first_offset is not None else entries[0].base_offset
        if first is None:
            raise ValueError("first_offset is required for a compressed legacy wrapper")
        if first < self._next_offset and self._active is not None:
            raise ValueError(f"offset {first} is below the log end offset {self._next_offset}")
        active = self._segment_for(data, entries, first, roll, roll_base_offset)
        active.append(data, entries, self._interval)
        self._track_transactions(active, entries)
        self._next_offset = entries[-1].last_offset + 1

    def close(self) -> list[SegmentContent]:
        """Finish the active segment (as a clean shutdown does) and return all segments."""
        if self._active is None:
            base = self._start_offset if self._start_offset is not None else 0
            self._active = _ActiveSegment(base)
        self._finished.append(self._active.finish())
        self._active = None
        return list(self._finished)

    def _segment_for(
        self,
        data: bytes,
        entries: list[ShallowEntry],
        first: int,
        roll: bool,
        roll_base: int | None,
    ) -> _ActiveSegment:
        active = self._active
        if active is None:
            base = self._start_offset if self._start_offset is not None else first
            if roll_base is not None:
                base = roll_base
            self._active = _ActiveSegment(base)
            return self._active
        last = entries[-1].last_offset
        too_big = len(active.log) > self._segment_bytes - len(data)
        not_relative = last - active.base_offset > _INT32_MAX
        if roll or roll_base is not None or too_big or not_relative:
            self._finished.append(active.finish())
            active = _ActiveSegment(roll_base if roll_base is not None else first)
            self._active = active
        return active

    def _track_transactions(self, segment: _ActiveSegment, entries: list[ShallowEntry]) -> None:
        for entry in entries:
            if entry.magic < 2 or entry.producer_id < 0:
                continue
            pid = entry.producer_id
            if entry.control_type in (ControlType.ABORT, ControlType.COMMIT):
                first = self._open_txns.pop(pid, entry.last_offset)
                if entry.control_type is ControlType.ABORT:
                    others = self._open_txns.values()
                    lso = min(others) if others else entry.last_offset + 1
                    segment.aborted_txns.append(AbortedTxn(0, pid, first, entry.last_offset, lso))
            elif entry.is_transactional and not entry.is_control:
                assert entry.base_offset is not None  # v2 batches always have one
                self._open_txns.setdefault(pid, entry.base_offset)
