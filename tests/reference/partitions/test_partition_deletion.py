"""Deleting removed partitions: when the check runs (KIP694-DEL-1), what goes (DEL-2),
the directories and checkpoints (DEL-3, DEL-4), committed offsets (DEL-5), growing
again afterwards (DEL-6), restarts (META-4) and retries (DEL-7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.storage.checkpoint import read_offset_checkpoint
from lethe_reference.broker import Broker
from lethe_reference.partitions import deletion
from lethe_reference.partitions.state import PartitionMode
from reduction_support import (
    FILE_DELETE_DELAY_MS,
    INTERVAL_MS,
    advance,
    commit,
    committed,
    delete_partitions,
    metadata,
    new_broker,
    produce,
    restart,
)


def five_partitions(tmp_path: Path, overrides: dict[str, str] | None = None) -> Broker:
    broker = new_broker(tmp_path, overrides=overrides)
    broker.create_topic("t", 5)
    for partition in range(5):
        for _ in range(partition + 1):
            assert produce(broker, "t", partition)[0] == 0
    return broker


def live_dirs(broker: Broker) -> list[str]:
    return sorted(p.name for p in broker.log_dir.iterdir() if p.name.startswith("t-"))


def checkpoint_partitions(broker: Broker, name: str) -> set[int]:
    entries = read_offset_checkpoint(broker.log_dir / name).as_dict()
    return {p for (t, p) in entries if t == "t"}


def test_the_check_runs_every_interval_and_deletes_at_the_first_run_after_the_delay(
    tmp_path: Path,
) -> None:
    broker = five_partitions(tmp_path)  # checks at start + k * 300000
    advance(broker, 100_000)
    delete_partitions(broker, ("t", 3), delay_ms=250_000)  # due at start + 350000
    advance(broker, 200_000 - 1)  # one ms before the check at 300000
    assert len(metadata(broker, "t")) == 5
    ran = advance(broker, 1)
    assert deletion.CHECK_TASK in ran  # the check at 300000: not yet due
    assert [p.mode for p in metadata(broker, "t")] == [0, 0, 0, 1, 1]
    advance(broker, INTERVAL_MS - 1)  # up to 599999: still ReadOnly although past due
    assert len(metadata(broker, "t")) == 5
    advance(broker, 1)  # the check at 600000
    assert [(p.partition_index, p.mode) for p in metadata(broker, "t")] == [(0, 0), (1, 0), (2, 0)]


def test_the_interval_is_the_config(tmp_path: Path) -> None:
    broker = five_partitions(tmp_path, {"delete.topic.partition.interval.delay.ms": "1000"})
    delete_partitions(broker, ("t", 4), delay_ms=1500)
    advance(broker, 1000)
    assert len(metadata(broker, "t")) == 5
    advance(broker, 1000)
    assert len(metadata(broker, "t")) == 4


def test_no_check_task_without_the_feature(tmp_path: Path) -> None:
    broker = new_broker(tmp_path, enable=False)
    assert broker.scheduler.next_due_ms() is not None
    assert deletion.CHECK_TASK not in advance(broker, 2 * INTERVAL_MS)


def test_only_the_highest_partitions_go_and_the_rest_keep_their_data(tmp_path: Path) -> None:
    broker = five_partitions(tmp_path)
    delete_partitions(broker, ("t", 3), immediate=True)
    assert [broker.log("t", p).log_end_offset for p in range(3)] == [1, 2, 3]  # type: ignore[union-attr]
    assert broker.log("t", 3) is None and broker.log("t", 4) is None
    for partition in (3, 4):
        assert produce(broker, "t", partition)[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_directories_are_renamed_delete_then_removed_after_the_file_delete_delay(
    tmp_path: Path,
) -> None:
    broker = five_partitions(tmp_path)
    delete_partitions(broker, ("t", 3), immediate=True)
    names = live_dirs(broker)
    assert names[:3] == ["t-0", "t-1", "t-2"]
    renamed = names[3:]
    assert len(renamed) == 2
    for name, partition in zip(renamed, (3, 4), strict=True):
        prefix, _, rest = name.partition(".")
        assert prefix == f"t-{partition}" or name.startswith(f"t-{partition}.")
        assert rest.endswith("-delete") and len(rest) == 32 + len("-delete")
    advance(broker, FILE_DELETE_DELAY_MS - 1)
    assert len(live_dirs(broker)) == 5
    advance(broker, 1)
    assert live_dirs(broker) == ["t-0", "t-1", "t-2"]


@pytest.mark.parametrize(
    "name",
    [
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "replication-offset-checkpoint",
    ],
)
def test_removed_partitions_leave_every_checkpoint_at_its_next_write(
    tmp_path: Path, name: str
) -> None:
    broker = five_partitions(tmp_path)
    broker.log_manager.checkpoint_high_watermarks()
    broker.log_manager.checkpoint_recovery_points()
    delete_partitions(broker, ("t", 3), immediate=True)
    advance(broker, INTERVAL_MS)  # every periodic checkpoint has been written again
    assert checkpoint_partitions(broker, name) <= {0, 1, 2}
    if name != "log-start-offset-checkpoint":
        assert checkpoint_partitions(broker, name) == {0, 1, 2}


def test_committed_offsets_of_removed_partitions_are_deleted_durably(tmp_path: Path) -> None:
    broker = five_partitions(tmp_path)
    commit(broker, "g", "t", {0: 1, 3: 2, 4: 3})
    assert committed(broker, "g", "t", [0, 3, 4]) == {0: 1, 3: 2, 4: 3}
    delete_partitions(broker, ("t", 3), immediate=True)
    assert committed(broker, "g", "t", [0, 3, 4]) == {0: 1, 3: -1, 4: -1}
    broker = restart(broker)
    assert committed(broker, "g", "t", [0, 3, 4]) == {0: 1, 3: -1, 4: -1}


def test_create_partitions_after_the_reduction_gives_new_empty_partitions(
    tmp_path: Path,
) -> None:
    broker = five_partitions(tmp_path)
    delete_partitions(broker, ("t", 3), immediate=True)
    broker.create_partitions("t", 5)
    assert [broker.log("t", p).log_end_offset for p in range(5)] == [1, 2, 3, 0, 0]  # type: ignore[union-attr]
    assert produce(broker, "t", 4) == (0, 0)


def test_a_pending_reduction_survives_a_restart_and_completes_after(tmp_path: Path) -> None:
    broker = five_partitions(tmp_path)
    delete_partitions(broker, ("t", 3), delay_ms=10_000)
    broker = restart(broker)
    assert [p.mode for p in metadata(broker, "t")] == [0, 0, 0, 1, 1]
    assert produce(broker, "t", 4)[0] == ErrorCode.POLICY_VIOLATION
    advance(broker, INTERVAL_MS)
    assert len(metadata(broker, "t")) == 3
    broker = restart(broker)
    assert len(metadata(broker, "t")) == 3
    assert broker.metadata.get("t").reduction is None  # type: ignore[union-attr]


def test_a_failed_deletion_stays_pending_in_none_and_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broker = five_partitions(tmp_path)
    delete_partitions(broker, ("t", 3), delay_ms=1)
    real = broker.delete_partition_logs

    def failing(name: str, partitions: list[int]) -> None:
        raise OSError("disk says no")

    monkeypatch.setattr(broker, "delete_partition_logs", failing)
    advance(broker, INTERVAL_MS)
    info = broker.metadata.get("t")
    assert info is not None and info.reduction is not None
    assert dict(info.modes) == {3: PartitionMode.NONE, 4: PartitionMode.NONE}
    assert produce(broker, "t", 3)[0] == ErrorCode.POLICY_VIOLATION
    monkeypatch.setattr(broker, "delete_partition_logs", real)
    advance(broker, INTERVAL_MS)
    assert len(metadata(broker, "t")) == 3
