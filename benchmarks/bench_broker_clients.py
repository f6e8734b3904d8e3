"""confluent-kafka (librdkafka) producer and consumer loops that measure the broker.

Theory of operation
-------------------
Every record is ``key = index as 8 bytes big-endian`` and a ``value_size``-byte
value (1 KiB in the benchmark), in a one-partition topic. The key ties each
delivery report and each consumed record back to the ``produce()`` call that
made it, so nothing relies on the order of callbacks, and the consumer can
prove it saw every produced record exactly once.

Produce (:func:`produce`): librdkafka batches per partition (``linger.ms``,
``batch.size``) on its own threads; the Python loop calls ``produce()`` and
``poll(0)`` after each record so delivery callbacks run promptly. At *max rate*
the loop produces as fast as the client's queue accepts (``BufferError`` when
``queue.buffering.max.kbytes`` is full: poll and retry); at a *fixed rate* record
``i`` is produced at ``start + i / rate``, the loop polling in between. The run
ends with ``flush()``; its seconds run from the first ``produce()`` to the last
delivery report. Latency of a record is ``perf_counter()`` in its delivery
callback minus ``perf_counter()`` just before its (successful) ``produce()``
call. librdkafka's own figure is kept beside it as a cross-check on a second
clock: ``Message.latency()`` is ``rd_kafka_message_latency``, librdkafka's
monotonic clock at the moment it is called (in the callback) minus the time
the record was enqueued by ``produce()`` -- the same interval, not the time
the broker's acknowledgement arrived, whatever its docstring suggests.

At max rate the latency is mostly time queued in the client: the queue bound is
set like Java's default ``buffer.memory`` (32 MiB), as ``kafka-producer-perf-test
--throughput -1`` would run, so the figure is comparable with Kafka's tool.

Consume (:func:`consume`): one consumer, partitions assigned by hand (no group
join, no commits: ``enable.auto.commit=false``); a warm-up topic is read first,
so connections, metadata and the group coordinator lookup librdkafka makes for
any ``group.id`` are done before timing starts, and the measured topic's
metadata is fetched (``list_topics``): without it librdkafka first waits for
its metadata refresh timer, about 0.5 s, to learn the partition's leader.
Timing runs from ``assign()`` of the measured topic at the beginning to the
last expected record. The producer fetches its topic's metadata before timing
starts too, so connecting is not part of a produce phase either.
"""

from __future__ import annotations

import struct
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from bench_timing import BenchError
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

__all__ = [
    "ConsumeRun",
    "ProduceRun",
    "consume",
    "consumer_config",
    "create_topics",
    "produce",
    "producer_config",
]

_KEY = struct.Struct(">Q")
_TIMEOUT_S = 60.0
#: Records per consume() call; asking for no more than remain means no wait at the end.
_BATCH = 10_000
#: Java's default producer buffer.memory (32 MiB), in KiB, for librdkafka's queue bound.
QUEUE_KBYTES = 32 * 1024
FETCH_MAX_BYTES = 64 * 1024 * 1024
#: 4 x librdkafka's and Java's default max.partition.fetch.bytes (1 MiB).
PARTITION_FETCH_BYTES = 4 * 1024 * 1024


def producer_config(bootstrap: str, acks: str) -> dict[str, str | int]:
    return {
        "bootstrap.servers": bootstrap,
        "acks": acks,
        "linger.ms": 5,
        "batch.size": 1_000_000,
        "batch.num.messages": 100_000,
        "compression.type": "none",
        "queue.buffering.max.kbytes": QUEUE_KBYTES,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": "false",
        "socket.timeout.ms": 30_000,
    }


def consumer_config(
    bootstrap: str, partition_fetch_bytes: int = PARTITION_FETCH_BYTES
) -> dict[str, str | int]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "lethe-broker-bench",
        "enable.auto.commit": "false",
        "enable.auto.offset.store": "false",
        "fetch.max.bytes": FETCH_MAX_BYTES,
        "max.partition.fetch.bytes": partition_fetch_bytes,
        "receive.message.max.bytes": FETCH_MAX_BYTES + 1024 * 1024,
        "fetch.wait.max.ms": 100,
        "fetch.min.bytes": 1,
        "queued.max.messages.kbytes": 256 * 1024,
        "socket.timeout.ms": 30_000,
    }


