"""confluent-kafka (librdkafka) helpers shared by the interop tests; every call is bounded."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    OffsetSpec,
    ResourceType,
)
from interop_support import CLIENT_TIMEOUT_S, Rec, golden_produce_rounds

__all__ = [
    "BASE_TS",
    "REQUEST",
    "TIMEOUT",
    "admin_client",
    "create",
    "delete_records",
    "describe",
    "list_offsets",
    "produce",
    "produce_golden_rounds",
    "sample",
]

TIMEOUT = CLIENT_TIMEOUT_S
BASE_TS = 1_700_000_000_000
REQUEST = {"request_timeout": TIMEOUT}


def admin_client(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})


def create(admin: AdminClient, name: str, partitions: int, config: dict[str, str]) -> None:
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1, config=config)],
        operation_timeout=TIMEOUT,
        **REQUEST,
    )
    assert futures[name].result(timeout=TIMEOUT) is None


def describe(admin: AdminClient, name: str) -> dict[str, ConfigEntry]:
    resource = ConfigResource(ResourceType.TOPIC, name)
    entries: dict[str, ConfigEntry] = admin.describe_configs([resource], **REQUEST)[
        resource
    ].result(timeout=TIMEOUT)
    return entries


def list_offsets(
    admin: AdminClient, name: str, partitions: range, spec: OffsetSpec
) -> dict[int, tuple[int, int, int | None]]:
    request = {TopicPartition(name, p): spec for p in partitions}
    futures = admin.list_offsets(request, **REQUEST)
    out = {}
    for tp, future in futures.items():
        info = future.result(timeout=TIMEOUT)
        out[tp.partition] = (info.offset, info.timestamp, info.leader_epoch)
    return out


def delete_records(admin: AdminClient, name: str, offsets: dict[int, int]) -> dict[int, object]:
    """partition -> low watermark, or the KafkaError the future failed with."""
    futures = admin.delete_records(
        [TopicPartition(name, p, o) for p, o in offsets.items()],
        operation_timeout=TIMEOUT,
        **REQUEST,
    )
    out: dict[int, object] = {}
    for tp, future in futures.items():
        try:
            out[tp.partition] = future.result(timeout=TIMEOUT).low_watermark
        except KafkaException as error:
            out[tp.partition] = error.args[0].code()
    return out


def produce_golden_rounds(
    bootstrap: str, name: str, *, idempotent: bool
) -> list[tuple[int, int, int]]:
    """The golden rounds, one flush each; (partition, offset, timestamp) delivery reports.

    The golden producer was idempotent; the offsets, timestamps and low watermarks
    Kafka gave do not depend on it, so the tests run both kinds."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": idempotent,
            "acks": "all",
            "linger.ms": 100,
            "compression.type": "none",
            "message.timeout.ms": int(TIMEOUT * 1000),
        }
    )
    reports: list[tuple[int, int, int]] = []

    def delivered(error: KafkaError | None, message: Message) -> None:
        assert error is None, error
        reports.append((message.partition(), message.offset(), message.timestamp()[1]))

    for records in golden_produce_rounds():
        for record in records:
            producer.produce(
                name,
                key=record.key,
                value=record.value,
                partition=record.partition,
                timestamp=record.timestamp,
                on_delivery=delivered,
            )
        assert producer.flush(TIMEOUT) == 0
    return reports


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
