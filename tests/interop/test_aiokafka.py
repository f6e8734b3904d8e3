"""aiokafka (AIOKafkaProducer, AIOKafkaConsumer with a group, AIOKafkaAdminClient).

Every awaited call is wrapped in ``asyncio.wait_for``; the expected values are
Kafka's rules: offsets from 0, records read back unchanged, a group resumes at
its committed offset, DeleteRecords returns the requested offset as the low
watermark (at or below the high watermark) and OFFSET_OUT_OF_RANGE above it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic, RecordsToDelete
from aiokafka.errors import OffsetOutOfRangeError, PolicyViolationError
from interop_support import CLIENT_TIMEOUT_S, Rec

T = TypeVar("T")
TIMEOUT_MS = int(CLIENT_TIMEOUT_S * 1000)
BASE_TS = 1_700_000_200_000


async def bounded(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, CLIENT_TIMEOUT_S)


def records(count: int, start: int = 0) -> list[Rec]:
    return [
        Rec(
            0,
            start + i,
            f"k{start + i}".encode(),
            b"\x00\xff" * (start + i),
            BASE_TS + start + i,
            (("seq", str(start + i).encode()),),
        )
        for i in range(count)
    ]


async def create(bootstrap: str, name: str, configs: dict[str, str] | None = None) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_MS)
    await bounded(admin.start())
    try:
        topic = NewTopic(name, num_partitions=1, replication_factor=1, topic_configs=configs or {})
        response = await bounded(admin.create_topics([topic], timeout_ms=TIMEOUT_MS))
        assert [error for _, error, *_ in response.topic_errors] == [0]
    finally:
        await bounded(admin.close())


async def produce(bootstrap: str, name: str, batch: list[Rec], **config: object) -> list[int]:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_MS, **config
    )
    await bounded(producer.start())
    try:
        offsets = []
        for r in batch:
            metadata = await bounded(
                producer.send_and_wait(
                    name,
                    value=r.value,
                    key=r.key,
                    partition=0,
                    timestamp_ms=r.timestamp,
                    headers=list(r.headers),
                )
            )
            assert metadata.timestamp == r.timestamp
            offsets.append(metadata.offset)
        return offsets
    finally:
        await bounded(producer.stop())


async def consume(bootstrap: str, name: str, group: str, count: int) -> list[Rec]:
    consumer = AIOKafkaConsumer(
        name,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        fetch_max_wait_ms=100,
        request_timeout_ms=TIMEOUT_MS,
    )
    await bounded(consumer.start())
    try:
        out: list[Rec] = []
        deadline = time.monotonic() + CLIENT_TIMEOUT_S
        while len(out) < count:
            assert time.monotonic() < deadline, f"read {len(out)} of {count} records in time"
            batches = await bounded(consumer.getmany(timeout_ms=500))
            for messages in batches.values():
                out.extend(
                    Rec(m.partition, m.offset, m.key, m.value, m.timestamp, tuple(m.headers))
                    for m in messages
                )
        await bounded(consumer.commit())
        assert await bounded(consumer.committed(TopicPartition(name, 0))) == out[-1].offset + 1
        return out
    finally:
        await bounded(consumer.stop())


def test_admin_delete_records(bootstrap: str, topic: str) -> None:
    async def scenario() -> None:
        await create(bootstrap, topic)
        await produce(bootstrap, topic, records(5), acks=1)
        compact = f"{topic}-kv"
        await create(bootstrap, compact, {"cleanup.policy": "compact"})
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_MS)
        await bounded(admin.start())
        try:
            tp = TopicPartition(topic, 0)
            deleted = await bounded(admin.delete_records({tp: RecordsToDelete(3)}, TIMEOUT_MS))
            assert deleted == {tp: 3}
            with pytest.raises(OffsetOutOfRangeError):
                await bounded(admin.delete_records({tp: RecordsToDelete(6)}, TIMEOUT_MS))
            with pytest.raises(PolicyViolationError):
                await bounded(
                    admin.delete_records(
                        {TopicPartition(compact, 0): RecordsToDelete(0)}, TIMEOUT_MS
                    )
                )
        finally:
            await bounded(admin.close())

    asyncio.run(scenario())


def test_produce_consume_commit_and_resume(bootstrap: str, topic: str) -> None:
    async def scenario() -> None:
        await create(bootstrap, topic)
        first, second = records(4), records(3, start=4)
        assert await produce(bootstrap, topic, first, acks=1) == [0, 1, 2, 3]
        assert await consume(bootstrap, topic, f"{topic}-g", 4) == first
        assert await produce(bootstrap, topic, second, enable_idempotence=True) == [4, 5, 6]
        assert await consume(bootstrap, topic, f"{topic}-g", 3) == second

    asyncio.run(scenario())
