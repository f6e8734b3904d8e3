"""The cleaner inside the broker: its task, log.cleaner.enable, retention of compacted logs.

kafka-facts 1.3 (who runs segment deletion), 3.6 (roll), 4.1 and 4.5
(log.cleaner.enable, log.cleaner.backoff.ms); catalog KIP534-CFG-3,
KIP534-CLN-6, KIP107-SEG-2, KIP107-SEG-3.
"""

from __future__ import annotations

from pathlib import Path

from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.cleaner import CLEANER_CHECKPOINT_FILE
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog

START = 1_800_000_000_000
TASK = "kafka-log-cleaner-thread-0"


def _broker(tmp_path: Path, clock: ManualClock, **static: str) -> Broker:
    broker = Broker(tmp_path, config=BrokerConfig(static), clock=clock, durable=False)
    broker.startup()
    return broker


def _append(log: PartitionLog, key: bytes, ts: int) -> None:
    spec = RecordSpec(key, b"v", timestamp=ts)
    log.append_as_follower(build_batch([spec], base_offset=log.log_end_offset))
    log.update_high_watermark(log.log_end_offset)


def _dirty_compacted(broker: Broker, name: str = "c", **configs: str) -> PartitionLog:
    broker.create_topic(name, 1, {"cleanup.policy": "compact"} | configs)
    log = broker.log(name, 0)
    assert log is not None
    _append(log, b"k", START)
    _append(log, b"k", START)
    log.roll()
    _append(log, b"other", START)
    return log


def test_cleaner_task_runs_every_backoff_by_default(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = _broker(tmp_path, clock)
    periods = {t.name: t.period_ms for t in broker.scheduler.tasks()}
    assert periods[TASK] == 15000  # log.cleaner.backoff.ms default
    assert (tmp_path / CLEANER_CHECKPOINT_FILE).read_bytes() == b""  # created empty
    log = _dirty_compacted(broker)
    clock.advance(15000)
    assert TASK in broker.run_due()
    assert (tmp_path / CLEANER_CHECKPOINT_FILE).read_text() == "0\n1\nc 0 2\n"
    assert log.segments.base_offsets == [0, 2]


def test_no_cleaner_when_log_cleaner_enable_is_false(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = _broker(tmp_path, clock, **{"log.cleaner.enable": "false"})
    assert TASK not in {t.name for t in broker.scheduler.tasks()}
    assert not (tmp_path / CLEANER_CHECKPOINT_FILE).exists()
    _dirty_compacted(broker)
    assert broker.cleaner.clean_now() == 0


def test_backoff_is_configurable(tmp_path: Path) -> None:
    broker = _broker(tmp_path, ManualClock(START), **{"log.cleaner.backoff.ms": "1000"})
    assert {t.name: t.period_ms for t in broker.scheduler.tasks()}[TASK] == 1000


def test_clean_now_ignores_the_backoff(tmp_path: Path) -> None:
    broker = _broker(tmp_path, ManualClock(START))
    _dirty_compacted(broker)
    assert broker.cleaner.clean_now() == 1


def test_compacted_log_start_offset_breach_is_the_cleaners_job(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = _broker(tmp_path, clock)
    log = _dirty_compacted(broker)
    log.roll()
    log.maybe_increment_log_start_offset(2, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    # kafka-log-retention leaves compacted logs alone (LogManager.cleanupLogs)
    assert broker.log_manager.cleanup_logs() == 0
    assert log.segments.base_offsets[0] == 0
    # the cleaner thread's deleteOldSegments applies the log start offset rule (SEG-2)
    assert broker.cleaner.delete_old_segments() == 1
    assert log.segments.base_offsets[0] == 2


def test_compact_delete_topic_gets_time_retention_from_the_cleaner(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = _broker(tmp_path, clock)
    log = _dirty_compacted(
        broker, "cd", **{"cleanup.policy": "compact,delete", "retention.ms": "1000"}
    )
    log.roll()
    clock.advance(1001)
    assert broker.log_manager.cleanup_logs() == 0
    assert broker.cleaner.delete_old_segments() >= 1
    assert log.segments.base_offsets[0] >= 2


def test_compacted_topic_rolls_after_max_compaction_lag(tmp_path: Path) -> None:
    broker = _broker(tmp_path, ManualClock(START))
    broker.create_topic("r", 1, {"cleanup.policy": "compact", "max.compaction.lag.ms": "100"})
    log = broker.log("r", 0)
    assert log is not None
    _append(log, b"a", START)
    _append(log, b"b", START + 100)  # waited 100: not > min(segment.ms, lag) = 100
    assert log.segments.base_offsets == [0]
    _append(log, b"c", START + 101)
    assert log.segments.base_offsets == [0, 2]


def test_deleted_topic_leaves_the_cleaner_checkpoint(tmp_path: Path) -> None:
    broker = _broker(tmp_path, ManualClock(START))
    _dirty_compacted(broker, "gone")
    _dirty_compacted(broker, "kept")
    assert broker.cleaner.clean_now() == 2
    broker.delete_topic("gone")
    assert (tmp_path / CLEANER_CHECKPOINT_FILE).read_text() == "0\n1\nkept 0 2\n"


def test_dynamic_backoff_change_requeues_the_cleaner_task(tmp_path: Path) -> None:
    broker = _broker(tmp_path, ManualClock(START))
    broker.set_config(
        broker.config.with_dynamic({"log.cleaner.backoff.ms": "2000"}, per_broker=False)
    )
    assert {t.name: t.period_ms for t in broker.scheduler.tasks()}[TASK] == 2000
