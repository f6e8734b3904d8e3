"""The extensions seen by stock clients: KIP-87 down-conversion and KIP-68's tool.

KIP87-PRD-7: librdkafka (confluent-kafka), kafka-python and aiokafka know nothing of
the tombstone flag and never send the Fetch tag 10087; on a flag-enabled topic they
must read a flagged tombstone as a null value (the KIP's migration plan), every
other record as produced. KIP87-PRD-8: on a topic without the flag they read the
value as stored, exactly what Kafka would send. KIP87-PRD-6: lethe's own consumer,
which sends the tag, gets the flag and the value back. KIP68-CLI-2: a kafka-python
group that subscribed to the topic but has not committed holds the tool back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as AioTopicPartition
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from interop_support import CLIENT_TIMEOUT_S, Rec
from kafka import KafkaConsumer
from kafka import TopicPartition as PyTopicPartition
from kafka.structs import OffsetAndMetadata
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config
from lethe_tools.cli import main
from lethe_tools.kafka_client.admin import AdminClient
from lethe_tools.kafka_client.config import ClientConfig, parse_bootstrap_servers
from lethe_tools.kafka_client.extensions import (
    Consumer,
    Producer,
    ProducerRecord,
    TopicPartition,
)
from lethe_tools.kafka_client.topic_admin import TopicCaller

TS = 1_700_000_000_000
FLAGGED = {"cleanup.policy": "compact", "tombstone.flag.enable": "true"}
HEADERS = (("who", b"ops"),)
#: What was produced: a flagged delete with a reason, an update, a null tombstone,
#: and a flagged delete without a header.
PRODUCED = [
    ProducerRecord(
        "", b"gone, with a reason", b"k1", timestamp_ms=TS, headers=HEADERS, tombstone=True
    ),
    ProducerRecord("", b"kept", b"k2", timestamp_ms=TS + 1),
    ProducerRecord("", None, b"k3", timestamp_ms=TS + 2),
    ProducerRecord("", b"bye", b"k4", timestamp_ms=TS + 3, tombstone=True),
]
AS_STORED = [
    Rec(0, 0, b"k1", b"gone, with a reason", TS, HEADERS),
    Rec(0, 1, b"k2", b"kept", TS + 1),
    Rec(0, 2, b"k3", None, TS + 2),
    Rec(0, 3, b"k4", b"bye", TS + 3),
]
#: What a consumer that does not know the flag must see (KIP87-PRD-7).
DOWN_CONVERTED = [
    Rec(0, 0, b"k1", None, TS, HEADERS),
    Rec(0, 1, b"k2", b"kept", TS + 1),
    Rec(0, 2, b"k3", None, TS + 2),
    Rec(0, 3, b"k4", None, TS + 3),
]


def create(bootstrap: str, name: str, configs: dict[str, str]) -> None:
    with AdminClient(ClientConfig(parse_bootstrap_servers(bootstrap))) as admin:
        TopicCaller(admin).create_topic(name, 1, 1, configs, 30_000)


def produce(bootstrap: str, name: str) -> None:
    with Producer(bootstrap) as producer:
        offsets = [producer.send(replace(r, topic=name)).offset for r in PRODUCED]
    assert offsets == [0, 1, 2, 3]


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A broker of this module's own with KIP-87 switched on (``lethe.kip87.enable``):
    the session's broker keeps the extensions off, as a stock broker is."""
    overrides = {"group.initial.rebalance.delay.ms": "0", "lethe.kip87.enable": "true"}
    log_dir = tmp_path_factory.mktemp("kip87-interop-broker")
    with EmbeddedBroker(log_dir, config=broker_config(overrides=overrides)) as broker:
        yield broker.bootstrap


@pytest.fixture
def flagged(bootstrap: str, topic: str) -> str:
    create(bootstrap, topic, FLAGGED)
    produce(bootstrap, topic)
    return topic


@pytest.fixture
def plain(bootstrap: str, topic: str) -> str:
    create(bootstrap, topic, {"cleanup.policy": "compact"})
    produce(bootstrap, topic)
    return topic


def read_all(poll: Callable[[], list[Rec]]) -> list[Rec]:
    """Poll until every produced record was read, within the client time bound."""
    out: list[Rec] = []
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    while len(out) < len(PRODUCED):
        assert time.monotonic() < deadline, f"read {len(out)} records in time"
        out += poll()
    return out


def read_confluent(bootstrap: str, name: str) -> list[Rec]:
    consumer = ConfluentConsumer(
        {"bootstrap.servers": bootstrap, "group.id": f"{name}-c", "enable.auto.commit": False}
    )

    def poll() -> list[Rec]:
        message = consumer.poll(0.5)
        if message is None:
            return []
        assert message.error() is None, message.error()
        headers = tuple(message.headers() or ())
        stamp = message.timestamp()[1]
        return [Rec(0, message.offset(), message.key(), message.value(), stamp, headers)]

    try:
        consumer.assign([ConfluentTopicPartition(name, 0, 0)])
        return read_all(poll)
    finally:
        consumer.close()


