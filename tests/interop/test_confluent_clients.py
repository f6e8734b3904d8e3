"""confluent-kafka's Producer and Consumer (librdkafka) against the reference broker.

What Kafka guarantees and these tests pin: offsets are assigned from 0 in
order per partition; a record reads back with the key, value, headers and
CreateTime timestamp it was produced with; a consumer group that committed
offset N resumes at N after its members restart.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from interop_support import CLIENT_TIMEOUT_S, Rec

TIMEOUT = CLIENT_TIMEOUT_S
BASE_TS = 1_700_000_000_000


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1)], request_timeout=TIMEOUT
    )
    futures[name].result(timeout=TIMEOUT)


def sample(count: int, start: int = 0) -> list[Rec]:
    """Records with every field set: some null keys, headers, explicit timestamps."""
    return [
        Rec(
            partition=0,
            offset=start + i,
            key=None if i % 4 == 3 else f"key-{start + i}".encode(),
            value=f"value {start + i} \u00e9".encode(),
            timestamp=BASE_TS + 1000 * (start + i),
            headers=(("trace", f"t{start + i}".encode()), ("empty", b"")),
        )
        for i in range(count)
    ]


def produce(
    bootstrap: str, name: str, records: list[Rec], **config: Any
) -> list[tuple[int, int, int]]:
    producer = Producer(
        {"bootstrap.servers": bootstrap, "message.timeout.ms": int(TIMEOUT * 1000), **config}
    )
    reports: list[tuple[int, int, int]] = []

    def delivered(error: KafkaError | None, message: Message) -> None:
        assert error is None, error
        reports.append((message.partition(), message.offset(), message.timestamp()[1]))

    for record in records:
        producer.produce(
            name,
            key=record.key,
            value=record.value,
            partition=record.partition,
            timestamp=record.timestamp,
            headers=list(record.headers),
            on_delivery=delivered,
        )
    assert producer.flush(TIMEOUT) == 0
    return reports


def test_acks_1_producer_gets_consecutive_offsets_and_its_timestamps(
    bootstrap: str, topic: str
) -> None:
    create_topic(bootstrap, topic)
    records = sample(5)
    reports = produce(bootstrap, topic, records, acks=1, **{"enable.idempotence": False})
    assert reports == [(0, r.offset, r.timestamp) for r in records]
