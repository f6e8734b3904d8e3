"""Transactions with real clients: ``lethe broker`` started from the CLI, as a
user runs it, and reading a partition back at either isolation level.

The broker is one child process per test module (``BrokerProcess`` of the
server tests: a free port, its own log directory); the timeout check of
``transaction.abort.timed.out.transaction.cleanup.interval.ms`` runs every
200 ms so a timed-out transaction is aborted quickly, and a group rebalances
at once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from interop_support import CLIENT_TIMEOUT_S

sys.path.insert(0, str(Path(__file__).parents[1] / "reference" / "server"))
from broker_process import BrokerProcess

__all__ = ["BrokerProcess", "cli_broker", "create_topic", "read_partition", "running_broker"]

OVERRIDES = {
    "group.initial.rebalance.delay.ms": "0",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
}


def running_broker(
    tmp_path_factory: pytest.TempPathFactory, name: str, overrides: dict[str, str]
) -> Iterator[BrokerProcess]:
    """``lethe broker`` with ``overrides`` in a fresh directory, stopped afterwards
    (the body of a module fixture)."""
    process = BrokerProcess(tmp_path_factory.mktemp(name) / "logs", overrides)
    process.start()
    yield process
    if process.process is not None:
        process.stop()


@pytest.fixture(scope="module")
def cli_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """``lethe broker`` for the module's tests."""
    yield from running_broker(tmp_path_factory, "txn-broker", OVERRIDES)


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=CLIENT_TIMEOUT_S)
    futures[name].result(timeout=CLIENT_TIMEOUT_S)


def read_partition(
    bootstrap: str, topic: str, isolation: str, partition: int = 0
) -> list[tuple[int, bytes | None]]:
    """(offset, value) of every record a consumer at ``isolation`` reads, up to the end
    (the last stable offset for read_committed)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{time.monotonic_ns()}",
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    out: list[tuple[int, bytes | None]] = []
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                return out
            out.append((message.offset(), message.value()))
    finally:
        consumer.close()
    raise AssertionError(f"no end of partition in time after {out}")
