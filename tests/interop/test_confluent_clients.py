"""confluent-kafka's Producer and Consumer (librdkafka) against the reference broker.

What Kafka guarantees and these tests pin: offsets are assigned from 0 in
order per partition; a record reads back with the key, value, headers and
CreateTime timestamp it was produced with; a consumer group that committed
offset N resumes at N after its members restart.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_support import produce, sample
from interop_support import CLIENT_TIMEOUT_S, Rec

TIMEOUT = CLIENT_TIMEOUT_S


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1)], request_timeout=TIMEOUT
    )
    futures[name].result(timeout=TIMEOUT)


def test_acks_1_producer_gets_consecutive_offsets_and_its_timestamps(
    bootstrap: str, topic: str
) -> None:
    create_topic(bootstrap, topic)
    records = sample(5)
    reports = produce(bootstrap, topic, records, acks=1, **{"enable.idempotence": False})
    assert reports == [(0, r.offset, r.timestamp) for r in records]


def as_rec(message: Message) -> Rec:
    headers = tuple((k, v) for k, v in (message.headers() or []))
    return Rec(
        message.partition(),
        message.offset(),
        message.key(),
        message.value(),
        message.timestamp()[1],
        headers,
    )


def consume(consumer: Consumer, count: int) -> list[Rec]:
    out: list[Rec] = []
    deadline = time.monotonic() + TIMEOUT
    while len(out) < count:
        assert time.monotonic() < deadline, f"read {len(out)} of {count} records in time"
        message = consumer.poll(0.5)
        if message is None:
            continue
        assert message.error() is None, message.error()
        out.append(as_rec(message))
    return out


def group_consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "fetch.wait.max.ms": 100,
            "socket.timeout.ms": 10000,
        }
    )


def test_idempotent_acks_all_producer_continues_the_offsets(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic)
    first = produce(bootstrap, topic, sample(3), acks=1)
    second = produce(
        bootstrap, topic, sample(4, start=3), acks="all", **{"enable.idempotence": True}
    )
    assert [offset for _, offset, _ in first + second] == list(range(7))


def test_group_consumer_reads_back_everything_and_resumes_from_its_commit(
    bootstrap: str, topic: str
) -> None:
    create_topic(bootstrap, topic)
    group = f"{topic}-group"
    first = sample(6)
    produce(bootstrap, topic, first, acks="all")

    consumer = group_consumer(bootstrap, group)
    consumer.subscribe([topic])
    assert consume(consumer, 6) == first
    consumer.commit(asynchronous=False)
    (committed,) = consumer.committed([TopicPartition(topic, 0)], timeout=TIMEOUT)
    assert committed.offset == 6
    consumer.close()

    second = sample(3, start=6)
    produce(bootstrap, topic, second, acks="all")
    restarted = group_consumer(bootstrap, group)
    restarted.subscribe([topic])
    try:
        assert consume(restarted, 3) == second
        low, high = restarted.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)
        assert (low, high) == (0, 9)
    finally:
        restarted.close()
