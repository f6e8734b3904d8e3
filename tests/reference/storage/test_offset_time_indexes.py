"""OffsetIndex / TimeIndex / SegmentState rules (kafka-facts 3.5, 3.6; Kafka's index classes)."""

from __future__ import annotations

import pytest
from lethe_formats.model import OffsetIndexEntry, TimeIndexEntry
from lethe_reference.storage.offset_index import OffsetIndex, OffsetPosition
from lethe_reference.storage.segment_state import NEVER_MS, RollParams, SegmentState
from lethe_reference.storage.time_index import TimeIndex, TimestampOffset


def test_offset_lookup_is_the_greatest_entry_at_or_below_the_target() -> None:
    index = OffsetIndex(100, entries=[OffsetIndexEntry(3, 120), OffsetIndexEntry(9, 480)])
    assert index.lookup(99) == OffsetPosition(100, 0)  # nothing indexed: (base, 0)
    assert index.lookup(102) == OffsetPosition(100, 0)
    assert index.lookup(103) == OffsetPosition(103, 120)
    assert index.lookup(108) == OffsetPosition(103, 120)
    assert index.lookup(10**12) == OffsetPosition(109, 480)


def test_offset_index_needs_strictly_increasing_offsets() -> None:
    index = OffsetIndex(0)
    index.append(5, 0)
    with pytest.raises(ValueError, match="no larger than the last offset"):
        index.append(5, 100)


def test_offset_index_is_full_at_segment_index_bytes_over_8() -> None:
    index = OffsetIndex(0, max_index_bytes=20)  # 2 entries (rounded down)
    index.append(1, 0)
    assert not index.is_full()
    index.append(2, 10)
    assert index.is_full()
    with pytest.raises(ValueError, match="full index"):
        index.append(3, 20)


def test_relative_offsets_must_fit_an_int32() -> None:
    index = OffsetIndex(10)
    assert index.can_append_offset(10 + 2**31 - 1)
    assert not index.can_append_offset(10 + 2**31)
    assert not index.can_append_offset(9)


def test_offset_index_truncation_drops_entries_at_or_above_the_offset() -> None:
    index = OffsetIndex(0, entries=[OffsetIndexEntry(3, 0), OffsetIndexEntry(7, 90)])
    index.truncate_to(7)
    assert index.entries == (OffsetIndexEntry(3, 0),)
    assert index.to_bytes() == (3).to_bytes(4, "big") + (0).to_bytes(4, "big")


def test_time_index_appends_only_greater_timestamps() -> None:
    index = TimeIndex(50)
    index.maybe_append(-1, 50)  # v0 data: nothing beats the empty index's (-1, base)
    assert len(index) == 0
    index.maybe_append(1000, 53)
    index.maybe_append(1000, 57)  # same timestamp: ignored
    index.maybe_append(2000, 57)
    assert index.entries == (TimeIndexEntry(1000, 3), TimeIndexEntry(2000, 7))
    with pytest.raises(ValueError):
        index.maybe_append(1500, 60)  # a smaller timestamp is a programming error


def test_time_index_lookup_and_empty_last_entry() -> None:
    index = TimeIndex(50, entries=[TimeIndexEntry(1000, 3), TimeIndexEntry(2000, 7)])
    assert index.lookup(999) == TimestampOffset(-1, 50)
    assert index.lookup(1999) == TimestampOffset(1000, 53)
    assert index.lookup(2000) == TimestampOffset(2000, 57)
    assert TimeIndex(50).last_entry == TimestampOffset(-1, 50)


def test_time_index_keeps_its_last_slot_for_the_roll_entry() -> None:
    index = TimeIndex(0, max_index_bytes=36)  # 3 slots: full at 2 entries
    index.maybe_append(1, 1)
    index.maybe_append(2, 2)
    assert index.is_full()
    with pytest.raises(ValueError, match="full time index"):
        index.maybe_append(3, 3)
    index.maybe_append(3, 3, skip_full_check=True)
    assert len(index) == 3


def _append(state: SegmentState, size: int, last: int, ts: int) -> int:
    return state.on_append(
        size, largest_offset=last, largest_timestamp=ts, shallow_offset_of_max_timestamp=last
    )


def test_index_entry_after_more_than_index_interval_bytes() -> None:
    """An entry keyed by the append's last offset, at the append's start position."""
    state = SegmentState(0, index_interval_bytes=100)
    _append(state, 100, 3, 10)  # 0 bytes before: no entry
    _append(state, 100, 7, 20)  # 100 bytes before: not more than 100
    assert len(state.offset_index) == 0
    state = SegmentState(0, index_interval_bytes=99)
    _append(state, 100, 3, 10)
    assert _append(state, 100, 7, 20) == 100
    assert state.offset_index.entries == (OffsetIndexEntry(7, 100),)
    assert state.time_index.entries == (TimeIndexEntry(20, 7),)


def test_time_index_entry_is_the_max_timestamp_so_far_not_the_appends() -> None:
    state = SegmentState(0, index_interval_bytes=0)
    _append(state, 10, 0, 500)
    _append(state, 10, 1, 100)  # entry: max so far (500 at offset 0)
    assert state.time_index.entries == (TimeIndexEntry(500, 0),)
    state.become_inactive()
    assert state.time_index.entries == (TimeIndexEntry(500, 0),)  # no greater timestamp


def test_final_time_index_entry_when_the_segment_becomes_inactive() -> None:
    state = SegmentState(0, index_interval_bytes=4096)
    _append(state, 10, 0, 500)
    assert len(state.time_index) == 0
    state.become_inactive()
    assert state.time_index.entries == (TimeIndexEntry(500, 0),)


def _params(
    size: int,
    *,
    ts: int = 0,
    last: int = 0,
    now: int = 0,
    segment_ms: int = NEVER_MS,
    segment_bytes: int = 1000,
) -> RollParams:
    return RollParams(segment_ms, segment_bytes, ts, last, size, now)


def test_size_roll_only_when_size_exceeds_segment_bytes_minus_the_append() -> None:
    state = SegmentState(0, index_interval_bytes=4096)
    _append(state, 600, 0, 0)
    assert not state.should_roll(_params(400))  # 600 > 1000 - 400 is false: exact fit stays
    assert state.should_roll(_params(401))


def test_time_roll_uses_the_first_batch_timestamp_and_the_jitter() -> None:
    state = SegmentState(0, index_interval_bytes=4096, roll_jitter_ms=100)
    assert not state.should_roll(_params(1, ts=10**9, segment_ms=1000))  # empty: never by time
    _append(state, 10, 0, 5000)
    assert not state.should_roll(_params(1, ts=5900, segment_ms=1000))  # 900 > 900 is false
    assert state.should_roll(_params(1, ts=5901, segment_ms=1000))


def test_time_roll_without_timestamps_uses_wall_clock_since_creation() -> None:
    state = SegmentState(0, index_interval_bytes=4096, created_ms=1000)
    _append(state, 10, 0, -1)
    assert not state.should_roll(_params(1, ts=-1, now=2000, segment_ms=1000))
    assert state.should_roll(_params(1, ts=-1, now=2001, segment_ms=1000))


def test_roll_when_the_last_offset_cannot_be_relative() -> None:
    state = SegmentState(0, index_interval_bytes=4096)
    assert not state.should_roll(_params(1, last=2**31 - 1))
    assert state.should_roll(_params(1, last=2**31))