def read_kafka_python(bootstrap: str, name: str) -> list[Rec]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=30_000)

    def poll() -> list[Rec]:
        return [
            Rec(0, m.offset, m.key, m.value, m.timestamp, tuple(m.headers))
            for batch in consumer.poll(timeout_ms=500).values()
            for m in batch
        ]

    try:
        consumer.assign([PyTopicPartition(name, 0)])
        consumer.seek(PyTopicPartition(name, 0), 0)
        return read_all(poll)
    finally:
        consumer.close()


def read_aiokafka(bootstrap: str, name: str) -> list[Rec]:
    async def read() -> list[Rec]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
        await asyncio.wait_for(consumer.start(), CLIENT_TIMEOUT_S)
        try:
            consumer.assign([AioTopicPartition(name, 0)])
            consumer.seek(AioTopicPartition(name, 0), 0)
            out: list[Rec] = []
            deadline = time.monotonic() + CLIENT_TIMEOUT_S
            while len(out) < len(PRODUCED):
                assert time.monotonic() < deadline, f"read {len(out)} records in time"
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=500), CLIENT_TIMEOUT_S)
                for messages in batches.values():
                    out += [
                        Rec(0, m.offset, m.key, m.value, m.timestamp, tuple(m.headers))
                        for m in messages
                    ]
            return out
        finally:
            await asyncio.wait_for(consumer.stop(), CLIENT_TIMEOUT_S)

    return asyncio.run(read())


STOCK: dict[str, Callable[[str, str], list[Rec]]] = {
    "librdkafka": read_confluent,
    "kafka-python": read_kafka_python,
    "aiokafka": read_aiokafka,
}


@pytest.mark.parametrize("client", sorted(STOCK))
def test_stock_clients_read_flagged_tombstones_as_null_values(
    bootstrap: str, flagged: str, client: str
) -> None:
    assert STOCK[client](bootstrap, flagged) == DOWN_CONVERTED


@pytest.mark.parametrize("client", sorted(STOCK))
def test_stock_clients_read_a_topic_without_the_flag_as_stored(
    bootstrap: str, plain: str, client: str
) -> None:
    assert STOCK[client](bootstrap, plain) == AS_STORED


def test_lethes_consumer_round_trips_the_flag(bootstrap: str, flagged: str) -> None:
    with Consumer(bootstrap) as consumer:
        consumer.assign([TopicPartition(flagged, 0)])
        got = consumer.poll()
    assert [Rec(0, r.offset, r.key, r.value, r.timestamp, r.headers) for r in got] == AS_STORED
    assert [r.is_tombstone for r in got] == [True, False, True, True]


# -- KIP-68's tool with a stock consumer group -----------------------------------------


@pytest.fixture
def run_tool(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    def run(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        status = main(["consumed-retention", *argv])
        return status, capsys.readouterr().out

    return run


@pytest.fixture
def subscribed(bootstrap: str, topic: str) -> Iterator[KafkaConsumer]:
    """A kafka-python group member subscribed to ``topic``, which has not committed."""
    create(bootstrap, topic, {})
    produce(bootstrap, topic)
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"{topic}-reader",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        request_timeout_ms=30_000,
    )
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    while not consumer.assignment():
        assert time.monotonic() < deadline, "the group never assigned the partition"
        consumer.poll(timeout_ms=200)
    yield consumer
    consumer.close()


def test_a_subscribed_group_that_has_not_committed_holds_the_tool_back(
    bootstrap: str,
    topic: str,
    subscribed: KafkaConsumer,
    run_tool: Callable[..., tuple[int, str]],
) -> None:
    """KIP68-CLI-2: another group committed 3, the subscribed one nothing: no trim;
    once the subscribed one commits 2, the partition goes to 2 (the lower)."""
    tp = PyTopicPartition(topic, 0)
    other = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=f"{topic}-done", enable_auto_commit=False
    )
    try:
        other.assign([tp])
        other.commit({tp: OffsetAndMetadata(3, "", -1)})
    finally:
        other.close()
    status, out = run_tool("--bootstrap-server", bootstrap, "--topic", topic)
    assert (status, out.splitlines()[2:]) == (0, [])
    subscribed.commit({tp: OffsetAndMetadata(2, "", -1)})
    status, out = run_tool("--bootstrap-server", bootstrap, "--topic", topic)
    assert (status, out.splitlines()[2:]) == (0, [f"partition: {topic}-0\tlow_watermark: 2"])
