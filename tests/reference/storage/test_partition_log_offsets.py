"""High watermark and log start offset rules (kafka-facts 1.2, 1.5; UnifiedLog)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.storage.errors import OffsetOutOfRangeError
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.log_manager import LogManager
from lethe_reference.storage.settings import StorageSettings
from storage_support import client_batch, delrec_log

DELETE = LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION


def test_the_high_watermark_is_clamped_between_log_start_and_log_end(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = delrec_log(tmp_path, 0, clock)  # offsets 16..39
    assert log.update_high_watermark(100) == 40
    assert log.update_high_watermark(3) == 16
    assert log.update_high_watermark(30) == 30


def test_appends_do_not_move_the_high_watermark(tmp_path: Path, clock: ManualClock) -> None:
    """The partition layer drives it (single broker: to the LEO after the append)."""
    log = PartitionLog.create(tmp_path / "t-0", StorageSettings(), clock=clock, durable=False)
    result = log.append_as_leader(client_batch([clock.now_ms()] * 2), leader_epoch=3)
    assert (result.first_offset, result.last_offset, result.log_append_time) == (0, 1, -1)
    assert (log.log_end_offset, log.high_watermark) == (2, 0)
    assert log.maybe_increment_high_watermark(2)
    assert not log.maybe_increment_high_watermark(1)
    with pytest.raises(ValueError):
        log.maybe_increment_high_watermark(3)


def test_log_start_offset_above_the_high_watermark_is_offset_out_of_range(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = delrec_log(tmp_path, 0, clock)
    log.update_high_watermark(30)
    with pytest.raises(OffsetOutOfRangeError):
        log.maybe_increment_log_start_offset(31, DELETE)
    assert log.maybe_increment_log_start_offset(30, DELETE)  # == HW is allowed
    assert log.log_start_offset == 30


def test_a_lower_or_equal_log_start_offset_is_a_no_op(tmp_path: Path, clock: ManualClock) -> None:
    log = delrec_log(tmp_path, 0, clock)
    assert log.maybe_increment_log_start_offset(19, DELETE)
    assert not log.maybe_increment_log_start_offset(19, DELETE)
    assert not log.maybe_increment_log_start_offset(2, DELETE)
    assert log.log_start_offset == 19


def test_moving_the_log_start_offset_lifts_the_recovery_point_and_the_epoch_start(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = delrec_log(tmp_path, 0, clock)
    assert log.recovery_point == 32  # flushed up to the last roll
    log.maybe_increment_log_start_offset(35, DELETE)
    assert log.recovery_point == 35
    assert log.epoch_cache.entries == ((0, 35),)
    assert (log.directory / "leader-epoch-checkpoint").read_text() == "0\n1\n0 35\n"


def test_the_log_start_offset_reaches_disk_only_with_the_periodic_checkpoint(
    tmp_path: Path, clock: ManualClock
) -> None:
    """kafka-facts 1.5: DeleteRecords is not checkpointed at once."""
    manager = LogManager(
        tmp_path, clock=clock, settings_for=lambda _t: StorageSettings(), durable=False
    )
    manager.startup()
    log = manager.create_log("t", 0)
    for _ in range(3):
        log.append_as_leader(client_batch([clock.now_ms()]), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)
    manager.checkpoint_log_start_offsets()
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    log.maybe_increment_log_start_offset(2, DELETE)
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    manager.checkpoint_log_start_offsets()
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n1\nt 0 2\n"
