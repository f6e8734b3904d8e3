"""A group consumer in its own process, for the classic-group interop tests.

    python group_member.py LIBRARY BOOTSTRAP TOPIC GROUP SESSION_MS

LIBRARY is ``kafka-python``, ``aiokafka`` or ``confluent-kafka``. The process
subscribes to TOPIC in GROUP and polls until SIGTERM, then closes the consumer (a
LeaveGroup) and exits. Each time its assignment changes it prints one JSON line,
the sorted partition numbers. A separate process lets the test stop heartbeats
without a LeaveGroup (SIGSTOP), which no client offers through its API: the member
then expires on the broker's session timeout, as a crashed consumer does.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from collections.abc import Callable

#: set by SIGTERM: the poll loop ends and the consumer closes
STOP = threading.Event()


def _stop(*_: object) -> None:
    STOP.set()


def _report(previous: list[int] | None, current: list[int]) -> list[int]:
    if current != previous:
        print(json.dumps(current), flush=True)
    return current


def run_kafka_python(bootstrap: str, topic: str, group: str, session_ms: int) -> None:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        session_timeout_ms=session_ms,
        heartbeat_interval_ms=1000,
        enable_auto_commit=False,
    )
    consumer.subscribe([topic])
    seen: list[int] | None = None
    while not STOP.is_set():
        consumer.poll(200)
        seen = _report(seen, sorted(tp.partition for tp in consumer.assignment()))
    consumer.close()


def run_aiokafka(bootstrap: str, topic: str, group: str, session_ms: int) -> None:
    from aiokafka import AIOKafkaConsumer

    async def scenario() -> None:
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            session_timeout_ms=session_ms,
            heartbeat_interval_ms=1000,
            enable_auto_commit=False,
        )
        await consumer.start()
        seen: list[int] | None = None
        while not STOP.is_set():
            await consumer.getmany(timeout_ms=200)
            seen = _report(seen, sorted(tp.partition for tp in consumer.assignment()))
        await consumer.stop()

    asyncio.run(scenario())


def run_confluent(bootstrap: str, topic: str, group: str, session_ms: int) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": session_ms,
            "heartbeat.interval.ms": 1000,
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    seen: list[int] | None = None
    while not STOP.is_set():
        consumer.poll(0.2)
        seen = _report(seen, sorted(tp.partition for tp in consumer.assignment()))
    consumer.close()


RUNNERS: dict[str, Callable[[str, str, str, int], None]] = {
    "kafka-python": run_kafka_python,
    "aiokafka": run_aiokafka,
    "confluent-kafka": run_confluent,
}

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop)
    library, bootstrap, topic, group, session = sys.argv[1:6]
    RUNNERS[library](bootstrap, topic, group, int(session))
