"""Choosing and guarding logs on real files: ratio, lags, LSO, checkpoint, corruption, crashes.

Rules from kafka-facts 4.1 (LogCleanerManager) and 1.4 (cleaner checkpoint);
catalog KIP534-CLN-1/2/5, KIP534-CKP-1/2, KIP534-TXN-9.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.storage.checkpoint import read_offset_checkpoint, write_offset_checkpoint
from lethe_reference.cleaner import CLEANER_CHECKPOINT_FILE, LogCleaner
from lethe_reference.cleaner.algorithm import CleanParams, clean_log
from lethe_reference.cleaner.logview import source_segments
from lethe_reference.cleaner.swap import write_cleaned_segment
from lethe_reference.clock import ManualClock
from lethe_reference.config.log_config import effective_log_config
from lethe_reference.server.defaults import broker_config
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.log_manager import LogManager

T0 = 1_800_000_000_000
KEY = ("t", 0)


def _manager(log_dir: Path, clock: ManualClock, **topic: str) -> LogManager:
    config = broker_config()
    overrides = {"cleanup.policy": "compact", "file.delete.delay.ms": "1000"} | {
        k.replace("_", "."): v for k, v in topic.items()
    }
    manager = LogManager(
        log_dir, clock=clock, settings_for=lambda _t: effective_log_config(overrides, config)
    )
    manager.startup()
    return manager


def _append(log: PartitionLog, key: bytes, value: bytes | None, ts: int, **kw: object) -> None:
    spec = RecordSpec(key, value, timestamp=ts)
    log.append_as_follower(build_batch([spec], base_offset=log.log_end_offset, **kw))  # type: ignore[arg-type]


def _filled(manager: LogManager, ts: int = T0) -> PartitionLog:
    """Segments [0: a=1, b=1] [2: a=2] [3: active, c=1]; HW at the LEO."""
    log = manager.create_log(*KEY)
    _append(log, b"a", b"1", ts)
    _append(log, b"b", b"1", ts)
    log.roll()
    _append(log, b"a", b"2", ts)
    log.roll()
    _append(log, b"c", b"1", ts)
    log.update_high_watermark(log.log_end_offset)
    return log


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0 + 10)


def test_dirty_log_is_cleaned_and_checkpointed(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    _filled(manager)
    cleaner = LogCleaner(manager, broker_config())
    assert cleaner.clean_now() == 1
    checkpoint = read_offset_checkpoint(tmp_path / CLEANER_CHECKPOINT_FILE)
    # end offset = the active segment's base (KIP534-CKP-1)
    assert checkpoint.as_dict() == {KEY: 3}


def test_ratio_must_be_strictly_greater_than_min_ratio(tmp_path: Path, clock: ManualClock) -> None:
    # a never-cleaned log has ratio 1.0: not > 1.0
    manager = _manager(tmp_path, clock, min_cleanable_dirty_ratio="1.0")
    _filled(manager)
    assert LogCleaner(manager, broker_config()).clean_now() == 0


def test_max_compaction_lag_breach_cleans_below_the_ratio(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock, min_cleanable_dirty_ratio="1.0", max_compaction_lag_ms="5")
    _filled(manager, ts=T0)  # first batch timestamp T0 < now (T0 + 10) - 5
    assert LogCleaner(manager, broker_config()).clean_now() == 1


def test_max_compaction_lag_not_breached_at_the_limit(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock, min_cleanable_dirty_ratio="1.0", max_compaction_lag_ms="10")
    _filled(manager, ts=T0)  # T0 is not < (T0 + 10) - 10
    assert LogCleaner(manager, broker_config()).clean_now() == 0


def test_min_compaction_lag_holds_back_young_segments(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock, min_compaction_lag_ms="10")
    log = _filled(manager, ts=T0 + 1)  # largest timestamp T0 + 1 > now - lag = T0
    cleaner = LogCleaner(manager, broker_config())
    candidate = cleaner.manager.log_to_clean(KEY, log, None, clock.now_ms())
    assert candidate.first_uncleanable_offset == 0
    assert cleaner.clean_now() == 0


def test_open_transaction_bounds_the_cleanable_range(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    log = manager.create_log(*KEY)
    _append(log, b"a", b"1", T0)
    log.roll()
    # a transactional batch with no marker yet: the LSO is its first offset (1)
    _append(
        log, b"a", b"2", T0, producer_id=5, producer_epoch=0, base_sequence=0, is_transactional=True
    )
    log.roll()
    _append(log, b"b", b"1", T0)
    log.update_high_watermark(log.log_end_offset)
    candidate = LogCleaner(manager, broker_config()).manager.log_to_clean(KEY, log, None, T0)
    assert candidate.first_uncleanable_offset == 1


def test_checkpoint_above_log_end_is_reset_and_rewritten(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock)
    log = _filled(manager)
    write_offset_checkpoint(tmp_path / CLEANER_CHECKPOINT_FILE, [("t", 0, 99)])
    cleaner = LogCleaner(manager, broker_config())
    candidate = cleaner.manager.log_to_clean(KEY, log, 99, clock.now_ms())
    assert candidate.first_dirty_offset == 0
    assert read_offset_checkpoint(tmp_path / CLEANER_CHECKPOINT_FILE).as_dict() == {KEY: 0}


def test_checkpoint_below_log_start_is_reset(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    log = _filled(manager)
    log.maybe_increment_log_start_offset(2, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    cleaner = LogCleaner(manager, broker_config())
    candidate = cleaner.manager.log_to_clean(KEY, log, 1, clock.now_ms())
    assert candidate.first_dirty_offset == 2
    assert read_offset_checkpoint(tmp_path / CLEANER_CHECKPOINT_FILE).as_dict() == {KEY: 2}


def test_unreadable_checkpoint_counts_as_empty(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    _filled(manager)
    (tmp_path / CLEANER_CHECKPOINT_FILE).write_text("0\n2\nt 0 1\n")  # count mismatch
    cleaner = LogCleaner(manager, broker_config())
    assert cleaner.manager.read_checkpoints() == {}
    assert cleaner.clean_now() == 1


def test_filthiest_log_comes_first(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock, min_cleanable_dirty_ratio="0.01")
    _filled(manager)
    other = manager.create_log("u", 0)
    _append(other, b"x", b"1", T0)
    other.roll()
    _append(other, b"y", b"1", T0)
    other.update_high_watermark(other.log_end_offset)
    # t cleaned up to 2: ratio = size(segment 2) / (size(0) + size(2)) < 1; u never: 1.0
    write_offset_checkpoint(tmp_path / CLEANER_CHECKPOINT_FILE, [("t", 0, 2)])
    found = LogCleaner(manager, broker_config()).manager.cleanable_logs(clock.now_ms())
    assert [c.topic_partition for c in found] == [("u", 0), KEY]
    assert found[0].cleanable_ratio == 1.0 > found[1].cleanable_ratio


@pytest.mark.parametrize(
    ("flip", "where"),
    [
        (-3, "position 87 (crc)"),  # a value byte of the 2nd batch (at 70): CRC mismatch
        (70, "position 70 (baseOffset)"),  # the 2nd batch's baseOffset, not under the CRC
    ],
)
def test_corrupt_segment_marks_the_log_uncleanable(
    tmp_path: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture, flip: int, where: str
) -> None:
    manager = _manager(tmp_path, clock)
    log = _filled(manager)
    path = log.directory / "00000000000000000000.log"
    data = bytearray(path.read_bytes())
    data[flip] ^= 0xFF
    path.write_bytes(bytes(data))
    cleaner = LogCleaner(manager, broker_config())
    with caplog.at_level(logging.ERROR, logger="lethe_reference.cleaner"):
        assert cleaner.clean_now() == 0
    assert KEY in cleaner.manager.uncleanable
    assert f"{path} {where}" in caplog.text
    assert path.read_bytes() == bytes(data)  # nothing rewritten, nothing lost
    assert not list(log.directory.glob("*.cleaned")) and not list(log.directory.glob("*.deleted"))
    assert log.segments.base_offsets == [0, 2, 3]
    assert cleaner.clean_now() == 0  # skipped from now on


def _first_round(log: PartitionLog, now: int) -> object:
    params = CleanParams(0, 3, now, 86400000, 1 << 30, 10 << 20, 4096, 1048588)
    return clean_log(source_segments(log), params).segments[0]


def test_crash_before_swap_keeps_the_old_segments(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    log = _filled(manager)
    before = {p.name: p.read_bytes() for p in log.directory.glob("*.log")}
    write_cleaned_segment(log, _first_round(log, clock.now_ms()))  # type: ignore[arg-type]
    assert list(log.directory.glob("*.log.cleaned"))
    log.close()
    reloaded = _manager(tmp_path, clock).get_log(*KEY)
    assert reloaded is not None
    assert not list(reloaded.directory.glob("*.cleaned"))
    assert {p.name: p.read_bytes() for p in reloaded.directory.glob("*.log")} == before


def test_crash_after_rename_to_swap_completes_the_swap(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    log = _filled(manager)
    cleaned = _first_round(log, clock.now_ms())
    new = write_cleaned_segment(log, cleaned)  # type: ignore[arg-type]
    new.change_file_suffixes(".cleaned", ".swap")
    log.close()
    new.log.close()
    reloaded = _manager(tmp_path, clock).get_log(*KEY)
    assert reloaded is not None
    assert reloaded.segments.base_offsets == [0, 3]
    assert (reloaded.directory / "00000000000000000000.log").read_bytes() == cleaned.log  # type: ignore[attr-defined]
    assert not list(reloaded.directory.glob("*.swap"))
    assert not (reloaded.directory / "00000000000000000002.log").exists()


def test_groups_over_segment_bytes_become_separate_cleaned_segments(
    tmp_path: Path, clock: ManualClock
) -> None:
    # each 1-record segment is ~70 bytes; segment.bytes 150 puts at most two in a group
    manager = _manager(tmp_path, clock, segment_bytes="150")
    log = manager.create_log(*KEY)
    for index, key in enumerate([b"a", b"b", b"c", b"d", b"e"]):
        _append(log, key, b"1", T0 + index)
        log.roll()
    log.update_high_watermark(log.log_end_offset)
    assert log.segments.base_offsets == [0, 1, 2, 3, 4, 5]
    assert LogCleaner(manager, broker_config()).clean_now() == 1
    assert log.segments.base_offsets == [0, 2, 4, 5]
    names = sorted(p.name for p in log.directory.glob("*.log"))
    assert names == [f"{b:020d}.log" for b in (0, 2, 4, 5)]
    deleted = sorted(p.name for p in log.directory.glob("*.log.deleted"))
    assert deleted == [f"{b:020d}.log.deleted" for b in (0, 1, 2, 3, 4)]
