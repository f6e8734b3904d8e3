"""lethe's client for the extensions (``lethe_tools.kafka_client.extensions``) on the wire.

KIP-694 (catalog KIP694-API-6): ``ExtensionAdmin.delete_partitions`` shrinks a topic
on a three-broker embedded cluster, at once or after a delay; the broker state is
read from the brokers, never from the client's answer. KIP-87 (KIP87-PRD-4, -PRD-6,
-PRD-7): a flag set on a ``ProducerRecord`` is stored as bit 0 and comes back as
``is_tombstone`` to a flag-aware ``Consumer``; a consumer that does not send the
signal gets the value null, as the KIP's migration plan wants for old consumers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.embedded_cluster import EmbeddedCluster
from lethe_reference.partitions.state import PartitionMode
from lethe_reference.server.defaults import broker_config
from lethe_tools.kafka_client.admin import AdminClient
from lethe_tools.kafka_client.config import ClientConfig, parse_bootstrap_servers
from lethe_tools.kafka_client.extensions import (
    Consumer,
    ConsumerRecord,
    DeletePartitions,
    ExtensionAdmin,
    ExtensionError,
    Producer,
    ProducerRecord,
    TopicPartition,
)
from lethe_tools.kafka_client.topic_admin import TopicCaller

START_MS = 1_800_000_000_000
KIP694 = {
    "delete.topic.partition.enable": "true",
    "delete.topic.partition.interval.delay.ms": "1000",
    "log.segment.delete.delay.ms": "0",
}
READ_ONLY, NONE = 1, -1


def create(bootstrap: str, topic: str, partitions: int, factor: int, **configs: str) -> None:
    with AdminClient(ClientConfig(parse_bootstrap_servers(bootstrap))) as admin:
        TopicCaller(admin).create_topic(topic, partitions, factor, configs, 30_000)


def partition_counts(cluster: EmbeddedCluster, topic: str) -> list[int]:
    """The topic's partition count as each broker's own metadata has it."""

    def read(node: int) -> int:
        info = cluster.broker(node).metadata.get(topic)
        assert info is not None
        return info.partitions

    return [cluster.call(lambda n=node: read(n)) for node in (1, 2, 3)]  # type: ignore[misc]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(tmp_path, 3, overrides=KIP694, clock=ManualClock(START_MS)) as c:
        create(c.bootstrap, "t", 4, 3)
        yield c


# -- KIP-694 -----------------------------------------------------------------------


def test_delete_partitions_shrinks_a_topic_on_the_embedded_cluster_at_once(
    cluster: EmbeddedCluster,
) -> None:
    with ExtensionAdmin(cluster.bootstrap) as admin:
        result = admin.delete_partitions({"t": DeletePartitions(total_count=2)})
    assert result["t"].error is None
    assert dict(result["t"].modes) == {2: NONE, 3: NONE}
    cluster.advance(1000)  # the deletion check removes the replicas on every broker
    assert partition_counts(cluster, "t") == [2, 2, 2]
    assert cluster.call(lambda: cluster.broker(1).log("t", 3)) is None


def test_a_delayed_delete_partitions_keeps_them_read_only_until_the_delay_passed(
    cluster: EmbeddedCluster,
) -> None:
    wanted = DeletePartitions(total_count=3, immediate_delete=False, delay_ms=5000)
    with ExtensionAdmin(cluster.bootstrap) as admin:
        result = admin.delete_partitions({"t": wanted})
    assert result["t"].error is None
    assert dict(result["t"].modes) == {3: READ_ONLY}
    info = cluster.call(lambda: cluster.broker(2).metadata.get("t"))
    assert info is not None and info.mode(3) is PartitionMode.READ_ONLY
    cluster.advance(6000)
    assert partition_counts(cluster, "t") == [3, 3, 3]


def test_delete_partitions_reports_each_topics_refusal_without_raising(
    cluster: EmbeddedCluster,
) -> None:
    with ExtensionAdmin(cluster.bootstrap) as admin:
        result = admin.delete_partitions(
            {"t": DeletePartitions(total_count=5), "missing": DeletePartitions(total_count=1)}
        )
    assert result["t"].error is not None
    assert result["t"].error.simple_name == "InvalidPartitionsException"
    assert result["missing"].error is not None
    assert result["missing"].error.simple_name == "UnknownTopicOrPartitionException"
    assert partition_counts(cluster, "t") == [4, 4, 4]


def test_delete_partitions_on_a_broker_without_the_extension_fails_every_topic(
    tmp_path: Path,
) -> None:
    with EmbeddedBroker(tmp_path, config=broker_config(), clock=ManualClock(START_MS)) as kafka:
        create(kafka.bootstrap, "t", 2, 1)
        with ExtensionAdmin(kafka.bootstrap) as admin:
            result = admin.delete_partitions({"t": DeletePartitions(total_count=1)})
    assert result["t"].error is not None
    assert result["t"].error.simple_name == "UnsupportedVersionException"


def test_delete_partitions_arguments_are_checked_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="total_count"):
        DeletePartitions(total_count=0)
    with pytest.raises(ValueError, match="delay_ms"):
        DeletePartitions(total_count=1, immediate_delete=True, delay_ms=100)


# -- KIP-87 ------------------------------------------------------------------------


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    config = broker_config(overrides={"lethe.kip87.enable": "true"})
    with EmbeddedBroker(tmp_path, config=config, clock=ManualClock(START_MS)) as broker:
        flagged = {"cleanup.policy": "compact", "tombstone.flag.enable": "true"}
        create(broker.bootstrap, "flagged", 1, 1, **flagged)
        create(broker.bootstrap, "plain", 1, 1, **{"cleanup.policy": "compact"})
        yield broker


def produce_three(kafka: EmbeddedBroker, topic: str) -> list[int]:
    stamp: dict[str, Any] = {"timestamp_ms": START_MS, "headers": (("who", b"ops"),)}
    records = [
        ProducerRecord(topic, b"gone, with a reason", b"k1", tombstone=True, **stamp),
        ProducerRecord(topic, b"an update", b"k2", **stamp),
        ProducerRecord(topic, None, b"k3", **stamp),  # KIP-87: a null value is a tombstone
    ]
    with Producer(kafka.bootstrap) as producer:
        return [producer.send(record).offset for record in records]


def consume(kafka: EmbeddedBroker, topic: str, *, aware: bool) -> list[ConsumerRecord]:
    with Consumer(kafka.bootstrap, tombstone_flag_aware=aware) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        return consumer.poll()


def test_a_flag_aware_consumer_reads_the_flag_and_the_value_as_produced(
    kafka: EmbeddedBroker,
) -> None:
    assert produce_three(kafka, "flagged") == [0, 1, 2]
    got = [
        (r.offset, r.key, r.value, r.is_tombstone) for r in consume(kafka, "flagged", aware=True)
    ]
    assert got == [
        (0, b"k1", b"gone, with a reason", True),
        (1, b"k2", b"an update", False),
        (2, b"k3", None, True),
    ]
    first = consume(kafka, "flagged", aware=True)[0]
    assert (first.timestamp, first.headers) == (START_MS, (("who", b"ops"),))


def test_a_consumer_without_the_signal_gets_flagged_values_null(kafka: EmbeddedBroker) -> None:
    produce_three(kafka, "flagged")
    got = [(r.key, r.value, r.is_tombstone) for r in consume(kafka, "flagged", aware=False)]
    assert got == [(b"k1", None, True), (b"k2", b"an update", False), (b"k3", None, True)]


def test_on_a_topic_without_the_flag_every_consumer_gets_the_records_as_stored(
    kafka: EmbeddedBroker,
) -> None:
    produce_three(kafka, "plain")
    got = [(r.key, r.value) for r in consume(kafka, "plain", aware=False)]
    assert got == [(b"k1", b"gone, with a reason"), (b"k2", b"an update"), (b"k3", None)]


def test_a_null_value_that_is_not_a_tombstone_is_refused_by_the_producer_record() -> None:
    assert ProducerRecord("t", None, b"k").is_tombstone
    assert not ProducerRecord("t", b"v", b"k").is_tombstone
    with pytest.raises(ValueError, match="must be a tombstone"):
        ProducerRecord("t", None, b"k", tombstone=False)


def test_consumer_position_follows_the_records_read(kafka: EmbeddedBroker) -> None:
    produce_three(kafka, "flagged")
    tp = TopicPartition("flagged", 0)
    with Consumer(kafka.bootstrap) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 1)
        assert [r.offset for r in consumer.poll()] == [1, 2]
        assert consumer.position(tp) == 3
        assert consumer.poll() == []


# -- leaders move ------------------------------------------------------------------


def test_producer_and_consumer_follow_a_leader_that_moved(cluster: EmbeddedCluster) -> None:
    """After an election the old leader answers NOT_LEADER_OR_FOLLOWER (6); the client
    forgets the leader it cached, asks Metadata again and sends to the new one."""
    tp = TopicPartition("t", 0)
    state = cluster.partition_state("t", 0)
    assert state is not None and state.leader == 1
    with Producer(cluster.bootstrap) as producer, Consumer(cluster.bootstrap) as consumer:
        consumer.assign([tp])
        assert producer.send(ProducerRecord("t", b"before", b"k")).offset == 0
        assert [r.value for r in consumer.poll()] == [b"before"]
        moved = cluster.move_leader("t", 0, 2)
        assert (moved.leader, moved.leader_epoch) == (2, 1)
        assert producer.send(ProducerRecord("t", b"after", b"k")).offset == 1
        assert [(r.offset, r.value) for r in consumer.poll()] == [(1, b"after")]
    leader_end = cluster.call(lambda: cluster.broker(2).log("t", 0).log_end_offset)  # type: ignore[union-attr]
    assert leader_end == 2


def test_a_partition_without_a_leader_is_not_retried_as_unknown(cluster: EmbeddedCluster) -> None:
    with Producer(cluster.bootstrap) as producer, pytest.raises(ExtensionError) as raised:
        producer.send(ProducerRecord("t", b"v", b"k", partition=9))
    assert raised.value.java.simple_name == "UnknownTopicOrPartitionException"
