"""Leader epochs of ``lethe broker`` across clean restarts and kill -9, as Kafka 4.0 moves them.

Expected values: fixtures/golden/leader-epoch-restarts/case.json, a real Kafka
4.0.0 single KRaft node driven through the same history (create, produce,
SIGTERM, restart without appends, kill -9 and a quick restart, kill -9 without
appends). Kafka's controller raises each partition's leader epoch by one when
the broker leaves (controlled shutdown, or the registration of a new incarnation
after kill -9) and by one when it is unfenced, so every restart adds two; the
broker then writes ``(epoch, log end offset)`` to ``leader-epoch-checkpoint``
before any append, and stamps every later batch with the new epoch.

The history runs once against a ``lethe broker`` process; each probe's answers
(Metadata, ListOffsets, Fetch, Produce) and each checkpoint text must equal
Kafka's. OffsetForLeaderEpoch is not served by lethe, so its recorded answers
are not compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from lethe_conformance.client import KafkaConnection, calls
from lethe_conformance.client.batches import build_records
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import RecordBatch
from lethe_formats.records.builder import RecordSpec
from lethe_formats.records.scan import read_log

CASE = json.loads(
    (fixtures_root() / "golden" / "leader-epoch-restarts" / "case.json").read_text("utf-8")
)
TOPIC = CASE["topic"]["name"]


def _kafka_step(key: str, label: str) -> dict[str, Any]:
    found = [s for s in CASE["steps"] if s.get(key) == label]
    assert len(found) == 1, label
    step: dict[str, Any] = found[0]
    return step


class History:
    """The case's history against one ``lethe broker`` process, step by step."""

    def __init__(self, log_dir: Path) -> None:
        self.process = BrokerProcess(log_dir)
        self.log_dir = log_dir
        self.seen: list[tuple[str, Any, Any]] = []

    def connect(self) -> KafkaConnection:
        return KafkaConnection.open("127.0.0.1", self.process.port)

    def checkpoint(self) -> str | None:
        path = self.log_dir / f"{TOPIC}-0" / "leader-epoch-checkpoint"
        return path.read_text("utf-8") if path.exists() else None

    def probe(self, label: str) -> None:
        kafka = _kafka_step("label", label)
        with self.connect() as conn:
            partition = calls.metadata(conn, [TOPIC]).topics[0].partitions[0]
            latest = calls.list_offsets(conn, [(TOPIC, 0, -1)]).topics[0].partitions[0]
            earliest = calls.list_offsets(conn, [(TOPIC, 0, -2)]).topics[0].partitions[0]
            fetched = calls.fetch(conn, TOPIC, 0, 0).responses[0].partitions[0]
        ours = {
            "metadata": [partition.error_code, partition.leader_id, partition.leader_epoch],
            "list_offsets_latest": [latest.error_code, latest.offset, latest.leader_epoch],
            "list_offsets_earliest": [earliest.error_code, earliest.offset, earliest.leader_epoch],
            "fetch": {
                "error": fetched.error_code,
                "hw": fetched.high_watermark,
                "batches": [
                    [b.header.base_offset, b.header.partition_leader_epoch]
                    for b in read_log(fetched.records or b"")
                    if isinstance(b, RecordBatch)
                ],
            },
            "checkpoint": self.checkpoint(),
        }
        meta = kafka["metadata"]
        theirs = {
            "metadata": [meta["error"], meta["leader"], meta["leader_epoch"]],
            **{k: kafka[k] for k in ("list_offsets_latest", "list_offsets_earliest", "fetch")},
            "checkpoint": kafka["checkpoint"],
        }
        self.seen.append((label, ours, theirs))

    def produce(self, count: int, tag: str) -> None:
        kafka = next(s for s in CASE["steps"] if s.get("produce") == tag)
        specs = [
            RecordSpec(b"k", b"%s-%d" % (tag.encode(), i), timestamp=1_795_780_000_000 + i)
            for i in range(count)
        ]
        with self.connect() as conn:
            answer = calls.produce(conn, TOPIC, 0, build_records(specs))
        response = answer.responses[0].partition_responses[0]
        leader = response.current_leader
        ours = [response.error_code, response.base_offset, leader.leader_id, leader.leader_epoch]
        theirs = [kafka["error"], kafka["base"], -1, -1]  # current_leader: (-1, -1) on success
        assert "leader_id=-1, leader_epoch=-1" in kafka["current_leader"]
        self.seen.append((f"produce {tag}", ours, theirs))

    def checkpoint_after(self, label: str) -> None:
        expected = _kafka_step("checkpoint_after", label)["text"]
        self.seen.append((f"checkpoint after {label}", self.checkpoint(), expected))


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    run = History(tmp_path / "logs")
    yield run
    if run.process.process is not None:
        run.process.crash()


def test_the_restart_history_answers_and_writes_what_kafka_did(history: History) -> None:
    broker = history.process
    broker.start()
    with history.connect() as conn:
        assert calls.create_topic(conn, TOPIC, 1, {}).topics[0].error_code == 0
    history.probe("created, no appends")
    history.produce(3, "a")
    history.probe("after 3 appends")
    broker.stop()
    history.checkpoint_after("SIGTERM 1")
    broker.start()
    history.probe("restart 1 (clean), no appends yet")
    history.produce(2, "b")
    history.probe("restart 1 + 2 appends")
    broker.stop()
    history.checkpoint_after("SIGTERM 2")
    broker.start()
    history.probe("restart 2 (clean), no appends")
    broker.stop()
    history.checkpoint_after("SIGTERM 3 (no appends in between)")
    broker.start()
    history.probe("restart 3")
    history.produce(2, "c")
    broker.crash()
    history.checkpoint_after("kill -9")
    broker.start()
    history.probe("restart 4 (after kill -9, quick)")
    history.checkpoint_after("restart 4 up")
    broker.crash()
    history.checkpoint_after("kill -9 without appends")
    broker.start()
    history.probe("restart 5 (after kill -9, no appends)")
    history.produce(1, "d")
    history.probe("restart 5 + 1 append")
    broker.stop()
    history.checkpoint_after("final SIGTERM")
    mismatches = [(label, ours, theirs) for label, ours, theirs in history.seen if ours != theirs]
    assert mismatches == []
    assert len(history.seen) == 20
