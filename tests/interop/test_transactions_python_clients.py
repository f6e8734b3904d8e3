"""kafka-python 3.0 and aiokafka 0.14 transactional producers and read_committed
consumers against ``lethe broker`` from the CLI.

Kafka 4.0's rules (as in the confluent-kafka tests): one marker batch per
transaction end, read_committed consumers see committed records only, and
stop at the last stable offset while a transaction is open.
"""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from interop_support import CLIENT_TIMEOUT_S
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KTopicPartition
from txn_support import BrokerProcess, cli_broker, create_topic, read_partition

__all__ = ["cli_broker"]

T = CLIENT_TIMEOUT_S


def _kafka_python_read(bootstrap: str, topic: str) -> list[tuple[int, bytes]]:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level="read_committed",
        enable_auto_commit=False,
        consumer_timeout_ms=3000,
    )
    consumer.assign([KTopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    out = [(m.offset, m.value) for m in consumer]
    consumer.close()
    return out


def test_kafka_python_transactional_producer(cli_broker: BrokerProcess) -> None:
    bootstrap, topic = cli_broker.bootstrap, "kp-txn"
    create_topic(bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="kp-tx-1")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, b"c1").get(T)
    producer.commit_transaction()
    producer.begin_transaction()
    producer.send(topic, b"a1").get(T)
    producer.abort_transaction()
    producer.begin_transaction()
    producer.send(topic, b"c2").get(T)
    producer.commit_transaction()
    producer.close(T)
    # c1 0, COMMIT 1, a1 2, ABORT 3, c2 4, COMMIT 5
    assert _kafka_python_read(bootstrap, topic) == [(0, b"c1"), (4, b"c2")]
    assert read_partition(bootstrap, topic, "read_committed") == [(0, b"c1"), (4, b"c2")]
    assert [v for _, v in read_partition(bootstrap, topic, "read_uncommitted")] == [
        b"c1", b"a1", b"c2",
    ]  # fmt: skip


async def _aiokafka_produce_and_read(bootstrap: str, topic: str) -> list[tuple[int, bytes]]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id="aio-tx-1")
    await asyncio.wait_for(producer.start(), T)
    try:
        async with producer.transaction():
            await producer.send_and_wait(topic, b"c1")
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"a1")
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send_and_wait(topic, b"c2")
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False
    )
    await asyncio.wait_for(consumer.start(), T)
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        await consumer.seek_to_beginning(partition)
        batches = await asyncio.wait_for(consumer.getmany(partition, timeout_ms=3000), T)
        return [(m.offset, m.value) for m in batches.get(partition, [])]
    finally:
        await consumer.stop()


def test_aiokafka_transactional_producer(cli_broker: BrokerProcess) -> None:
    bootstrap, topic = cli_broker.bootstrap, "aio-txn"
    create_topic(bootstrap, topic)
    read = asyncio.run(asyncio.wait_for(_aiokafka_produce_and_read(bootstrap, topic), 3 * T))
    assert read == [(0, b"c1"), (4, b"c2")]
    assert read_partition(bootstrap, topic, "read_committed") == [(0, b"c1"), (4, b"c2")]
