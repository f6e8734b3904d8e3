"""The golden delete-records case, replayed at the storage level.

Kafka 4.0 (fixtures/golden/delete-records, README "delete-records" section):
topic golden-delrec, 3 partitions, segment.bytes=700, index.interval.bytes=100,
file.delete.delay.ms=1000. DeleteRecords p0 -> 19 (inside a segment), p1 -> 24
(a segment base), p2 -> -1 (the HW, 30; the -1 mapping is the handler's).
Every expected value below is read from case.json or the golden files.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.storage.checkpoint import read_offset_checkpoint
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_reference.clock import ManualClock
from lethe_reference.storage import log_reads
from lethe_reference.storage.errors import OffsetOutOfRangeError
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.log_manager import LogManager
from lethe_reference.storage.settings import StorageSettings
from storage_support import (
    GOLDEN,
    as_client_batch,
    case_json,
    delrec_produced_batches,
    golden_batches,
)

CASE = GOLDEN / "delete-records"
TOPIC = "golden-delrec"
SETTINGS = StorageSettings(segment_bytes=700, index_interval_bytes=100, file_delete_delay_ms=1000)
DELETE = LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION
STEPS = case_json("delete-records")["steps"]
EDGES = case_json("delete-records")["edge_cases_before_capture"]


def _step(op: str) -> dict[str, Any]:
    return next(step for step in STEPS if step["op"] == op)


def _manager(log_dir: Path, clock: ManualClock) -> LogManager:
    manager = LogManager(
        log_dir,
        clock=clock,
        settings_for=lambda _topic: SETTINGS,
        file_delete_delay_ms=1000,
        durable=False,  # no fsync: the files are the same, the test is faster
    )
    manager.startup()
    return manager


@pytest.fixture
def manager(tmp_path: Path, clock: ManualClock) -> Iterator[LogManager]:
    """The three partitions as they were before DeleteRecords, HW = LEO."""
    manager = _manager(tmp_path / "logs", clock)
    topic_id = KafkaUuid.from_string(case_json("delete-records")["topics"][0]["topic_id"])
    for partition, batches in delrec_produced_batches().items():
        log = manager.create_log(TOPIC, partition, topic_id=topic_id)
        for batch in batches:
            log.append_as_leader(batch, leader_epoch=0)
        log.update_high_watermark(log.log_end_offset)
    yield manager


def _log(manager: LogManager, partition: int) -> PartitionLog:
    log = manager.get_log(TOPIC, partition)
    assert log is not None
    return log


def _delete_records(manager: LogManager) -> dict[int, int]:
    """Run the golden request; return the low watermarks (= log start offsets)."""
    for partition, offset in _step("delete_records")["request"]:
        log = _log(manager, partition)
        log.maybe_increment_log_start_offset(log.high_watermark if offset == -1 else offset, DELETE)
    return {p: _log(manager, p).log_start_offset for p in range(3)}


def _bases(manager: LogManager) -> dict[str, list[int]]:
    return {str(p): _log(manager, p).segments.base_offsets for p in range(3)}


def _list_offsets(manager: LogManager, name: str) -> list[dict[str, int]]:
    code = {"EARLIEST": -2, "LATEST": -1, "MAX_TIMESTAMP": -3}[name]
    results = []
    for partition in range(3):
        found = log_reads.offset_for_timestamp(_log(manager, partition), code, leader_epoch=0)
        assert found is not None
        results.append(
            {
                "partition": partition,
                "offset": found.offset,
                "timestamp": found.timestamp,
                "leader_epoch": found.leader_epoch if found.leader_epoch is not None else -1,
            }
        )
    return results


def test_rebuilt_batches_equal_the_batches_kafka_stored() -> None:
    """The fixture's producer batches are Kafka's own where Kafka kept them."""
    for partition, batches in delrec_produced_batches().items():
        stored = [as_client_batch(b) for b in golden_batches(CASE / f"{TOPIC}-{partition}")]
        assert batches[-len(stored) :] == stored


def test_segments_before_delete_records_are_kafkas(manager: LogManager) -> None:
    assert _bases(manager) == _step("list_offsets")["segment_base_offsets_on_disk"]


@pytest.mark.parametrize("name", ["EARLIEST", "LATEST", "MAX_TIMESTAMP"])
def test_list_offsets_before_delete_records(manager: LogManager, name: str) -> None:
    assert _list_offsets(manager, name) == _step("list_offsets")["results"][name]


def test_delete_records_low_watermarks(manager: LogManager) -> None:
    expected = {r["partition"]: r["low_watermark"] for r in _step("delete_records")["results"]}
    assert _delete_records(manager) == expected


def test_retention_deletes_only_segments_wholly_below_the_log_start_offset(
    manager: LogManager,
) -> None:
    _delete_records(manager)
    manager.cleanup_logs()
    assert _bases(manager) == _step("wait")["segment_base_offsets_on_disk"]
    assert [_log(manager, p).log_start_offset for p in range(3)] == [19, 24, 30]


def test_deleted_segment_files_stay_until_file_delete_delay_ms(
    manager: LogManager, clock: ManualClock
) -> None:
    _delete_records(manager)
    manager.cleanup_logs()
    p0 = _log(manager, 0).directory
    renamed = sorted(p.name for p in p0.glob("*.deleted"))
    # Kafka renames the producer snapshot named after a deleted segment too
    # (deleteProducerSnapshots); segment 0 has none, as in the golden directory.
    kinds = ("index", "log", "snapshot", "timeindex")
    assert renamed == [
        f"{base:020d}.{kind}.deleted"
        for base in (0, 8)
        for kind in kinds
        if (base, kind) != (0, "snapshot")
    ]
    clock.advance(999)
    assert manager.delete_due_files() == []
    clock.advance(1)
    # 3 files x segments gone, plus the snapshots of the segments at 8 and 16
    assert len(manager.delete_due_files()) == 3 * (2 + 3 + 3) + (1 + 2 + 2)
    assert not list(manager.log_dir.glob("*/*.deleted"))


def test_log_start_offset_checkpoint_lists_only_partitions_above_first_base(
    manager: LogManager,
) -> None:
    _delete_records(manager)
    manager.cleanup_logs()
    manager.checkpoint_log_start_offsets()
    text = (manager.log_dir / "log-start-offset-checkpoint").read_text()
    assert text == _step("wait")["log_start_offset_checkpoint_text"]
    assert text == (CASE / "log-start-offset-checkpoint").read_text()


def test_list_offsets_after_delete_records(manager: LogManager) -> None:
    """MAX_TIMESTAMP may answer below the log start offset (p2: 26 with LSO 30)."""
    _delete_records(manager)
    manager.cleanup_logs()
    expected = EDGES[0]["results"]
    for name in ("EARLIEST", "LATEST", "MAX_TIMESTAMP"):
        assert _list_offsets(manager, name) == expected[name]


@pytest.mark.parametrize(
    ("partition", "requested", "low_watermark"),
    [(0, 17, 19), (1, 24, 24), (1, 36, 36), (2, 30, 30)],
    ids=["below-lso", "equal-lso", "equal-hw", "equal-hw-and-lso"],
)
def test_delete_records_at_or_below_the_start_or_up_to_the_hw_succeeds(
    manager: LogManager, partition: int, requested: int, low_watermark: int
) -> None:
    _delete_records(manager)
    log = _log(manager, partition)
    log.maybe_increment_log_start_offset(requested, DELETE)
    assert log.log_start_offset == low_watermark


def test_delete_records_above_the_high_watermark_is_offset_out_of_range(
    manager: LogManager,
) -> None:
    _delete_records(manager)
    with pytest.raises(OffsetOutOfRangeError) as caught:
        _log(manager, 0).maybe_increment_log_start_offset(45, DELETE)
    assert caught.value.error_code == 1
    assert _log(manager, 0).log_start_offset == 19


def test_fetch_below_the_log_start_offset_is_offset_out_of_range(manager: LogManager) -> None:
    """The librdkafka probe fetched p0 at 18 and got OFFSET_OUT_OF_RANGE."""
    _delete_records(manager)
    manager.cleanup_logs()
    with pytest.raises(OffsetOutOfRangeError):
        log_reads.read(_log(manager, 0), 18, 1 << 20)
    first = log_reads.read(_log(manager, 0), 19, 1 << 20)
    assert first.records[:8] == (16).to_bytes(8, "big")  # the whole batch 16..19


def test_clean_shutdown_leaves_kafkas_files(manager: LogManager, clock: ManualClock) -> None:
    """Segments, indexes, producer snapshots, leader-epoch and partition.metadata
    files, checkpoints, marker: the same names and bytes as Kafka's."""
    _delete_records(manager)
    manager.cleanup_logs()
    clock.advance(1000)  # the case waited for the .deleted files to go
    manager.delete_due_files()
    manager.shutdown(broker_epoch=9)
    root = manager.log_dir
    assert (root / ".kafka_cleanshutdown").read_bytes() == (
        CASE / ".kafka_cleanshutdown"
    ).read_bytes()
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        ours = read_offset_checkpoint(root / name).as_dict()
        assert ours == read_offset_checkpoint(CASE / name).as_dict()
    for partition in range(3):
        kafka = CASE / f"{TOPIC}-{partition}"
        expected = sorted(p.name for p in kafka.iterdir())
        assert sorted(p.name for p in (root / kafka.name).iterdir()) == expected
        for name in expected:
            assert (root / kafka.name / name).read_bytes() == (kafka / name).read_bytes(), name


