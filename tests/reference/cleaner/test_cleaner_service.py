"""The broker-side cleaner on real files: choice, swap, checkpoint, golden bytes on disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from cleaner_support import (
    GOLDEN,
    PASS1_NOW_MS,
    PASS2_NOW_MS,
    TOPIC,
    copy_capture,
    golden_topic_overrides,
    partition_dir,
)
from lethe_reference.cleaner import CLEANER_CHECKPOINT_FILE, LogCleaner
from lethe_reference.clock import ManualClock
from lethe_reference.config.log_config import effective_log_config
from lethe_reference.server.defaults import broker_config
from lethe_reference.storage.log_manager import LogManager

SEGMENT_FILES = [".log", ".index", ".timeindex"]


def _cleaner(
    log_dir: Path, now: int, overrides: dict[str, str] | None = None, *, base: bool = True
) -> LogCleaner:
    clock = ManualClock(now)
    config = broker_config()
    topic = (golden_topic_overrides() if base else {}) | (overrides or {})
    manager = LogManager(
        log_dir, clock=clock, settings_for=lambda _t: effective_log_config(topic, config)
    )
    manager.startup()
    return LogCleaner(manager, config)


@pytest.fixture
def pass0_cleaner(tmp_path: Path) -> LogCleaner:
    copy_capture("pass0", tmp_path / "logs")
    return _cleaner(tmp_path / "logs", PASS1_NOW_MS)


def test_clean_now_cleans_the_golden_log_once(pass0_cleaner: LogCleaner) -> None:
    assert pass0_cleaner.clean_now() == 1
    # nothing dirty is left below the active segment: a second call cleans nothing
    assert pass0_cleaner.clean_now() == 0


@pytest.mark.parametrize("suffix", SEGMENT_FILES)
def test_cleaned_segment_on_disk_is_kafkas(pass0_cleaner: LogCleaner, suffix: str) -> None:
    pass0_cleaner.clean_now()
    directory = pass0_cleaner.log_manager.log_dir / f"{TOPIC}-0"
    name = f"00000000000000000000{suffix}"
    assert (directory / name).read_bytes() == (partition_dir("pass1") / name).read_bytes()


def test_cleaner_checkpoint_file_is_kafkas(pass0_cleaner: LogCleaner) -> None:
    pass0_cleaner.clean_now()
    written = (pass0_cleaner.log_manager.log_dir / CLEANER_CHECKPOINT_FILE).read_bytes()
    assert written == (GOLDEN / "pass1" / CLEANER_CHECKPOINT_FILE).read_bytes()


def test_replaced_segments_wait_as_deleted_files(pass0_cleaner: LogCleaner) -> None:
    pass0_cleaner.clean_now()
    directory = pass0_cleaner.log_manager.log_dir / f"{TOPIC}-0"
    logs = sorted(p.name for p in directory.glob("*.log*"))
    # Kafka's pass1 keeps 0 and 15; the five replaced .log files wait for file.delete.delay.ms
    assert [n for n in logs if n.endswith(".log")] == [
        "00000000000000000000.log",
        "00000000000000000015.log",
    ]
    deleted = [n for n in logs if n.endswith(".log.deleted")]
    assert deleted == [f"{b:020d}.log.deleted" for b in (0, 4, 7, 10, 13)]
    assert not list(directory.glob("*.cleaned")) and not list(directory.glob("*.swap"))
    log = pass0_cleaner.log_manager.logs[(TOPIC, 0)]
    assert log.segments.base_offsets == [0, 15]


def test_snapshots_of_removed_segments_go_as_in_kafkas_pass1(pass0_cleaner: LogCleaner) -> None:
    pass0_cleaner.clean_now()
    directory = pass0_cleaner.log_manager.log_dir / f"{TOPIC}-0"
    # pass1 keeps the snapshots 15 and 16; those of the removed segments 4-13 wait as .deleted
    kafka = sorted(p.name for p in partition_dir("pass1").glob("*.snapshot"))
    assert sorted(p.name for p in directory.glob("*.snapshot")) == kafka
    waiting = sorted(p.name for p in directory.glob("*.snapshot.deleted"))
    assert waiting == [f"{b:020d}.snapshot.deleted" for b in (4, 7, 10, 13)]
    manager = pass0_cleaner.log_manager
    assert isinstance(manager.clock, ManualClock)
    manager.clock.advance(int(golden_topic_overrides()["file.delete.delay.ms"]))
    manager.delete_due_files()
    assert not list(directory.glob("*.snapshot.deleted"))


def test_deleted_files_go_after_file_delete_delay(pass0_cleaner: LogCleaner) -> None:
    pass0_cleaner.clean_now()
    manager = pass0_cleaner.log_manager
    clock = manager.clock
    assert isinstance(clock, ManualClock)
    clock.advance(int(golden_topic_overrides()["file.delete.delay.ms"]) - 1)
    assert manager.delete_due_files() == []
    clock.advance(1)
    assert manager.delete_due_files()
    assert not list((manager.log_dir / f"{TOPIC}-0").glob("*.deleted"))


def test_second_golden_cleaning_on_disk_is_kafkas(tmp_path: Path) -> None:
    """pass1 plus the two later rounds (as Kafka stored them), cleaned past the horizon."""
    copy_capture("pass1", tmp_path / "logs")
    cleaner = _cleaner(tmp_path / "logs", PASS2_NOW_MS)
    log = cleaner.log_manager.logs[(TOPIC, 0)]
    pass2 = partition_dir("pass2")
    head = (pass2 / "00000000000000000000.log").read_bytes()
    log.roll(16)
    log.append_as_follower(head[305 : 305 + 123])  # offsets 16-17, copied unchanged by Kafka
    log.roll(18)
    log.append_as_follower((pass2 / "00000000000000000018.log").read_bytes())
    log.update_high_watermark(log.log_end_offset)
    assert cleaner.clean_now() == 1
    directory = cleaner.log_manager.log_dir / f"{TOPIC}-0"
    for suffix in SEGMENT_FILES:
        name = f"00000000000000000000{suffix}"
        assert (directory / name).read_bytes() == (pass2 / name).read_bytes(), suffix
    checkpoint = cleaner.log_manager.log_dir / CLEANER_CHECKPOINT_FILE
    assert checkpoint.read_bytes() == (GOLDEN / "pass2" / CLEANER_CHECKPOINT_FILE).read_bytes()
    assert log.segments.base_offsets == [0, 18]


def test_first_golden_transaction_cleaning_on_disk_is_kafkas(tmp_path: Path) -> None:
    """golden/transactions pass0 -> pass1 through the broker-side cleaner: producer
    state and the aborted transaction come from the files; the cleaned .txnindex too."""
    import shutil

    source = GOLDEN.parent / "transactions" / "pass0"
    log_dir = tmp_path / "logs"
    shutil.copytree(source / "golden-txn-0", log_dir / "golden-txn-0")
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        shutil.copy2(source / name, log_dir / name)
    (log_dir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    # log-cleaner.log: the first cleaning began at 19:29:51,389 UTC
    configs = {"cleanup.policy": "compact", "delete.retention.ms": "5000"}  # case.json
    cleaner = _cleaner(
        log_dir, 1795289391389, configs | {"min.cleanable.dirty.ratio": "0.01"}, base=False
    )
    assert cleaner.clean_now() == 1
    expected = GOLDEN.parent / "transactions" / "pass1" / "golden-txn-0"
    for suffix in [*SEGMENT_FILES, ".txnindex"]:
        name = f"00000000000000000000{suffix}"
        assert (log_dir / "golden-txn-0" / name).read_bytes() == (expected / name).read_bytes()
    assert (log_dir / CLEANER_CHECKPOINT_FILE).read_text() == "0\n1\ngolden-txn 0 16\n"
