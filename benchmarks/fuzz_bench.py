"""Protocol fuzzer: random and mutated request frames against ``lethe broker``.

Usage::

    python benchmarks/fuzz_bench.py [--frames 1000000] [--batch 2000] [--workers 8]
                                    [--seed 1] [--max-seconds 3600] [--out benchmarks/results]
    python benchmarks/fuzz_bench.py --render benchmarks/results/fuzz.json --note TEXT...

Theory of operation
-------------------
One run starts ``lethe broker --listen 127.0.0.1:0`` (quickstart config, a
fresh log dir, log level WARNING so each connection is not a log line) as a
separate process (:mod:`bench_broker_process`) and sends it ``--frames``
fuzzed frames (:mod:`fuzz_frames`: random, and mutations of every golden
client frame and of a frame per advertised API key and version) in batches
over ``--workers`` connections at once (:mod:`fuzz_client`). After each batch:

* crash: the broker process must still be running;
* hang: a fresh connection must get ApiVersions and Metadata answered within
  ``--probe-timeout`` seconds;
* memory: the broker's RSS (``/proc/PID/status`` VmRSS) is sampled.

At the end the broker gets SIGTERM and must exit 0 promptly, its stderr is
searched for tracebacks (``Traceback (most recent call last)``, what every
``logging.exception`` prints) and ERROR lines, and ``lethe verify`` runs over
the log dir the fuzzing wrote. Memory is flat when the median RSS of the last
quarter of the samples is within ``--rss-growth-mib`` of the median of the
second quarter (the first quarter is warm-up: imports, caches, the topics
the fuzzed frames create). The run stops early on a crash or hang, or when
``--max-seconds`` have passed; the figures say how many frames were sent.
Writes ``<out>/fuzz.json`` and ``<out>/fuzz.md`` (:mod:`fuzz_report`); exit
status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import fuzz_client
from bench_broker_process import BrokerProcess, lethe_command
from bench_timing import BenchError
from fuzz_frames import STRATEGIES, Mutator, corpus
from fuzz_report import evaluate, write_results

HERE = Path(__file__).resolve().parent
TRACEBACK = "Traceback (most recent call last)"


class QuietBroker(BrokerProcess):
    """``lethe broker`` at log level WARNING on a port picked here.

    At WARNING the broker does not log its ``event=listening`` line (nor a line per
    connection, which a million fuzzed frames would turn into gigabytes), so the
    port is chosen before the start and readiness is a successful connect.
    """

    def __init__(self, log_dir: Path, *, cpu: int | None) -> None:
        super().__init__(log_dir, cpu=cpu, log_level="WARNING")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]

    def command(self) -> list[str]:
        listen = f"127.0.0.1:{self.port}"
        return [part if part != "127.0.0.1:0" else listen for part in super().command()]

    def _wait_listening(self) -> int:
        assert self.process is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return self.port
            if self.process.poll() is not None:
                raise BenchError(f"broker exited {self.process.returncode}: {self.stderr_tail()}")
            time.sleep(0.05)
        self.kill()
        raise BenchError("broker did not listen within 60 s")


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class FuzzRun:
    """One fuzzing run against one broker process (see the module docstring)."""

    def __init__(self, args: argparse.Namespace, broker: BrokerProcess) -> None:
        self.args = args
        self.broker = broker
        frames = corpus()
        self.corpus_size = len(frames)
        self.mutator = Mutator(args.seed, frames, args.max_partitions or None)
        self.sent = 0
        self.outcomes: Counter[str] = Counter()
        self.strategies: Counter[str] = Counter()
        self.connections = 0
        self.stalls: list[str] = []
        self.samples: list[dict[str, float]] = []
        self.probe_max_s = 0.0
        self.failure: str | None = None
        self.topics_deleted = 0
        self.pool = ProcessPoolExecutor(args.processes)

    def sample(self, started: float) -> None:
        self.samples.append(
            {
                "seconds": round(time.monotonic() - started, 3),
                "frames": self.sent,
                "rss_kib": _rss_kib(self.broker.pid),
                "broker_cpu_s": round(self.broker.cpu_seconds(), 2),
            }
        )

    async def run(self) -> None:
        host, port = "127.0.0.1", self.broker.port
        started = time.monotonic()
        self.sample(started)
        while self.sent < self.args.frames:
            if time.monotonic() - started > self.args.max_seconds:
                self.failure = f"time bound: {self.args.max_seconds} s passed"
                return
            count = min(self.args.batch, self.args.frames - self.sent)
            batch = [self.mutator.next() for _ in range(count)]
            stats = await asyncio.get_running_loop().run_in_executor(
                None,
                functools.partial(
                    fuzz_client.run_batch_processes,
                    self.pool,
                    self.args.processes,
                    host,
                    port,
                    batch,
                    workers=self.args.workers,
                    stall_s=self.args.stall_seconds,
                    probe_s=self.args.probe_timeout,
                ),
            )
            self.sent += stats.frames
            self.outcomes.update(stats.outcomes)
            self.strategies.update(stats.strategies)
            self.connections += stats.connections
            self.stalls += stats.stalled_sources[: 20 - len(self.stalls)]
            if self.broker.process is None or self.broker.process.poll() is not None:
                self.failure = "crash: the broker process exited"
                return
            answered = await fuzz_client.probe(host, port, self.args.probe_timeout)
            if answered is None or stats.hung:
                self.failure = f"hang: the probe got no answer in {self.args.probe_timeout} s"
                return
            self.probe_max_s = max(self.probe_max_s, answered)
            self.topics_deleted += await fuzz_client.delete_created_topics(
                host, port, self.args.probe_timeout * 6
            )
            self.sample(started)
            if self.args.progress:
                print(f"fuzz: {self.sent:,} frames, {self.samples[-1]}", file=sys.stderr)


def _verify(log_dir: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*lethe_command(), "verify", "--summary", str(log_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.splitlines()
    return {
        "exit_status": done.returncode,
        "summary": lines[-1] if lines else "",
        "problems": lines[:-1][:20],
    }


def _stderr_findings(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    errors = [line for line in lines if " ERROR " in line or line.startswith("ERROR")]
    first = text.find(TRACEBACK)
    return {
        "tracebacks": text.count(TRACEBACK),
        "error_lines": len(errors),
        "first_traceback": text[first : first + 3000] if first >= 0 else "",
        "first_errors": errors[:10],
    }


def _measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    log_dir = work / "fuzz-logs"
    broker = QuietBroker(log_dir, cpu=args.broker_cpu).start()
    run = FuzzRun(args, broker)
    started = time.monotonic()
    stop_error = ""
    try:
        asyncio.run(run.run())
    finally:
        run.pool.shutdown(cancel_futures=True)
        wall = time.monotonic() - started
        crashed = broker.process is None or broker.process.poll() is not None
        exit_status = None if broker.process is None else broker.process.poll()
        stop_started = time.monotonic()
        if crashed:
            broker.kill()
        else:
            try:
                broker.stop()
            except BenchError as error:
                stop_error = str(error)
        stop_seconds = time.monotonic() - stop_started
    stderr = broker.stderr_path.read_text(errors="replace")
    return {
        "frames": run.sent,
        "wall_seconds": round(wall, 1),
        "corpus_frames": run.corpus_size,
        "outcomes": dict(run.outcomes),
        "strategies": dict(run.strategies),
        "connections": run.connections,
        "stalls_first": run.stalls,
        "probe_max_seconds": round(run.probe_max_s, 3),
        "failure": run.failure,
        "crashed": crashed,
        "crash_exit_status": exit_status,
        "stop_error": stop_error,
        "stop_seconds": round(stop_seconds, 2),
        "rss_samples": run.samples,
        "stderr": _stderr_findings(stderr),
        "excluded_partition_frames": run.mutator.excluded,
        "topics_deleted": run.topics_deleted,
        "topics_left": sum(1 for p in log_dir.iterdir() if p.is_dir()),
        "verify": _verify(log_dir),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=8, help="connections per process")
    parser.add_argument("--processes", type=int, default=2, help="client processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    parser.add_argument("--stall-seconds", type=float, default=5.0)
    parser.add_argument("--probe-timeout", type=float, default=10.0)
    parser.add_argument("--rss-growth-mib", type=float, default=5.0)
    parser.add_argument(
        "--max-partitions",
        type=int,
        default=0,
        help="leave out CreateTopics/CreatePartitions frames asking for more (0: keep all)",
    )
    parser.add_argument("--target-frames", type=int, default=1_000_000)
    parser.add_argument("--broker-cpu", type=int, default=None)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--progress", action="store_true", help="a line per batch on stderr")
    parser.add_argument("--note", action="append", default=[])
    parser.add_argument(
        "--render", type=Path, metavar="JSON", help="add --note lines to a result, render again"
    )
    args = parser.parse_args(argv)
    if args.render is not None:
        result = json.loads(args.render.read_text())
        result["notes"] += args.note
        write_results(args.out, result)
        return 0
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="lethe-fuzz-"))
    try:
        measured = _measure(args, work)
    finally:
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    result = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg_after": os.getloadavg(),
        },
        "parameters": {
            key: getattr(args, key)
            for key in (
                "frames",
                "batch",
                "workers",
                "processes",
                "seed",
                "max_seconds",
                "stall_seconds",
                "max_partitions",
            )
        }
        | {"probe_timeout": args.probe_timeout, "strategy_weights": STRATEGIES},
        **measured,
        "notes": args.note,
    }
    result["targets"] = evaluate(result, args.target_frames, args.rss_growth_mib)
    write_results(args.out, result)
    return 0 if all(row["status"] == "PASS" for row in result["targets"]) else 1


if __name__ == "__main__":
    sys.exit(main())