def test_restart_restores_offsets_from_the_checkpoints(
    manager: LogManager, clock: ManualClock
) -> None:
    _delete_records(manager)
    manager.cleanup_logs()
    manager.shutdown(broker_epoch=9)
    again = _manager(manager.log_dir, clock)
    assert again.had_clean_shutdown
    assert not (manager.log_dir / ".kafka_cleanshutdown").exists()
    offsets = [
        (log.log_start_offset, log.high_watermark, log.recovery_point)
        for log in (_log(again, p) for p in range(3))
    ]
    assert offsets == [(19, 40, 40), (24, 36, 36), (30, 30, 30)]


def test_kafkas_own_log_dir_loads_with_its_log_start_offsets(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The golden directory Kafka left: LSO 19 and 30 from the checkpoint, 24 = first base."""
    log_dir = tmp_path / "kafka"
    shutil.copytree(CASE, log_dir)
    manager = _manager(log_dir, clock)
    assert [_log(manager, p).log_start_offset for p in range(3)] == [19, 24, 30]
    assert [_log(manager, p).high_watermark for p in range(3)] == [40, 36, 30]
    assert [_log(manager, p).log_end_offset for p in range(3)] == [40, 36, 30]
    manager.checkpoint_log_start_offsets()
    text = (log_dir / "log-start-offset-checkpoint").read_text()
    assert text == (CASE / "log-start-offset-checkpoint").read_text()
