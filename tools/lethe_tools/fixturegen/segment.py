"""Lay appended record bytes out in segments and indexes exactly as Kafka does.

The writer replays the leader's append path of Kafka 4.0 for one partition,
one ``append`` call standing for one ``UnifiedLog.append`` of a produce
request's records (a v2 batch, or a legacy message set). The segment rules
themselves (roll on size or offset overflow, offset index entry after more
than ``index.interval.bytes``, time index of the max timestamp so far, final
time index entry when a segment becomes inactive) are the reference broker's
:class:`lethe_reference.storage.segment_state.SegmentState`, so the broker and
the fixtures share ONE implementation of Kafka's rules. This module adds only:

1. **Shallow reading** of the appended bytes (:mod:`.shallow`), including
   legacy message sets the broker no longer accepts from producers: the
   append's largest offset, and (max timestamp, last offset of the first
   shallow entry holding it) as ``UnifiedLog.analyzeAndValidateRecords``
   computes them.
2. **Forced rolls** (``roll=True``), standing in for ``segment.ms``, whose
   wall-clock rule a generator has no business computing; ``segment.ms`` is
   therefore never reached here (``NEVER_MS``).
3. **Transactions** (``ProducerStateManager``): a transactional batch of a
   producer with no open transaction opens one at its base offset. A COMMIT or
   ABORT marker completes it (first offset = the open one, or the marker's own
   offset); an ABORT adds ``AbortedTxn(producerId, first, marker offset, LSO)``
   to the segment holding the marker, where LSO is the first offset of the
   earliest still-open transaction of *another* producer, else marker + 1.

Indexes are never preallocated: what :meth:`PartitionLogWriter.close` returns
is what a clean shutdown leaves on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lethe_formats.model import AbortedTxn, ControlType, OffsetIndexEntry, TimeIndexEntry
from lethe_reference.storage.segment_state import NEVER_MS, RollParams, SegmentState

from lethe_tools.fixturegen.shallow import ShallowEntry, shallow_entries

__all__ = ["PartitionLogWriter", "SegmentContent"]


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
    state: SegmentState
    log: bytearray = field(default_factory=bytearray)
    aborted_txns: list[AbortedTxn] = field(default_factory=list)

    @property
    def base_offset(self) -> int:
        return self.state.base_offset

    def append(self, data: bytes, entries: list[ShallowEntry]) -> None:
        largest_ts, offset_of_largest = _max_timestamp(entries)
        self.state.on_append(
            len(data),
            largest_offset=entries[-1].last_offset,
            largest_timestamp=largest_ts,
            shallow_offset_of_max_timestamp=offset_of_largest,
        )
        self.log += data

    def finish(self) -> SegmentContent:
        self.state.become_inactive()
        return SegmentContent(
            base_offset=self.base_offset,
            log=bytes(self.log),
            offset_index=self.state.offset_index.entries,
            time_index=self.state.time_index.entries,
            aborted_txns=tuple(self.aborted_txns),
        )


def _max_timestamp(entries: list[ShallowEntry]) -> tuple[int, int]:
    """(max timestamp, last offset of the first shallow entry holding it), as LogValidator."""
    largest, offset = -1, -1  # NO_TIMESTAMP; no entry yet
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
        active.append(data, entries)
        self._track_transactions(active, entries)
        self._next_offset = entries[-1].last_offset + 1

    def close(self) -> list[SegmentContent]:
        """Finish the active segment (as a clean shutdown does) and return all segments."""
        if self._active is None:
            base = self._start_offset if self._start_offset is not None else 0
            self._active = self._new_segment(base)
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
            self._active = self._new_segment(base)
            return self._active
        params = RollParams(
            max_segment_ms=NEVER_MS,
            max_segment_bytes=self._segment_bytes,
            max_timestamp_in_messages=_max_timestamp(entries)[0],
            max_offset_in_messages=entries[-1].last_offset,
            messages_size=len(data),
            now_ms=0,
        )
        if roll or roll_base is not None or active.state.should_roll(params):
            self._finished.append(active.finish())
            active = self._new_segment(roll_base if roll_base is not None else first)
            self._active = active
        return active

    def _new_segment(self, base_offset: int) -> _ActiveSegment:
        return _ActiveSegment(SegmentState(base_offset, index_interval_bytes=self._interval))

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
