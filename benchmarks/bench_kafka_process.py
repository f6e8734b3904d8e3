"""A real Kafka broker from a distribution, and Kafka's own perf tools, for side-by-side runs.

Theory of operation
-------------------
The comparison needs both brokers started from the same settings. Kafka 4.0
ships ``config/server.properties`` (a one-node KRaft cluster, the quickstart);
``lethe broker`` starts from the same values (``lethe_reference.server.
defaults``). :class:`KafkaBroker` copies the distribution's file into a scratch
directory and changes only what must differ on a shared machine (listener
ports, ``log.dirs``) plus the overrides the benchmark applies to BOTH brokers
(:data:`SHARED_OVERRIDES`, passed to lethe with ``--override``), formats the
storage (``kafka-storage.sh format --standalone``) and starts
``kafka-server-start.sh`` with the script's default heap. Readiness is a
metadata round trip through the admin client, as a client would see it.

:func:`producer_perf` and :func:`consumer_perf` run ``kafka-producer-perf-test.sh``
and ``kafka-consumer-perf-test.sh`` (with the tools' own defaults apart from
what the command names) and parse their summary lines. Kafka's tools count
MB as 2^20 bytes; the figures are kept as they print them and the benchmark
compares ratios, where the unit cancels.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench_timing import BenchError
from confluent_kafka.admin import AdminClient

__all__ = [
    "SHARED_OVERRIDES",
    "KafkaBroker",
    "ToolRun",
    "consumer_perf",
    "consumer_summary",
    "free_port",
    "kafka_version",
    "producer_perf",
    "producer_summary",
]

#: Applied to both brokers. Kafka 4.0.0's server.properties does not set the delay (so
#: Kafka's default 3000 ms applies there, and lethe uses it too); a group consume would
#: then measure a fixed 3 s wait on both, so the comparison sets 0 on both.
SHARED_OVERRIDES: Mapping[str, str] = {"group.initial.rebalance.delay.ms": "0"}
_START_TIMEOUT_S = 120.0
_TOOL_TIMEOUT_S = 300.0
_PRODUCER_LINE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency"
)


def free_port(lo: int, hi: int) -> int:
    """A port in ``[lo, hi)`` nothing listens on (the caller's own port range); with
    ``lo`` 0 one the kernel picks."""
    if lo == 0:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return int(probe.getsockname()[1])
    for port in range(lo, hi):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise BenchError(f"no free port in [{lo}, {hi})")


def kafka_version(home: Path) -> str:
    """The version in the distribution's ``libs/kafka-clients-X.jar`` name."""
    for jar in sorted((home / "libs").glob("kafka-clients-*.jar")):
        return jar.stem.removeprefix("kafka-clients-")
    return "unknown"


class KafkaBroker:
    """Kafka from ``home``, config/server.properties with own ports and log dir."""

    def __init__(self, home: Path, work: Path, port: int, controller_port: int) -> None:
        self.home, self.work = home, work
        self.port, self.controller_port = port, controller_port
        self.config = work / "server.properties"
        self.log_dir = work / "kafka-logs"
        self.stdout = work / "kafka.out"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def settings(self) -> dict[str, str]:
        """What this run changes in the distribution's config/server.properties."""
        return {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
            f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "log.dirs": str(self.log_dir),
            **SHARED_OVERRIDES,
        }

    def _write_config(self) -> None:
        changes = self.settings()
        lines = []
        for line in (self.home / "config" / "server.properties").read_text().splitlines():
            key = line.partition("=")[0].strip()
            if not line.lstrip().startswith("#") and key in changes:
                continue
            lines.append(line)
        lines += [f"{key}={value}" for key, value in changes.items()]
        self.config.write_text("\n".join(lines) + "\n")

    def _tool(self, name: str) -> str:
        return str(self.home / "bin" / name)

    def start(self) -> KafkaBroker:
        self.work.mkdir(parents=True, exist_ok=True)
        self._write_config()
        cluster = subprocess.run(
            [self._tool("kafka-storage.sh"), "random-uuid"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        subprocess.run(
            [
                self._tool("kafka-storage.sh"),
                "format",
                "--standalone",
                "-t",
                cluster,
                "-c",
                str(self.config),
            ],
            capture_output=True,
            check=True,
        )
        env = dict(os.environ, LOG_DIR=str(self.work / "logs"))
        with self.stdout.open("ab") as out:
            self.process = subprocess.Popen(
                [self._tool("kafka-server-start.sh"), str(self.config)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise BenchError(f"kafka exited {self.process.returncode}; see {self.stdout}")
            try:
                admin = AdminClient({"bootstrap.servers": self.bootstrap})
                if admin.list_topics(timeout=2).brokers:
                    return
            except Exception:
                pass
            time.sleep(0.5)
        self.stop()
        raise BenchError(f"kafka did not answer within {_START_TIMEOUT_S} s; see {self.stdout}")

    def stop(self) -> None:
        """SIGTERM to the broker's process group (the script and its JVM), then wait."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass(frozen=True, slots=True)
class ToolRun:
    """One perf tool run: its figures as printed and the command line."""

    figures: dict[str, float]
    command: list[str]


def _run_tool(command: Sequence[str]) -> str:
    done = subprocess.run(
        list(command), capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise BenchError(f"{command[0]} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def producer_summary(output: str, records: int) -> dict[str, float]:
    """The figures of the tool's last line (``N records sent, R records/sec (M MB/sec),
    L ms avg latency, ...``); BenchError unless it sent ``records``."""
    found = _PRODUCER_LINE.findall(output)
    if not found or int(found[-1][0]) != records:
        raise BenchError(f"producer perf test: no summary for {records} records")
    _sent, rate, mb, latency = found[-1]
    return {"records_per_s": float(rate), "mb_per_s": float(mb), "avg_latency_ms": float(latency)}


def consumer_summary(output: str, records: int) -> dict[str, float]:
    """The figures of the tool's summary line (after its header: start.time, end.time,
    data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms,
    fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec); BenchError unless ``records`` were read."""
    lines = [line for line in output.splitlines() if line.count(",") == 9]
    if len(lines) < 2:
        raise BenchError("consumer perf test: no summary line")
    fields = [field.strip() for field in lines[-1].split(",")]
    consumed = int(fields[4])
    if consumed < records:
        raise BenchError(f"consumer perf test: {consumed}/{records} records")
    return {
        "mb_per_s": float(fields[3]),
        "records_per_s": float(fields[5]),
        "rebalance_ms": float(fields[6]),
        "fetch_ms": float(fields[7]),
        "fetch_mb_per_s": float(fields[8]),
    }


def producer_perf(home: Path, bootstrap: str, topic: str, records: int, size: int) -> ToolRun:
    """``kafka-producer-perf-test.sh --throughput -1`` with the producer's defaults."""
    command = [str(home / "bin" / "kafka-producer-perf-test.sh"), "--topic", topic]
    command += ["--num-records", str(records), "--record-size", str(size), "--throughput", "-1"]
    command += ["--producer-props", f"bootstrap.servers={bootstrap}"]
    return ToolRun(producer_summary(_run_tool(command), records), command)


def consumer_perf(home: Path, bootstrap: str, topic: str, records: int, group: str) -> ToolRun:
    """``kafka-consumer-perf-test.sh`` (subscribe: a group join) reading ``records``."""
    command = [str(home / "bin" / "kafka-consumer-perf-test.sh"), "--bootstrap-server"]
    command += [bootstrap, "--topic", topic, "--messages", str(records), "--group", group]
    command += ["--timeout", "60000"]
    return ToolRun(consumer_summary(_run_tool(command), records), command)
