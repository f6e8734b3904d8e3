"""What a log segment knows besides its bytes: index and roll bookkeeping, no files.

Theory of operation
-------------------
This is the part of Kafka's ``LogSegment`` that decides *where index entries
go* and *when to roll*, split from the file handling so that two users share
one implementation: :class:`~lethe_reference.storage.segment.LogSegment`
(the broker's file-backed segment) and the fixture generator in
``lethe_tools.fixturegen.segment`` (which lays out logs in memory and is
proven byte-identical to segments Kafka 4.0 wrote).

**Append** (``LogSegment.append``), one call per ``UnifiedLog.append``, i.e.
per produce request's records for the partition:

1. the append starts at ``position`` = the current size; at position 0 the
   append's largest timestamp becomes the segment's *rolling-based timestamp*;
2. if the append's largest timestamp is *strictly* greater than the segment's
   max so far, (that timestamp, the last offset of the shallow batch holding
   it) becomes the new max so far;
3. if *more than* ``index.interval.bytes`` were appended since the last offset
   index entry (this append not counted yet), append the offset index entry
   ``largest offset of the append -> position`` and offer the max so far to the
   time index (:meth:`TimeIndex.maybe_append`), then reset the counter;
4. count the append's bytes.

**Inactive / close** (``onBecomeInactiveSegment``, ``close``): offer the max so
far to the time index once more, skipping the full check. A reopened segment
reads its max so far back from that last time index entry.

**Roll** (``LogSegment.shouldRoll``, kafka-facts 3.6): roll before an append when

* ``size > segment.bytes - messages size``;
* the segment is non-empty and the time waited exceeds ``segment.ms - jitter``:
  ``max timestamp in the append - rolling-based timestamp`` when the first
  batch had a timestamp (>= 0), else ``now - creation time``;
* either index is full; or
* the append's last offset cannot be made relative to the base offset.

Not task-safe: the caller holds the partition lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.model import NO_TIMESTAMP

from lethe_reference.storage.errors import SegmentOffsetOverflowError
from lethe_reference.storage.offset_index import DEFAULT_INDEX_BYTES, OffsetIndex
from lethe_reference.storage.time_index import TimeIndex, TimestampOffset

__all__ = ["NEVER_MS", "RollParams", "SegmentState"]

#: ``Long.MAX_VALUE``: a ``segment.ms`` that never rolls (used by the fixture generator).
NEVER_MS = 2**63 - 1


@dataclass(frozen=True, slots=True)
class RollParams:
    """Inputs of ``shouldRoll`` (Kafka's ``RollParams``) for one pending append."""

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now_ms: int


class SegmentState:
    """Index and roll state of the segment at ``base_offset`` (module docstring).

    ``offset_index``/``time_index`` default to empty ones; pass loaded indexes
    (and ``size``) to resume a segment read back from disk.
    """

    def __init__(
        self,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int = DEFAULT_INDEX_BYTES,
        roll_jitter_ms: int = 0,
        created_ms: int = 0,
        size: int = 0,
        offset_index: OffsetIndex | None = None,
        time_index: TimeIndex | None = None,
    ) -> None:
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self.created_ms = created_ms
        self.size = size
        if offset_index is None:
            offset_index = OffsetIndex(base_offset, max_index_bytes=max_index_bytes)
        if time_index is None:
            time_index = TimeIndex(base_offset, max_index_bytes=max_index_bytes)
        self.offset_index = offset_index
        self.time_index = time_index
        self.bytes_since_last_index_entry = 0
        #: The first batch's timestamp, once known (None: not loaded yet).
        self.rolling_based_timestamp: int | None = None
        self._max_so_far: TimestampOffset | None = None  # None: read the time index

    # --- max timestamp so far ---------------------------------------------------------

    @property
    def max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        """(max timestamp, last offset of its batch); the time index's last entry
        until this segment has seen an append (``readMaxTimestampAndOffsetSoFar``)."""
        if self._max_so_far is None:
            self._max_so_far = self.time_index.last_entry
        return self._max_so_far

    @property
    def max_timestamp_so_far(self) -> int:
        return self.max_timestamp_and_offset_so_far.timestamp

    def replace_max_so_far(self, value: TimestampOffset | None) -> None:
        """Set the max so far after a truncation (None: read the time index again)."""
        self._max_so_far = value

    def note_batch_timestamp(self, timestamp: int, shallow_offset: int) -> None:
        """Raise the max so far when ``timestamp`` is strictly greater."""
        if timestamp > self.max_timestamp_so_far:
            self._max_so_far = TimestampOffset(timestamp, shallow_offset)

    # --- append -----------------------------------------------------------------------

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return self.offset_index.can_append_offset(offset)

    def on_append(
        self,
        size: int,
        *,
        largest_offset: int,
        largest_timestamp: int,
        shallow_offset_of_max_timestamp: int,
    ) -> int:
        """Account for ``size`` bytes appended; returns the position they start at."""
        position = self.size
        if size <= 0:
            return position
        if position == 0:
            self.rolling_based_timestamp = largest_timestamp
        if not self.can_convert_to_relative_offset(largest_offset):
            raise SegmentOffsetOverflowError(
                f"offset {largest_offset} does not fit segment {self.base_offset}"
            )
        self.size += size
        self.note_batch_timestamp(largest_timestamp, shallow_offset_of_max_timestamp)
        if self.bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(largest_offset, position)
            best = self.max_timestamp_and_offset_so_far
            self.time_index.maybe_append(best.timestamp, best.offset)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += size
        return position

    def become_inactive(self) -> None:
        """Append the final time index entry (roll, close, end of recovery)."""
        best = self.max_timestamp_and_offset_so_far
        self.time_index.maybe_append(best.timestamp, best.offset, skip_full_check=True)

    def reset(self) -> None:
        """Forget everything derived from the log, before recovery replays it."""
        self.offset_index.reset()
        self.time_index.reset()
        self.size = 0
        self.bytes_since_last_index_entry = 0
        self._max_so_far = None

    # --- roll -------------------------------------------------------------------------

    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        ts = self.rolling_based_timestamp
        if ts is not None and ts >= 0:
            return message_timestamp - ts
        return now_ms - self.created_ms

    def should_roll(self, params: RollParams) -> bool:
        waited = self.time_waited_for_roll(params.now_ms, params.max_timestamp_in_messages)
        reached_roll_ms = waited > params.max_segment_ms - self.roll_jitter_ms
        return (
            self.size > params.max_segment_bytes - params.messages_size
            or (self.size > 0 and reached_roll_ms)
            or self.offset_index.is_full()
            or self.time_index.is_full()
            or not self.can_convert_to_relative_offset(params.max_offset_in_messages)
        )

    def first_batch_timestamp(self) -> int:
        """``getFirstBatchTimestamp``: the rolling-based timestamp, or Long.MAX."""
        ts = self.rolling_based_timestamp
        return ts if ts is not None and ts >= 0 else NEVER_MS

    def __repr__(self) -> str:
        ts = self._max_so_far.timestamp if self._max_so_far is not None else NO_TIMESTAMP
        return f"SegmentState(baseOffset={self.base_offset}, size={self.size}, maxTimestamp={ts})"
