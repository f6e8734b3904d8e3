"""``lethe consumed-retention`` (KIP-68 option 2) by address against the embedded broker.

KIP68-CLI-1..5: the tool trims each partition to the lowest offset committed by the
groups consuming its topic, and only there; nothing where a consuming group has not
committed, where no group consumes, or when the dry run is asked for. What the
broker did is read back from the broker (ListOffsets EARLIEST), never from the
tool's output; the expected offsets are the groups' commits, set by the test.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_reference.clock import ManualClock
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config
from lethe_tools.commands.consumed_retention import plan_trims
from lethe_tools.kafka_client.admin import AdminClient, TopicPartition
from lethe_tools.kafka_client.config import ClientConfig, parse_bootstrap_servers
from lethe_tools.kafka_client.extensions import Producer, ProducerRecord
from lethe_tools.kafka_client.group_offsets import PartitionBounds
from lethe_tools.kafka_client.topic_admin import TopicCaller
from tools_support import Run

LetheRun = Callable[..., Run]
START_MS = 1_800_000_000_000
HEADER = ["Executing records delete operation", "Records delete operation completed:"]


def create(bootstrap: str, topic: str, partitions: int, factor: int = 1) -> None:
    with AdminClient(ClientConfig(parse_bootstrap_servers(bootstrap))) as admin:
        TopicCaller(admin).create_topic(topic, partitions, factor, {}, 30_000)


def fill(bootstrap: str, topic: str, partitions: int, count: int) -> None:
    with Producer(bootstrap) as producer:
        for partition in range(partitions):
            for i in range(count):
                value = b"v%d" % i
                record = ProducerRecord(topic, value, b"k", partition, timestamp_ms=START_MS)
                producer.send(record)


def commit(bootstrap: str, group: str, rows: list[tuple[str, int, int]]) -> None:
    """OffsetCommit outside membership (as assign() + commitSync), to the coordinator."""
    node = coordinator(bootstrap, group)
    with AdminClient(ClientConfig(parse_bootstrap_servers(bootstrap))) as admin:
        brokers = {b.node_id: (b.host, b.port) for b in admin.metadata([]).brokers}
    with KafkaConnection.open(*brokers[node]) as conn:
        answer = calls.offset_commit(conn, group, rows)
    assert all(p.error_code == 0 for t in answer.topics for p in t.partitions), answer


def coordinator(bootstrap: str, group: str) -> int:
    """The group's coordinator; the first asks create ``__consumer_offsets`` and answer
    COORDINATOR_NOT_AVAILABLE (15) until it is loaded, as on Kafka."""
    host, port = parse_bootstrap_servers(bootstrap)[0]
    with KafkaConnection.open(host, port) as conn:
        for _ in range(500):
            code, node = calls.find_coordinator(conn, group)
            if code == 0:
                return node
            assert code == 15, code
    raise AssertionError(f"no coordinator for {group}")


def log_starts(bootstrap: str, topic: str, partitions: int) -> list[int]:
    host, port = parse_bootstrap_servers(bootstrap)[0]
    with KafkaConnection.open(host, port) as conn:
        rows = [(topic, p, -2) for p in range(partitions)]
        answer = calls.list_offsets(conn, rows)
    found = {p.partition_index: p.offset for t in answer.topics for p in t.partitions}
    return [found[p] for p in range(partitions)]


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(tmp_path, config=broker_config(), clock=ManualClock(START_MS)) as broker:
        create(broker.bootstrap, "t", 2)
        create(broker.bootstrap, "u", 1)
        fill(broker.bootstrap, "t", 2, 10)
        fill(broker.bootstrap, "u", 1, 10)
        yield broker


def tool(lethe: LetheRun, bootstrap: str, *extra: str) -> Run:
    return lethe("consumed-retention", "--bootstrap-server", bootstrap, *extra)


def test_each_partition_is_trimmed_to_the_lowest_offset_of_every_group(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    commit(kafka.bootstrap, "g1", [("t", 0, 4), ("t", 1, 7)])
    commit(kafka.bootstrap, "g2", [("t", 0, 6), ("t", 1, 3)])
    run = tool(lethe, kafka.bootstrap, "--topic", "t")
    assert run.status == 0, run.err
    assert run.lines == [
        *HEADER,
        "partition: t-0\tlow_watermark: 4",
        "partition: t-1\tlow_watermark: 3",
    ]
    assert log_starts(kafka.bootstrap, "t", 2) == [4, 3]
    assert log_starts(kafka.bootstrap, "u", 1) == [0]


def test_a_partition_a_consuming_group_has_not_committed_is_left_alone(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    commit(kafka.bootstrap, "g1", [("t", 0, 5), ("t", 1, 5)])
    commit(kafka.bootstrap, "g2", [("t", 0, 8)])  # g2 consumes t, has read nothing of t-1
    run = tool(lethe, kafka.bootstrap, "--topic", "t")
    assert run.status == 0, run.err
    assert run.lines == [*HEADER, "partition: t-0\tlow_watermark: 5"]
    assert "skipped: t-1: group g2 has no committed offset for it" in run.err
    assert log_starts(kafka.bootstrap, "t", 2) == [5, 0]


def test_nothing_is_trimmed_when_no_group_has_committed(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = tool(lethe, kafka.bootstrap)
    assert run.status == 0, run.err
    assert run.lines == HEADER
    assert run.err.splitlines() == [
        f"skipped: {tp}: no consumer group consumes the topic" for tp in ("t-0", "t-1", "u-0")
    ]
    assert log_starts(kafka.bootstrap, "t", 2) == [0, 0]


def test_a_dry_run_prints_the_trims_and_deletes_nothing(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    commit(kafka.bootstrap, "g1", [("t", 0, 4), ("t", 1, 7), ("u", 0, 2)])
    run = tool(lethe, kafka.bootstrap, "--dry-run")
    assert run.status == 0, run.err
    assert run.lines == [
        "Records delete operation (dry run, nothing deleted):",
        "partition: t-0\tlow_watermark: 4",
        "partition: t-1\tlow_watermark: 7",
        "partition: u-0\tlow_watermark: 2",
    ]
    assert log_starts(kafka.bootstrap, "t", 2) == [0, 0]
    assert log_starts(kafka.bootstrap, "u", 1) == [0]


def test_an_offset_past_the_high_watermark_trims_to_the_high_watermark(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    commit(kafka.bootstrap, "g1", [("u", 0, 1000)])
    run = tool(lethe, kafka.bootstrap, "--topic", "u")
    assert run.lines == [*HEADER, "partition: u-0\tlow_watermark: 10"]
    assert log_starts(kafka.bootstrap, "u", 1) == [10]
    again = tool(lethe, kafka.bootstrap, "--topic", "u")  # nothing left to move
    assert again.lines == HEADER
    assert "skipped: u-0: min committed offset 1000 is not above the log start offset 10" in (
        again.err
    )


def test_an_unknown_topic_or_an_unreachable_broker_deletes_nothing_and_fails(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = tool(lethe, kafka.bootstrap, "--topic", "missing")
    assert run.status == 1
    assert run.out == ""
    assert run.err.startswith("lethe consumed-retention: nothing deleted: topic missing")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        unused_port = probe.getsockname()[1]
    gone = tool(lethe, f"127.0.0.1:{unused_port}")
    assert gone.status == 1
    assert gone.out == ""


# -- the plan alone (KIP68-CLI-2, -CLI-3) -------------------------------------------------

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_a_subscribed_group_without_offsets_holds_back_every_partition() -> None:
    bounds = {T0: PartitionBounds(0, 10), T1: PartitionBounds(0, 10)}
    plan = plan_trims(bounds, {"g1": {T0: 5, T1: 5}, "g2": {}}, {"g2": {"t"}})
    assert plan.trims == {}
    assert plan.skipped == {tp: "group g2 has no committed offset for it" for tp in (T0, T1)}


def test_groups_of_other_topics_do_not_count() -> None:
    other = TopicPartition("other", 0)
    plan = plan_trims({T0: PartitionBounds(2, 10)}, {"g1": {T0: 6}, "g2": {other: 1}}, {})
    assert plan.trims == {T0: 6}


def test_a_trim_never_moves_the_log_start_offset_backwards() -> None:
    plan = plan_trims({T0: PartitionBounds(8, 10)}, {"g1": {T0: 6}}, {})
    assert plan.trims == {}
    assert plan.skipped[T0] == "min committed offset 6 is not above the log start offset 8"
