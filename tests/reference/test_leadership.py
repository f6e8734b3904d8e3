"""Partition leadership of a single node across restarts, without sockets.

Expected values come from a real Kafka 4.0.0 single KRaft node
(fixtures/golden/leader-epoch-restarts/case.json): a partition is led at
epoch 0 from creation, with ``0 0`` in its leader-epoch-checkpoint before any
append; each restart (clean, or after a crash) adds two to the epoch (the
controller's ``handleBrokerInControlledShutdown`` or the unclean registration,
then ``handleBrokerUnfenced``), and ``makeLeader`` writes ``(epoch, LEO)``,
replacing an entry that starts at the same offset. A crash is a broker dropped
without ``shutdown()`` (nothing of a clean shutdown is written).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.handlers.partition_ops.common import check_leader_epoch
from lethe_reference.leadership import (
    NO_LEADER,
    Leadership,
    leadership_from_json,
    leadership_to_json,
)
from lethe_reference.metadata import METADATA_FILE

START = 1_795_780_000_000
TOPIC = "ep"


def start(log_dir: Path) -> Broker:
    broker = Broker(log_dir, clock=ManualClock(START), durable=False)
    broker.startup()
    return broker


def checkpoint(log_dir: Path, partition: int = 0) -> str:
    return (log_dir / f"{TOPIC}-{partition}" / "leader-epoch-checkpoint").read_text("utf-8")


def append(broker: Broker, count: int) -> int:
    log = broker.log(TOPIC, 0)
    assert log is not None
    specs = [RecordSpec(b"k", b"v%d" % i, timestamp=START + i) for i in range(count)]
    epoch = broker.metadata.leader_epoch(TOPIC, 0)
    return log.append_as_leader(build_batch(specs, base_offset=0), epoch).first_offset


def batch_epochs(log_dir: Path) -> list[tuple[int, int]]:
    return [
        (batch.header.base_offset, batch.header.partition_leader_epoch)
        for path in sorted((log_dir / f"{TOPIC}-0").glob("*.log"))
        for batch in read_log(path.read_bytes())
        if isinstance(batch, RecordBatch)
    ]


def test_kafkas_restart_history_gives_kafkas_epochs_and_checkpoints(tmp_path: Path) -> None:
    """The golden case's history: every checkpoint text as Kafka wrote it."""
    broker = start(tmp_path)
    broker.create_topic(TOPIC, 1)
    assert checkpoint(tmp_path) == "0\n1\n0 0\n"  # before any append
    append(broker, 3)
    broker.shutdown()
    assert checkpoint(tmp_path) == "0\n1\n0 0\n"
    broker = start(tmp_path)
    assert broker.metadata.leader_epoch(TOPIC, 0) == 2
    assert checkpoint(tmp_path) == "0\n2\n0 0\n2 3\n"
    assert append(broker, 2) == 3
    broker.shutdown()
    broker = start(tmp_path)  # no appends before the next shutdown
    assert checkpoint(tmp_path) == "0\n3\n0 0\n2 3\n4 5\n"
    broker.shutdown()
    broker = start(tmp_path)
    assert checkpoint(tmp_path) == "0\n3\n0 0\n2 3\n6 5\n"  # 6 5 replaced 4 5
    append(broker, 2)
    del broker  # kill -9
    broker = start(tmp_path)
    assert broker.metadata.leader_epoch(TOPIC, 0) == 8
    assert checkpoint(tmp_path) == "0\n4\n0 0\n2 3\n6 5\n8 7\n"
    del broker  # kill -9 without appends
    broker = start(tmp_path)
    assert broker.metadata.leader_epoch(TOPIC, 0) == 10
    append(broker, 1)
    broker.shutdown()
    assert checkpoint(tmp_path) == "0\n4\n0 0\n2 3\n6 5\n10 7\n"
    assert batch_epochs(tmp_path) == [(0, 0), (3, 2), (5, 6), (7, 10)]


def test_the_epoch_is_kept_in_the_topic_registry(tmp_path: Path) -> None:
    broker = start(tmp_path)
    broker.create_topic(TOPIC, 2)
    broker.shutdown()
    saved = (tmp_path / METADATA_FILE).read_text("utf-8")
    # controlled shutdown: no leader, epoch 1 (Kafka's PartitionChangeRecord leader -1)
    assert leadership_from_json(_topic_entry(saved)["leadership"]) == {
        0: Leadership(NO_LEADER, 1),
        1: Leadership(NO_LEADER, 1),
    }
    broker = start(tmp_path)
    assert [broker.metadata.leader_epoch(TOPIC, p) for p in (0, 1)] == [2, 2]
    broker.create_partitions(TOPIC, 3)  # a new partition starts at epoch 0
    assert broker.metadata.leader_epoch(TOPIC, 2) == 0
    assert checkpoint(tmp_path, 2) == "0\n1\n0 0\n"


def test_a_log_whose_registry_entry_is_lost_never_goes_back_in_epochs(tmp_path: Path) -> None:
    broker = start(tmp_path)
    broker.create_topic(TOPIC, 1)
    append(broker, 1)
    broker.shutdown()
    for _ in range(2):
        broker = start(tmp_path)
        append(broker, 1)  # the epoch's entry stays in the checkpoint
        broker.shutdown()
    assert checkpoint(tmp_path) == "0\n3\n0 0\n2 1\n4 2\n"
    (tmp_path / METADATA_FILE).unlink()
    broker = start(tmp_path)
    assert broker.metadata.leader_epoch(TOPIC, 0) == 5  # above the log's latest epoch
    assert checkpoint(tmp_path) == "0\n4\n0 0\n2 1\n4 2\n5 3\n"


@pytest.mark.parametrize(
    ("client_epoch", "expected"),
    [
        (-1, ErrorCode.NONE),
        (0, ErrorCode.FENCED_LEADER_EPOCH),
        (2, ErrorCode.NONE),
        (3, ErrorCode.UNKNOWN_LEADER_EPOCH),
    ],
)
def test_a_client_epoch_is_checked_against_the_raised_one(
    tmp_path: Path, client_epoch: int, expected: ErrorCode
) -> None:
    broker = start(tmp_path)
    broker.create_topic(TOPIC, 1)
    broker.shutdown()
    broker = start(tmp_path)
    assert check_leader_epoch(client_epoch, broker.metadata.leader_epoch(TOPIC, 0)) == expected


def test_transitions_and_json_form() -> None:
    led = Leadership(1, 4)
    assert led.controlled_shutdown() == Leadership(NO_LEADER, 5)
    assert led.controlled_shutdown().registered() == Leadership(NO_LEADER, 5)  # clean: no change
    assert led.registered() == Leadership(NO_LEADER, 5)  # kill -9: the stale leader goes
    assert led.restarted(1) == Leadership(1, 6)
    assert led.controlled_shutdown().restarted(1) == Leadership(1, 6)
    assert Leadership(1, 0).restarted(1, floor_epoch=7) == Leadership(1, 8)
    states = {0: Leadership(NO_LEADER, 3), 1: Leadership(1, 2)}
    assert leadership_to_json(states) == {"0": [-1, 3], "1": [1, 2]}
    assert leadership_from_json(leadership_to_json(states)) == states
    assert leadership_from_json({"x": [1, 2], "2": [1], "3": "no", "4": [-5, 1]}) == {}
    assert leadership_from_json(None) == {}


def _topic_entry(saved: str) -> dict[str, object]:
    entry: dict[str, object] = json.loads(saved)["topics"][TOPIC]
    return entry
