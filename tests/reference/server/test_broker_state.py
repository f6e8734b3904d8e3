"""The Broker state object: Kafka's periodic tasks, durable topics, clean shutdown."""

from __future__ import annotations

import json
from pathlib import Path

from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig

START = 1_700_000_000_000


def make(tmp_path: Path, clock: ManualClock, **static: str) -> Broker:
    broker = Broker(tmp_path, config=BrokerConfig(static), clock=clock, durable=False)
    broker.startup()
    return broker


def test_periodic_tasks_run_at_kafkas_default_intervals(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = make(tmp_path, clock)
    periods = {task.name: task.period_ms for task in broker.scheduler.tasks()}
    assert periods == {
        "highwatermark-checkpoint": 5000,
        "kafka-recovery-point-checkpoint": 60000,
        "kafka-log-start-offset-checkpoint": 60000,
        "kafka-log-retention": 300000,
        "kafka-log-cleaner-thread-0": 15000,  # log.cleaner.backoff.ms
        "PeriodicProducerExpirationCheck": 600000,  # producer.id.expiration.check.interval.ms
        # transaction.abort.timed.out.transaction.cleanup.interval.ms
        "transaction-abort": 10000,
        # transaction.remove.expired.transaction.cleanup.interval.ms
        "transactionalId-expiration": 3600000,
    }
    assert broker.next_due_ms() == START + 5000
    clock.advance(5000)
    assert broker.run_due() == ["highwatermark-checkpoint"]
    assert (tmp_path / "replication-offset-checkpoint").exists()
    clock.set(START + 30000)  # log.initial.task.delay.ms before the first retention pass
    assert "kafka-log-retention" in broker.run_due()


def test_configured_intervals_are_used(tmp_path: Path) -> None:
    broker = make(
        tmp_path,
        ManualClock(START),
        **{
            "log.retention.check.interval.ms": "1000",
            "replica.high.watermark.checkpoint.interval.ms": "250",
            "log.flush.scheduler.interval.ms": "2000",
        },
    )
    periods = {task.name: task.period_ms for task in broker.scheduler.tasks()}
    assert periods["kafka-log-retention"] == 1000
    assert periods["highwatermark-checkpoint"] == 250
    assert periods["kafka-log-flusher"] == 2000


def test_topics_survive_a_restart_with_ids_partitions_and_overrides(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = make(tmp_path, clock)
    info = broker.create_topic("t", 3, {"retention.ms": "1234"})
    broker.create_partitions("t", 4)
    cluster_id = broker.cluster_id
    broker.shutdown()
    assert (tmp_path / ".kafka_cleanshutdown").exists()
    again = make(tmp_path, clock)
    assert not (tmp_path / ".kafka_cleanshutdown").exists()
    assert again.log_manager.had_clean_shutdown
    restored = again.metadata.get("t")
    assert restored is not None
    assert (restored.topic_id, restored.partitions, dict(restored.configs)) == (
        info.topic_id,
        4,
        {"retention.ms": "1234"},
    )
    assert again.log("t", 3) is not None
    assert again.log("t", 0).settings.retention_ms == 1234
    assert again.cluster_id == cluster_id


def test_deleted_topic_directories_go_after_the_segment_delete_delay(tmp_path: Path) -> None:
    clock = ManualClock(START)
    broker = make(tmp_path, clock, **{"log.segment.delete.delay.ms": "1000"})
    broker.create_topic("t", 1)
    broker.delete_topic("t")
    (renamed,) = [p for p in tmp_path.iterdir() if p.name.startswith("t-0.")]
    assert renamed.name.endswith("-delete")
    assert broker.next_due_ms() == START + 1000
    clock.advance(999)
    broker.run_due()
    assert renamed.exists()
    clock.advance(1)
    assert "delete-file" in broker.run_due()
    assert not renamed.exists()


def test_node_id_comes_from_config_or_defaults_to_one(tmp_path: Path) -> None:
    assert Broker(tmp_path / "a").node_id == 1
    assert Broker(tmp_path / "b", config=BrokerConfig({"node.id": "7"})).node_id == 7
    assert Broker(tmp_path / "c", node_id=3).node_id == 3


def test_config_change_reaches_every_log(tmp_path: Path) -> None:
    broker = make(tmp_path, ManualClock(START))
    broker.create_topic("t", 2)
    broker.set_config(broker.config.with_dynamic({"log.retention.ms": "42"}, per_broker=False))
    assert [broker.log("t", p).settings.retention_ms for p in (0, 1)] == [42, 42]


def test_clean_shutdown_writes_a_broker_epoch_that_grows_with_each_startup(
    tmp_path: Path,
) -> None:
    """Kafka writes its registration epoch (golden: ``{"version":0,"brokerEpoch":9}``)."""
    epochs = []
    for _ in range(2):
        broker = make(tmp_path, ManualClock(START))
        broker.shutdown()
        epochs.append(json.loads((tmp_path / ".kafka_cleanshutdown").read_text()))
    assert [e["version"] for e in epochs] == [0, 0]
    assert 0 < epochs[0]["brokerEpoch"] < epochs[1]["brokerEpoch"]


def test_idle_producers_expire_at_the_periodic_check(tmp_path: Path) -> None:
    """``producer.id.expiration.ms`` after the batch's timestamp, checked every
    ``producer.id.expiration.check.interval.ms``: then any sequence is accepted."""
    clock = ManualClock(START)
    broker = make(
        tmp_path,
        clock,
        **{
            "producer.id.expiration.ms": "10000",
            "producer.id.expiration.check.interval.ms": "1000",
        },
    )
    broker.create_topic("p", 1)
    log = broker.log("p", 0)
    assert log is not None
    records = build_batch(
        [RecordSpec(b"k", b"v", timestamp=START)],
        base_offset=0,
        producer_id=3,
        producer_epoch=0,
        base_sequence=0,
    )
    log.append_as_leader(records, 0)
    clock.advance(9000)
    broker.run_due()
    assert log.producer_state.table.get(3) is not None
    clock.advance(1000)
    broker.run_due()
    assert log.producer_state.table.get(3) is None
