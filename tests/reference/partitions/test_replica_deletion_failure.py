"""An injected ``replica-deletion-error`` (KIP694-DEL-7): the replica deletion of a
removed partition fails once, as an IOException would; the reduction stays pending
with the partition in None (KIP694-MODE-5 decision: None lasts until replica
deletion ends) and the next check, one interval later, finishes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_reference.broker import Broker
from lethe_reference.injected_failures import KINDS, REPLICA_DELETION_ERROR, inject
from lethe_reference.partitions.state import PartitionMode
from reduction_support import INTERVAL_MS, advance, delete_partitions, metadata, new_broker, produce


def four_partitions(tmp_path: Path) -> Broker:
    broker = new_broker(tmp_path)
    broker.create_topic("t", 4)
    for partition in range(4):
        assert produce(broker, "t", partition)[0] == 0
    return broker


def test_replica_deletion_error_is_a_known_kind() -> None:
    assert REPLICA_DELETION_ERROR == "replica-deletion-error"
    assert REPLICA_DELETION_ERROR in KINDS


def test_a_failed_replica_deletion_keeps_the_partition_pending_in_none(tmp_path: Path) -> None:
    broker = four_partitions(tmp_path)
    delete_partitions(broker, ("t", 2), delay_ms=1)
    inject(broker, REPLICA_DELETION_ERROR, "t", [3])
    advance(broker, INTERVAL_MS)  # the first check after the delay: deletion of 3 fails
    info = broker.metadata.get("t")
    assert info is not None and info.reduction is not None
    assert [p.mode for p in metadata(broker, "t")] == [0, 0, -1, -1]
    assert dict(info.modes) == {2: PartitionMode.NONE, 3: PartitionMode.NONE}
    assert produce(broker, "t", 3)[0] == ErrorCode.POLICY_VIOLATION
    assert any(p.name.startswith("t-3") and "delete" not in p.name for p in tmp_path.rglob("t-3*"))


def test_the_next_check_retries_and_finishes_the_reduction(tmp_path: Path) -> None:
    broker = four_partitions(tmp_path)
    delete_partitions(broker, ("t", 2), delay_ms=1)
    inject(broker, REPLICA_DELETION_ERROR, "t", [2, 3])
    advance(broker, INTERVAL_MS)
    assert len(metadata(broker, "t")) == 4
    advance(broker, INTERVAL_MS - 1)  # no check yet
    assert len(metadata(broker, "t")) == 4
    advance(broker, 1)  # the next check: the failure was one shot, the deletion succeeds
    assert [p.partition_index for p in metadata(broker, "t")] == [0, 1]
    info = broker.metadata.get("t")
    assert info is not None and info.reduction is None
    assert produce(broker, "t", 3)[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_without_the_failure_the_first_check_deletes(tmp_path: Path) -> None:
    broker = four_partitions(tmp_path)
    delete_partitions(broker, ("t", 2), delay_ms=1)
    inject(broker, REPLICA_DELETION_ERROR, "other", [3])
    advance(broker, INTERVAL_MS)
    assert [p.partition_index for p in metadata(broker, "t")] == [0, 1]


def test_an_unknown_kind_is_still_refused(tmp_path: Path) -> None:
    broker = four_partitions(tmp_path)
    with pytest.raises(ValueError):
        inject(broker, "replica-deletion-typo", "t", [3])
