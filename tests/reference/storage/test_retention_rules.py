"""Time, size and log-start-offset retention (kafka-facts 1.3, 5; UnifiedLog.deleteOldSegments).

Each test log holds one single-record batch per segment (segment.bytes equals
one batch), so segment i holds offset i; the last segment is the active one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.retention.pending import PendingDeletions
from lethe_reference.retention.policies import delete_old_segments
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.settings import StorageSettings
from storage_support import client_batch

DAY = 86_400_000
BATCH = len(client_batch([0]))


def _log(
    tmp_path: Path, clock: ManualClock, timestamps: list[int], **settings: object
) -> PartitionLog:
    config = StorageSettings(segment_bytes=BATCH, **settings)  # type: ignore[arg-type]
    log = PartitionLog.create(
        tmp_path / "t-0", config, clock=clock, deleter=PendingDeletions(), durable=False
    )
    for ts in timestamps:
        log.append_as_leader(client_batch([ts]), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)
    assert log.segments.base_offsets == list(range(len(timestamps)))
    return log


def test_retention_ms_deletes_only_segments_strictly_older(
    tmp_path: Path, clock: ManualClock
) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [now - DAY, now - DAY + 1, now], retention_ms=DAY)
    assert delete_old_segments(log) == 0  # now - ts == retention.ms: kept
    clock.advance(1)
    assert delete_old_segments(log) == 1  # now - ts > retention.ms
    assert log.segments.base_offsets == [1, 2]
    assert log.log_start_offset == 1


def test_retention_deletes_a_prefix_only(tmp_path: Path, clock: ManualClock) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [now - 2 * DAY, now, now - 2 * DAY, now], retention_ms=DAY)
    delete_old_segments(log)
    assert log.segments.base_offsets == [1, 2, 3]


def test_an_expired_active_segment_is_replaced_by_a_new_empty_one(
    tmp_path: Path, clock: ManualClock
) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [now - 2 * DAY, now - 2 * DAY], retention_ms=DAY)
    assert delete_old_segments(log) == 2
    assert log.segments.base_offsets == [2]
    assert (log.log_start_offset, log.log_end_offset, log.active_segment.size) == (2, 2, 0)
    assert delete_old_segments(log) == 0  # an empty last segment is never deleted


def test_segments_above_the_high_watermark_are_kept(tmp_path: Path, clock: ManualClock) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [now - 2 * DAY] * 3, retention_ms=DAY)
    log.update_high_watermark(1)  # segment 0 ends at 1 (<= HW); segment 1 ends at 2 (> HW)
    delete_old_segments(log)
    assert log.segments.base_offsets == [1, 2]


def test_retention_bytes_keeps_at_least_retention_bytes(tmp_path: Path, clock: ManualClock) -> None:
    now = clock.now_ms()
    for retention, remaining in [
        (2 * BATCH, [1, 2]),  # diff = 1 batch: one segment goes
        (2 * BATCH + 1, [0, 1, 2]),  # diff < one segment: nothing
        (3 * BATCH, [0, 1, 2]),  # size == retention.bytes: nothing
        (BATCH - 1, [2]),  # diff > 2 batches: two go, the active one stays
        (-1, [0, 1, 2]),
    ]:
        directory = tmp_path / str(retention)
        log = _log(directory, clock, [now] * 3, retention_bytes=retention)
        delete_old_segments(log)
        assert log.segments.base_offsets == remaining, retention


def test_segments_without_timestamps_age_by_file_mtime(tmp_path: Path, clock: ManualClock) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [-1, -1, now], retention_ms=DAY)
    for base, age in ((0, DAY + 1), (1, DAY)):
        segment = log.segments.get(base)
        assert segment is not None
        mtime_ns = (now - age) * 1_000_000
        os.utime(segment.log.path, ns=(mtime_ns, mtime_ns))
    delete_old_segments(log)
    assert log.segments.base_offsets == [1, 2]


@pytest.mark.parametrize(
    ("policy", "remaining"), [(("compact",), [0, 1, 2]), (("compact", "delete"), [2])]
)
def test_retention_applies_only_with_the_delete_policy(
    tmp_path: Path, clock: ManualClock, policy: tuple[str, ...], remaining: list[int]
) -> None:
    now = clock.now_ms()
    log = _log(
        tmp_path, clock, [now - 2 * DAY] * 2 + [now], retention_ms=DAY, cleanup_policy=policy
    )
    delete_old_segments(log)
    assert log.segments.base_offsets == remaining


def test_log_start_offset_breach_applies_to_every_policy(
    tmp_path: Path, clock: ManualClock
) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [now] * 4, cleanup_policy=("compact",))
    log.maybe_increment_log_start_offset(2, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    delete_old_segments(log)
    assert log.segments.base_offsets == [2, 3]  # next base <= LSO: 0 and 1 go
    log.maybe_increment_log_start_offset(4, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    delete_old_segments(log)
    assert log.segments.base_offsets == [3]  # the last segment has no next segment


def test_deleted_files_wait_for_file_delete_delay_ms(tmp_path: Path, clock: ManualClock) -> None:
    now = clock.now_ms()
    log = _log(tmp_path, clock, [now - 2 * DAY, now], retention_ms=DAY, file_delete_delay_ms=500)
    delete_old_segments(log)
    pending = log.deleter
    assert isinstance(pending, PendingDeletions)
    assert pending.next_due_ms() == now + 500
    names = sorted(p.name for p in pending.pending_files())
    assert names == [f"{0:020d}.{kind}.deleted" for kind in ("index", "log", "timeindex")]
    assert pending.delete_due_files(now + 499) == []
    assert len(pending.delete_due_files(now + 500)) == 3
    assert not list(log.directory.glob("*.deleted"))