def create_topics(bootstrap: str, names: list[str]) -> None:
    """One-partition topics (replication factor 1), created through the admin API."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 30_000})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=1, replication_factor=1) for name in names],
        operation_timeout=_TIMEOUT_S,
        request_timeout=_TIMEOUT_S,
    )
    for name, future in futures.items():
        future.result(timeout=_TIMEOUT_S)
        if name not in names:
            raise BenchError(f"unexpected topic {name} created")


@dataclass(slots=True)
class ProduceRun:
    """What one produce loop did: counts, bytes, seconds, per-record latencies."""

    records: int
    value_bytes: int = 0
    key_bytes: int = 0
    delivered: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sent: array[float] = field(default_factory=lambda: array("d"))
    latency_s: array[float] = field(default_factory=lambda: array("d"))
    rdkafka_latency_s: array[float] = field(default_factory=lambda: array("d"))

    def on_delivery(self, error: KafkaError | None, message: Message) -> None:
        now = time.perf_counter()
        if error is not None:
            self.errors.append(str(error))
            return
        key = message.key()
        value = message.value()
        if not isinstance(key, bytes) or not isinstance(value, bytes):
            self.errors.append("delivery report without key or value")
            return
        index = _KEY.unpack(key)[0]
        self.latency_s[index] = now - self.sent[index]
        self.rdkafka_latency_s[index] = message.latency() or 0.0
        self.delivered += 1
        self.key_bytes += len(key)
        self.value_bytes += len(value)


def _pacer(rate: float | None, start: float) -> Callable[[Producer, int], None]:
    """Waits (serving callbacks) until record ``i`` is due; no wait at max rate."""
    if rate is None:
        return lambda _producer, _index: None

    def wait(producer: Producer, index: int) -> None:
        due = start + index / rate
        while (left := due - time.perf_counter()) > 0:
            producer.poll(left if left > 0.002 else 0)

    return wait


def produce(
    bootstrap: str,
    topic: str,
    records: int,
    *,
    acks: str,
    value_size: int = 1024,
    rate: float | None = None,
) -> ProduceRun:
    """Produce ``records`` records to partition 0 of ``topic``; see the module docstring."""
    run = ProduceRun(records)
    run.sent = array("d", bytes(8 * records))
    run.latency_s = array("d", bytes(8 * records))
    run.rdkafka_latency_s = array("d", bytes(8 * records))
    value = bytes(range(256)) * (value_size // 256) + bytes(value_size % 256)
    producer = Producer(producer_config(bootstrap, acks) | {"on_delivery": run.on_delivery})
    producer.list_topics(topic, timeout=_TIMEOUT_S)
    start = time.perf_counter()
    wait = _pacer(rate, start)
    for index in range(records):
        key = _KEY.pack(index)
        wait(producer, index)
        while True:
            run.sent[index] = time.perf_counter()
            try:
                producer.produce(topic, value, key, partition=0)
                break
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
    left = producer.flush(_TIMEOUT_S)
    run.seconds = time.perf_counter() - start
    if left or run.errors or run.delivered != records:
        raise BenchError(
            f"produce to {topic}: {run.delivered}/{records} delivered, {left} left in queue, "
            f"errors {run.errors[:3]}"
        )
    return run


@dataclass(slots=True)
class ConsumeRun:
    """What one read of a topic found: counts, bytes, duplicates, seconds."""

    records: int = 0
    value_bytes: int = 0
    key_bytes: int = 0
    duplicates: int = 0
    seconds: float = 0.0


def _read(consumer: Consumer, expected: int, seen: bytearray, run: ConsumeRun) -> None:
    deadline = time.monotonic() + _TIMEOUT_S
    while run.records < expected:
        if time.monotonic() > deadline:
            raise BenchError(f"consume: {run.records}/{expected} records in {_TIMEOUT_S} s")
        for message in consumer.consume(min(_BATCH, expected - run.records), 0.5):
            error = message.error()
            if error is not None:
                raise BenchError(f"consume: {error}")
            key, value = message.key(), message.value()
            if not isinstance(key, bytes) or not isinstance(value, bytes):
                raise BenchError("consume: record without key or value")
            index = _KEY.unpack(key)[0]
            if index >= len(seen):
                raise BenchError(f"consume: key {index} was never produced")
            run.duplicates += seen[index]
            seen[index] = 1
            run.records += 1
            run.key_bytes += len(key)
            run.value_bytes += len(value)


def consume(
    bootstrap: str,
    topic: str,
    expected: int,
    *,
    warmup: tuple[str, int],
    partition_fetch_bytes: int = PARTITION_FETCH_BYTES,
) -> ConsumeRun:
    """Read partition 0 of ``topic`` from the beginning until ``expected`` records arrived."""
    consumer = Consumer(consumer_config(bootstrap, partition_fetch_bytes))
    try:
        warm_topic, warm_records = warmup
        consumer.assign([TopicPartition(warm_topic, 0, OFFSET_BEGINNING)])
        _read(consumer, warm_records, bytearray(warm_records), ConsumeRun())
        consumer.unassign()
        consumer.list_topics(topic, timeout=_TIMEOUT_S)
        seen = bytearray(expected)
        run = ConsumeRun()
        start = time.perf_counter()
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        _read(consumer, expected, seen, run)
        run.seconds = time.perf_counter() - start
    finally:
        consumer.close()
    if run.duplicates or run.records != expected or seen.count(1) != expected:
        raise BenchError(
            f"consume {topic}: {run.records} records, {run.duplicates} duplicates, "
            f"{seen.count(1)} distinct keys of {expected}"
        )
    return run
