"""A long (allowed) operation over real sockets: other clients are served while it
runs, and SIGTERM ends the broker cleanly in the middle of it.

No timing asserts: the checks are orders of events (another client answered
before the long request; the broker exited with the creation unfinished) and
generous bounds that only catch a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lethe_conformance.client import KafkaConnection
from lethe_conformance.client.calls import create_topic, metadata, produce
from lethe_conformance.client.partition_calls import create_partitions
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.config import BrokerConfig
from lethe_reference.embedded import EmbeddedBroker

#: Enough logs that creating them takes seconds, far longer than a Metadata round trip.
LARGE = 601
HANG_S = 300
RECORDS = build_batch([RecordSpec(key=None, value=b"v", timestamp=0)], base_offset=0)


def partition_dirs(log_dir: Path, topic: str) -> int:
    return sum(1 for p in log_dir.iterdir() if p.name.startswith(f"{topic}-"))


def wait_for(condition: Callable[[], bool], what: str, bound_s: float = HANG_S) -> None:
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_other_clients_are_served_while_partitions_are_created(tmp_path: Path) -> None:
    with EmbeddedBroker(tmp_path) as kafka:
        host, port = kafka.bootstrap.rsplit(":", 1)
        admin = KafkaConnection.open(host, int(port), request_timeout=HANG_S)
        other = KafkaConnection.open(host, int(port), request_timeout=HANG_S)
        for name in ("big", "other"):
            assert create_topic(admin, name, 1, {}).topics[0].error_code == ErrorCode.NONE
        with ThreadPoolExecutor(1) as pool:
            growing = pool.submit(create_partitions, admin, "big", LARGE)
            committed = lambda: kafka.call(lambda b: b.metadata.get("big").partitions) == LARGE  # noqa: E731
            wait_for(committed, "the registry to say LARGE")
            seen = metadata(other, ["big", "other"])
            written = produce(other, "other", 0, RECORDS)
            assert not growing.done()  # answered while the creation was still running
            assert {t.name: len(t.partitions) for t in seen.topics} == {"big": LARGE, "other": 1}
            assert written.responses[0].partition_responses[0].error_code == ErrorCode.NONE
            answer = growing.result(HANG_S)
        assert [(r.name, r.error_code) for r in answer.results] == [("big", ErrorCode.NONE)]
        assert partition_dirs(tmp_path, "big") == LARGE
        admin.close()
        other.close()


def test_sigterm_during_a_long_creation_shuts_down_cleanly(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    command = [sys.executable, "-m", "lethe_tools.cli", "broker", "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(
        [*command, "--log-dir", str(log_dir)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stderr is not None
        port = None
        while port is None:
            line = process.stderr.readline()
            assert line, "the broker exited before listening"
            if "event=listening" in line:
                port = int(line.split("port=")[1].split()[0])
        admin = KafkaConnection.open("127.0.0.1", port, request_timeout=HANG_S)
        create_topic(admin, "big", 1, {})
        with ThreadPoolExecutor(1) as pool:
            pool.submit(create_partitions, admin, "big", 2 * LARGE)
            wait_for(lambda: partition_dirs(log_dir, "big") > 20, "the creation to start")
            process.send_signal(signal.SIGTERM)
            assert process.wait(HANG_S) == 0
            admin.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (log_dir / ".kafka_cleanshutdown").exists()
    assert partition_dirs(log_dir, "big") < 2 * LARGE  # it stopped mid-way, not after
    # the registry was committed first: the next startup finishes the logs
    again = Broker(log_dir, config=BrokerConfig({}), durable=False)
    again.startup()
    assert again.metadata.get("big").partitions == 2 * LARGE
    assert partition_dirs(log_dir, "big") == 2 * LARGE
    again.shutdown()
