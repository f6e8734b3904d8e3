"""The reference broker's memory under steady load: RSS over time, and whether it levels off.

Usage::

    python benchmarks/memory_bench.py [--seconds 180] [--clients 20] [--rate 200] [--out DIR]

Theory of operation
-------------------
Issue 12 saw the broker's RSS grow by 19 MB in 180 s under 20 clients of steady
load, without levelling off. This benchmark repeats that load against ``lethe
broker`` in a process of its own (:mod:`bench_broker_process`) and records the
broker's ``VmRSS`` and ``RssAnon`` (``/proc/<pid>/status``) every
``--sample-s`` seconds:

* half of the ``--clients`` are confluent-kafka producers, each producing
  ``--rate`` records/s of ``--value-size`` bytes (acks=all) to a topic of
  ``--partitions`` partitions, at a fixed rate for ``--seconds``;
* the other half are consumers of one group (subscribe, auto-commit), so the
  broker also serves fetch sessions, group heartbeats, offset commits and
  metadata refreshes, as a real deployment would.

Memory "levels off" when the RSS over the second half of the run grows by at
most ``GROWTH_LIMIT_MB`` (last tenth's mean minus the middle tenth's mean); a
leak that grows with time or with bytes written fails it, while the first
half (warm-up: imports, caches, the first segments' indexes) is not judged.
Results: ``<out>/broker_memory.json`` (the whole series), ``broker_memory.md``
and ``broker_memory.svg`` (RSS over time, drawn without plotting libraries).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import confluent_kafka
from bench_broker_process import BrokerProcess, log_bytes
from bench_results import write_result_files
from bench_timing import BenchError
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

HERE = Path(__file__).resolve().parent
TOPIC = "memory-load"
GROUP = "memory-bench"
GROWTH_LIMIT_MB = 2.0


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--rate", type=float, default=200.0, help="records/s per producer")
    parser.add_argument("--value-size", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--sample-s", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--work-dir", type=Path, default=None)
    return parser.parse_args(argv)


def memory_mb(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``RssAnon`` of ``pid`` in MB (10^6 bytes)."""
    wanted = {"VmRSS": "rss_mb", "RssAnon": "anon_mb"}
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in wanted:
            found[wanted[key]] = int(rest.split()[0]) * 1024 / 1e6
    return found


