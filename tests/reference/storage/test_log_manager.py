"""A log directory's lifecycle (kafka-facts 1.4; LogManager): startup, checkpoints,
partition deletion, clean and unclean restarts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_formats.storage.meta_properties import MetaProperties, read_meta_properties
from lethe_formats.storage.partition_metadata import read_partition_metadata
from lethe_reference.clock import ManualClock
from lethe_reference.storage.errors import KafkaStorageError
from lethe_reference.storage.log_manager import LogManager
from lethe_reference.storage.settings import StorageSettings
from storage_support import client_batch

TOPIC_ID = KafkaUuid.from_string("IdvB5LqtQrSQL2tqHWQmVg")


def _manager(log_dir: Path, clock: ManualClock, **options: object) -> LogManager:
    manager = LogManager(
        log_dir,
        clock=clock,
        settings_for=lambda _t: StorageSettings(segment_bytes=200),
        durable=False,
        **options,  # type: ignore[arg-type]
    )
    manager.startup()
    return manager


def _fill(manager: LogManager, topic: str, partition: int, batches: int) -> None:
    log = manager.create_log(topic, partition, topic_id=TOPIC_ID)
    for _ in range(batches):
        log.append_as_leader(client_batch([manager.clock.now_ms()]), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)


def test_a_new_partition_gets_its_directory_and_partition_metadata(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock)
    _fill(manager, "orders", 3, 1)
    directory = tmp_path / "orders-3"
    assert (directory / "00000000000000000000.log").exists()
    assert read_partition_metadata(directory / "partition.metadata").topic_id == TOPIC_ID
    assert (directory / "partition.metadata").read_text().endswith("IdvB5LqtQrSQL2tqHWQmVg")


def test_meta_properties_is_written_when_missing_and_read_when_present(
    tmp_path: Path, clock: ManualClock
) -> None:
    meta = MetaProperties(1, "2N81Oue8RyCowbZXcMNpzg", 1, None)
    _manager(tmp_path, clock, meta_properties=meta)
    written = read_meta_properties(tmp_path / "meta.properties")
    assert (written.version, written.cluster_id, written.node_id) == (1, meta.cluster_id, 1)
    again = _manager(tmp_path, clock)
    assert again.meta_properties is not None
    assert again.meta_properties.cluster_id == meta.cluster_id


def test_checkpoints_hold_high_watermarks_and_recovery_points(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock)
    _fill(manager, "b", 0, 3)
    _fill(manager, "a", 1, 1)
    manager.checkpoint_high_watermarks()
    manager.checkpoint_recovery_points()
    assert (tmp_path / "replication-offset-checkpoint").read_text() == "0\n2\na 1 1\nb 0 3\n"
    rp = (tmp_path / "recovery-point-offset-checkpoint").read_text()
    assert rp.startswith("0\n2\n")
    manager.flush()
    manager.checkpoint_recovery_points()
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n2\na 1 1\nb 0 3\n"


def test_shutdown_writes_the_marker_and_startup_deletes_it(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock)
    _fill(manager, "t", 0, 2)
    manager.shutdown(broker_epoch=12)
    assert (tmp_path / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":12}'
    again = _manager(tmp_path, clock)
    assert again.had_clean_shutdown
    assert not (tmp_path / ".kafka_cleanshutdown").exists()
    log = again.get_log("t", 0)
    assert log is not None
    assert (log.log_end_offset, log.high_watermark, log.recovery_point) == (2, 2, 2)


def test_an_unclean_restart_recovers_from_the_recovery_point(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock)
    _fill(manager, "t", 0, 2)
    manager.checkpoint_high_watermarks()
    first = manager.get_log("t", 0)
    assert first is not None
    active = first.active_segment.log.path
    active.write_bytes(active.read_bytes() + b"torn")  # no shutdown: a crash
    again = _manager(tmp_path, clock)
    assert not again.had_clean_shutdown
    log = again.get_log("t", 0)
    assert log is not None
    assert (log.log_end_offset, log.high_watermark) == (2, 2)
    assert not active.read_bytes().endswith(b"torn")


def test_a_malformed_checkpoint_is_read_as_empty(tmp_path: Path, clock: ManualClock) -> None:
    manager = _manager(tmp_path, clock)
    _fill(manager, "t", 0, 2)
    manager.shutdown()
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n5\nt 0 2\n")
    (tmp_path / "replication-offset-checkpoint").write_text("7\n")
    again = _manager(tmp_path, clock)
    log = again.get_log("t", 0)
    assert log is not None
    assert log.high_watermark == 0  # no checkpoint entry: HW starts at the log start
    assert log.log_end_offset == 2


def test_deleting_a_partition_renames_it_and_removes_it_after_the_delay(
    tmp_path: Path, clock: ManualClock
) -> None:
    manager = _manager(tmp_path, clock, file_delete_delay_ms=1000)
    _fill(manager, "t", 0, 1)
    _fill(manager, "t", 1, 1)
    renamed = manager.delete_log("t", 0)
    assert renamed is not None
    assert re.fullmatch(r"t-0\.[0-9a-f]{32}-delete", renamed.name)
    assert manager.get_log("t", 0) is None
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 1 0\n"
    clock.advance(999)
    assert manager.delete_due_files() == []
    clock.advance(1)
    assert manager.delete_due_files() == [renamed]
    assert not renamed.exists()


def test_leftover_delete_directories_are_removed_after_a_restart(
    tmp_path: Path, clock: ManualClock
) -> None:
    stale = tmp_path / "t-0.0123456789abcdef0123456789abcdef-delete"
    stale.mkdir(parents=True)
    (stale / "00000000000000000000.log").write_bytes(b"")
    manager = _manager(tmp_path, clock, file_delete_delay_ms=10)
    assert manager.logs == {}
    clock.advance(10)
    assert manager.delete_due_files() == [stale]


def test_a_checkpoint_that_cannot_be_written_fails_the_log_dir(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The log dir replaced by a file (as Kafka's LogDirFailureTest does): the next
    checkpoint write is a KafkaStorageError and the manager records the dir failure,
    which makes the server halt (its only log dir failed, as Kafka halts)."""
    log_dir = tmp_path / "data"
    manager = _manager(log_dir, clock)
    _fill(manager, "orders", 0, 1)
    assert manager.dir_failure is None
    log_dir.rename(tmp_path / "data.failed")
    log_dir.write_bytes(b"")
    with pytest.raises(KafkaStorageError, match=r"log dir .*data failed"):
        manager.checkpoint_log_start_offsets()
    assert manager.dir_failure is not None
    assert "log-start-offset-checkpoint" in manager.dir_failure
