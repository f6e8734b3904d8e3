"""kafka-python (KafkaProducer, KafkaConsumer with a group, KafkaAdminClient) against the broker.

Expected values: the golden wire capture's kafka-python phases (Kafka 4.0 gave
offsets 0..5, low watermark 2 for a delete at 2, OffsetOutOfRangeError above the
high watermark, PolicyViolationError on a compact topic), and Kafka's produce /
consume / commit guarantees.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from interop_support import CLIENT_TIMEOUT_S, Rec
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import OffsetOutOfRangeError, PolicyViolationError

TIMEOUT_MS = int(CLIENT_TIMEOUT_S * 1000)
BASE_TS = 1_700_000_100_000


@pytest.fixture
def admin(bootstrap: str) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_MS)
    yield client
    client.close()


def create(admin: KafkaAdminClient, name: str, configs: dict[str, str] | None = None) -> None:
    """Create a one-partition topic (errors raise) and wait until metadata shows its leader."""
    spec = {"num_partitions": 1, "replication_factor": 1, "configs": configs or {}}
    response = admin.create_topics({name: spec}, timeout_ms=TIMEOUT_MS, wait_for_metadata=True)
    assert [t["error_code"] for t in response["topics"]] == [0]


def records(count: int, start: int = 0) -> list[Rec]:
    return [
        Rec(
            0,
            start + i,
            None if i == 1 else f"door-{start + i}".encode(),
            None if i == 2 else f"state {start + i}".encode(),
            BASE_TS + 10 * (start + i),
            (("h", f"{start + i}".encode()),),
        )
        for i in range(count)
    ]


def produce(bootstrap: str, name: str, batch: list[Rec], **config: object) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_MS, **config)
    try:
        futures = [
            producer.send(
                name,
                key=r.key,
                value=r.value,
                partition=0,
                timestamp_ms=r.timestamp,
                headers=list(r.headers),
            )
            for r in batch
        ]
        producer.flush(timeout=CLIENT_TIMEOUT_S)
        metadata = [f.get(timeout=CLIENT_TIMEOUT_S) for f in futures]
    finally:
        producer.close(timeout=CLIENT_TIMEOUT_S)
    assert [m.timestamp for m in metadata] == [r.timestamp for r in batch]
    return [m.offset for m in metadata]


def test_admin_delete_records_low_watermark_and_errors(
    admin: KafkaAdminClient, bootstrap: str, topic: str
) -> None:
    create(admin, topic)
    produce(bootstrap, topic, records(6), acks=1)
    tp = TopicPartition(topic, 0)
    result = admin.delete_records({tp: 2}, timeout_ms=TIMEOUT_MS)
    assert result[tp]["low_watermark"] == 2
    assert result[tp]["error_code"] == 0
    with pytest.raises(OffsetOutOfRangeError):
        admin.delete_records({tp: 7}, timeout_ms=TIMEOUT_MS)

    compact = f"{topic}-kv"
    create(admin, compact, {"cleanup.policy": "compact"})
    with pytest.raises(PolicyViolationError):
        admin.delete_records({TopicPartition(compact, 0): 1}, timeout_ms=TIMEOUT_MS)


def consume(consumer: KafkaConsumer, count: int) -> list[Rec]:
    out: list[Rec] = []
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    while len(out) < count:
        assert time.monotonic() < deadline, f"read {len(out)} of {count} records in time"
        for batch in consumer.poll(timeout_ms=500).values():
            out.extend(
                Rec(m.partition, m.offset, m.key, m.value, m.timestamp, tuple(m.headers))
                for m in batch
            )
    return out


def group_consumer(bootstrap: str, group: str, topic: str) -> KafkaConsumer:
    return KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        fetch_max_wait_ms=100,
        request_timeout_ms=TIMEOUT_MS,
    )


def test_producers_acks_1_then_idempotent_get_offsets_0_to_5(
    admin: KafkaAdminClient, bootstrap: str, topic: str
) -> None:
    create(admin, topic)
    batch = records(6)
    assert produce(bootstrap, topic, batch[:3], acks=1) == [0, 1, 2]
    assert produce(bootstrap, topic, batch[3:], acks="all", enable_idempotence=True) == [3, 4, 5]


def test_group_consumer_reads_back_and_resumes_after_commit(
    admin: KafkaAdminClient, bootstrap: str, topic: str
) -> None:
    create(admin, topic)
    group = f"{topic}-group"
    first = records(6)
    produce(bootstrap, topic, first, acks="all")
    consumer = group_consumer(bootstrap, group, topic)
    try:
        assert consume(consumer, 6) == first
        consumer.commit()
        assert consumer.committed(TopicPartition(topic, 0)) == 6
    finally:
        consumer.close()

    second = records(2, start=6)
    produce(bootstrap, topic, second, acks=1)
    restarted = group_consumer(bootstrap, group, topic)
    try:
        assert consume(restarted, 2) == second
        tp = TopicPartition(topic, 0)
        assert restarted.beginning_offsets([tp]) == {tp: 0}
        assert restarted.end_offsets([tp]) == {tp: 8}
    finally:
        restarted.close()