def growth_mb(series: list[dict[str, float]], key: str = "rss_mb") -> float:
    """Mean of the last tenth minus mean of the tenth just past the middle."""
    n = len(series)
    tenth = max(1, n // 10)
    middle = series[n // 2 : n // 2 + tenth]
    last = series[n - tenth :]
    if not middle or not last:
        return 0.0
    return sum(s[key] for s in last) / len(last) - sum(s[key] for s in middle) / len(middle)


class Load:
    """The producers and consumers, each on a thread, until :meth:`stop`."""

    def __init__(self, bootstrap: str, args: argparse.Namespace) -> None:
        self.bootstrap = bootstrap
        self.args = args
        self.done = threading.Event()
        self.produced = 0
        self.consumed = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        producers = args.clients - args.clients // 2
        self.threads = [
            threading.Thread(target=self._produce, args=(i,), daemon=True) for i in range(producers)
        ] + [
            threading.Thread(target=self._consume, args=(i,), daemon=True)
            for i in range(args.clients // 2)
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(60)

    def _count(self, produced: int = 0, consumed: int = 0) -> None:
        with self._lock:
            self.produced += produced
            self.consumed += consumed

    def _error(self, error: object) -> None:
        with self._lock:
            self.errors.append(str(error))

    def _produce(self, index: int) -> None:
        producer = confluent_kafka.Producer(
            {"bootstrap.servers": self.bootstrap, "acks": "all", "linger.ms": 5}
        )
        value = bytes(self.args.value_size)
        start = time.monotonic()
        sent = 0

        def delivered(error: object, _message: object) -> None:
            if error is not None:
                self._error(error)
            else:
                self._count(produced=1)

        while not self.done.is_set():
            due = start + sent / self.args.rate
            now = time.monotonic()
            if now < due:
                producer.poll(min(0.05, due - now))
                continue
            key = f"{index}-{sent}".encode()
            producer.produce(TOPIC, value, key, callback=delivered)
            sent += 1
            producer.poll(0)
        producer.flush(30)

    def _consume(self, index: int) -> None:
        consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": GROUP,
                "client.id": f"memory-consumer-{index}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": True,
            }
        )
        consumer.subscribe([TOPIC])
        while not self.done.is_set():
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is not None:
                self._error(message.error())
            else:
                self._count(consumed=1)
        consumer.close()


def _create_topic(bootstrap: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(TOPIC, partitions, 1)])
    futures[TOPIC].result(30)


def _sample(broker: BrokerProcess, args: argparse.Namespace) -> list[dict[str, float]]:
    series: list[dict[str, float]] = []
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < args.seconds:
        series.append({"t": round(elapsed, 2), **memory_mb(broker.pid)})
        time.sleep(max(0.0, start + len(series) * args.sample_s - time.monotonic()))
    return series


def measure(args: argparse.Namespace, work_dir: Path) -> dict[str, Any]:
    broker = BrokerProcess(work_dir / "logs", cpu=None).start()
    try:
        _create_topic(broker.bootstrap, args.partitions)
        load = Load(broker.bootstrap, args)
        load.start()
        series = _sample(broker, args)
        load.stop()
        written = log_bytes(work_dir / "logs", TOPIC)
    finally:
        status = broker.stop()
    if status != 0:
        raise BenchError(f"the broker exited with status {status}")
    if load.errors:
        raise BenchError(f"client errors: {load.errors[:5]}")
    growth = growth_mb(series)
    return {
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "setup": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "produced": load.produced,
        "consumed": load.consumed,
        "log_bytes": written,
        "series": series,
        "rss_start_mb": series[0]["rss_mb"],
        "rss_max_mb": max(s["rss_mb"] for s in series),
        "second_half_growth_mb": round(growth, 2),
        "second_half_anon_growth_mb": round(growth_mb(series, "anon_mb"), 2),
        "target": f"RSS grows <= {GROWTH_LIMIT_MB} MB over the second half",
        "status": "PASS" if growth <= GROWTH_LIMIT_MB else "MISS",
    }


def svg(series: list[dict[str, float]], width: int = 640, height: int = 240) -> str:
    """RSS (and anonymous RSS) over time as a small SVG line chart."""
    pad = 40
    top = max(s["rss_mb"] for s in series) * 1.1
    end = max(series[-1]["t"], 1.0)

    def points(key: str) -> str:
        return " ".join(
            f"{pad + s['t'] / end * (width - 2 * pad):.1f},"
            f"{height - pad - s[key] / top * (height - 2 * pad):.1f}"
            for s in series
        )

    axis = f"M{pad},{pad} V{height - pad} H{width - pad}"
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
            f'<path d="{axis}" stroke="black" fill="none"/>',
            f'<polyline points="{points("rss_mb")}" stroke="#1f77b4" fill="none"/>',
            f'<polyline points="{points("anon_mb")}" stroke="#ff7f0e" fill="none"/>',
            f'<text x="{pad}" y="{pad - 10}" font-size="12">broker RSS (blue) and anonymous '
            f"RSS (orange), MB; 0..{top:.0f} MB over {end:.0f} s</text>",
            "</svg>",
        ]
    )


def markdown(result: dict[str, Any]) -> str:
    setup = result["setup"]
    lines = [
        "# Reference broker memory under steady load",
        "",
        f"{setup['clients']} clients ({setup['clients'] - setup['clients'] // 2} producers at "
        f"{setup['rate']:.0f} records/s of {setup['value_size']} bytes, acks=all; the rest "
        f"consumers of one group) for {setup['seconds']:.0f} s; RSS sampled every "
        f"{setup['sample_s']} s (series in broker_memory.json, figure broker_memory.svg).",
        "",
        "| figure | value |",
        "|---|---|",
        f"| records produced / consumed | {result['produced']:,} / {result['consumed']:,} |",
        f"| log bytes written | {result['log_bytes'] / 1e6:.1f} MB |",
        f"| RSS at start / max | {result['rss_start_mb']:.1f} / {result['rss_max_mb']:.1f} MB |",
        f"| RSS growth over the second half | {result['second_half_growth_mb']:+.2f} MB |",
        f"| anonymous RSS growth, second half | {result['second_half_anon_growth_mb']:+.2f} MB |",
        f"| target: {result['target']} | **{result['status']}** |",
        "",
        "![RSS over time](broker_memory.svg)",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="lethe-memory-bench-"))
    try:
        result = measure(args, work_dir)
    except BenchError as error:
        print(f"memory benchmark failed: {error}", file=sys.stderr)
        return 1
    finally:
        if args.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)
    write_result_files(args.out, "broker_memory", result, markdown, indent=1)
    (args.out / "broker_memory.svg").write_text(svg(result["series"]) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
