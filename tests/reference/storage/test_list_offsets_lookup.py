"""ListOffsets lookups (kafka-facts 2.1; UnifiedLog.fetchOffsetByTimestamp, LogSegment).

The log is the golden delete-records p0 (offsets 16..39); record timestamps
come from case.json's delivery reports, which are what Kafka stored.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.log_reads import (
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    IsolationLevel,
    fetch_offset_by_timestamp,
    offset_for_timestamp,
)
from lethe_reference.storage.segment_reads import TimestampAndOffset
from lethe_reference.storage.settings import StorageSettings
from storage_support import case_json, client_batch, delrec_log

STAMPS = {
    report["offset"]: report["timestamp"]
    for step in case_json("delete-records")["steps"]
    if step["op"] == "produce"
    for report in step["delivery_reports"]
    if report["partition"] == 0
}


def _first_at_or_after(target: int, start: int) -> int:
    """kafka-facts 2.1: the first record with timestamp >= target and offset >= start."""
    return min(o for o, ts in STAMPS.items() if ts >= target and o >= start)


@pytest.fixture
def log(tmp_path: Path, clock: ManualClock) -> PartitionLog:
    return delrec_log(tmp_path, 0, clock)


@pytest.mark.parametrize("offset", [16, 20, 26, 27, 28, 33, 39])
def test_a_timestamp_finds_the_first_record_at_or_after_it(log: PartitionLog, offset: int) -> None:
    target = STAMPS[offset]
    expected = _first_at_or_after(target, 16)
    found = offset_for_timestamp(log, target)
    assert found == TimestampAndOffset(STAMPS[expected], expected, 0)


def test_the_search_starts_at_the_log_start_offset(log: PartitionLog) -> None:
    log.maybe_increment_log_start_offset(19, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    found = offset_for_timestamp(log, 0)
    assert found is not None and found.offset == 19


def test_no_record_that_late_gives_no_offset(log: PartitionLog) -> None:
    assert offset_for_timestamp(log, max(STAMPS.values()) + 1) is None


def test_answers_at_or_past_the_high_watermark_are_dropped(log: PartitionLog) -> None:
    log.update_high_watermark(27)
    assert offset_for_timestamp(log, STAMPS[27]) is None
    assert offset_for_timestamp(log, MAX_TIMESTAMP) is None  # 27 holds the max timestamp
    replica = offset_for_timestamp(log, STAMPS[27], isolation=None)
    assert replica is not None and replica.offset == 27


def test_max_timestamp_is_the_first_record_with_the_largest_timestamp(log: PartitionLog) -> None:
    best = max((o for o in STAMPS if o >= 16), key=lambda o: (STAMPS[o], -o))
    assert offset_for_timestamp(log, MAX_TIMESTAMP) == TimestampAndOffset(STAMPS[best], best, 0)


def test_latest_is_the_last_fetchable_offset_per_isolation(log: PartitionLog) -> None:
    log.update_high_watermark(30)
    assert offset_for_timestamp(log, LATEST_TIMESTAMP, leader_epoch=4) == (-1, 30, 4)
    committed = offset_for_timestamp(log, LATEST_TIMESTAMP, isolation=IsolationLevel.READ_COMMITTED)
    assert committed == (-1, 30, 0)
    assert offset_for_timestamp(log, LATEST_TIMESTAMP, isolation=None) == (-1, 40, 0)


def test_earliest_is_the_log_start_offset_with_the_earliest_epoch(log: PartitionLog) -> None:
    assert offset_for_timestamp(log, EARLIEST_TIMESTAMP) == (-1, 16, 0)


def test_earliest_has_no_epoch_when_no_batch_carried_one(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = PartitionLog.create(tmp_path / "t-0", StorageSettings(), clock=clock, durable=False)
    log.append_as_leader(client_batch([clock.now_ms()]), leader_epoch=-1)
    assert offset_for_timestamp(log, EARLIEST_TIMESTAMP) == (-1, 0, None)


def test_latest_tiered_without_tiered_storage(log: PartitionLog) -> None:
    assert offset_for_timestamp(log, LATEST_TIERED_TIMESTAMP) == (-1, -1, -1)
    with pytest.raises(ValueError):
        fetch_offset_by_timestamp(log, -6)


def test_a_segment_without_timestamps_is_judged_by_its_mtime(
    tmp_path: Path, clock: ManualClock
) -> None:
    """LogSegment.largestTimestamp falls back to the file's mtime; the first segment
    whose "largest timestamp" reaches the target is searched, and only that one."""
    settings = StorageSettings(segment_bytes=100)
    log = PartitionLog.create(tmp_path / "t-0", settings, clock=clock, durable=False)
    log.append_as_leader(client_batch([-1]), leader_epoch=0)  # offset 0, no timestamp
    log.append_as_leader(client_batch([5000]), leader_epoch=0)  # offset 1, new segment
    log.update_high_watermark(2)
    first = log.segments.get(0)
    assert first is not None
    os.utime(first.log.path, ns=(3_000_000_000, 3_000_000_000))  # mtime 3000 ms
    assert offset_for_timestamp(log, 4000) == (5000, 1, 0)
    assert offset_for_timestamp(log, 2000) is None  # segment 0 chosen: no timestamp inside
