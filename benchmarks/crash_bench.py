"""kill -9 loop: no acknowledged record lost, none duplicated, ``lethe verify`` clean.

Usage::

    python benchmarks/crash_bench.py [--cycles 50] [--records 400] [--port 19250]
                                     [--out benchmarks/results] [--note TEXT]...

Theory of operation
-------------------
One ``lethe broker`` process serves a fixed loopback port (so the client
reconnects to the restarted broker) and a log directory that lives for the
whole run; its topic has ``segment.bytes`` small enough to roll segments (and
so take producer snapshots) every cycle. ONE idempotent confluent-kafka
producer (``enable.idempotence``, acks=all, retries unbounded) lives across
every cycle, so after each crash it retries its unacknowledged batches with
their original producer id, epoch and sequence, which is exactly what the
broker's producer state must recognise after a restart. Each cycle:

1. produce ``--records`` records (value = a unique counter) without waiting;
   after a random part of them, let batches go out for a random 0-30 ms and
   ``kill -9`` the broker while some are in flight (appended, not yet
   acknowledged);
2. ``lethe verify`` the log directory of the dead broker (must exit 0);
3. restart the broker, ``flush()`` the producer (its retries now land);
4. read the partition from the beginning to the end and check: every value
   acknowledged so far is present, at the offset its delivery report gave, and
   no value appears twice.

Figures go to ``<out>/crash.json`` and ``crash.md``: cycles, records
produced/acknowledged, lost, duplicated, verify failures, and the producer
snapshot files on disk at the end. Exit status 1 when any check failed.
"""

from __future__ import annotations

import argparse
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_broker_process import BrokerProcess, lethe_command
from bench_results import write_result_files
from bench_timing import BenchError

HERE = Path(__file__).resolve().parent
TOPIC = "crash-loop"
_SEGMENT_BYTES = 16384
_DEADLINE_S = 120.0


@dataclass
class Tally:
    """What the run saw; every count but ``produced``/``acked`` must stay 0."""

    cycles: int = 0
    produced: int = 0
    acked: int = 0
    failed_deliveries: int = 0
    lost: int = 0
    duplicates: int = 0
    misplaced: int = 0
    verify_failures: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.lost or self.duplicates or self.misplaced or self.verify_failures)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cycles", type=int, default=50, help="kill -9 cycles")
    parser.add_argument("--records", type=int, default=400, help="records produced per cycle")
    parser.add_argument(
        "--port", type=int, default=19250, help="the broker's fixed port (0: a free one)"
    )
    parser.add_argument("--seed", type=int, default=7, help="when to kill in each cycle")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    parser.add_argument("--work-dir", type=Path, default=None, help="log dir parent (temp)")
    parser.add_argument("--note", action="append", default=[], help="a note for the results")
    return parser.parse_args(argv)


def _free_port() -> int:
    """A port nothing listens on now; the broker keeps it for the whole run."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _producer(bootstrap: str) -> Any:
    from confluent_kafka import Producer

    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 2,
            "batch.num.messages": 20,
            "message.timeout.ms": 300000,
            "reconnect.backoff.ms": 50,
            "reconnect.backoff.max.ms": 500,
            "log_level": 0,
        }
    )


def _create_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = NewTopic(TOPIC, 1, 1, config={"segment.bytes": str(_SEGMENT_BYTES)})
    for future in admin.create_topics([topic]).values():
        future.result(timeout=60)


def _read_all(bootstrap: str, end: int) -> list[tuple[int, bytes]]:
    """(offset, value) of every record in ``[0, end)``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "crash-bench", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    found: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + _DEADLINE_S
    try:
        while (not found or found[-1][0] < end - 1) and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None or message.error():
                continue
            found.append((int(message.offset() or 0), message.value() or b""))
    finally:
        consumer.close()
    return found


def _high_watermark(bootstrap: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "crash-bench-hw"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=60)[1])
    finally:
        consumer.close()


def _verify(log_dir: Path) -> tuple[bool, str]:
    done = subprocess.run(
        [*lethe_command(), "verify", str(log_dir / f"{TOPIC}-0")],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 0, (done.stdout + done.stderr)[-2000:]


class CrashLoop:
    """The state of one run (module docstring)."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.broker = BrokerProcess(
            work / "logs",
            cpu=None,
            listen=f"127.0.0.1:{args.port or _free_port()}",
            overrides=("producer.id.expiration.check.interval.ms=600000",),
        )
        self.rng = random.Random(args.seed)
        self.tally = Tally()
        self.acked: dict[bytes, int] = {}
        self.faults: dict[str, set[bytes]] = {"duplicate": set(), "lost": set(), "misplaced": set()}
        self.counter = 0
        self.producer: Any = None

    def _on_delivery(self, error: Any, message: Any) -> None:
        if error is not None:
            self.tally.failed_deliveries += 1
            self.tally.problems.append(f"delivery failed: {error}")
            return
        self.acked[message.value()] = message.offset()
        self.tally.acked += 1

    def run(self) -> Tally:
        self.broker.start()
        _create_topic(self.broker.bootstrap)
        self.producer = _producer(self.broker.bootstrap)
        try:
            for _ in range(self.args.cycles):
                self.cycle()
        finally:
            if self.producer is not None:
                self.producer.flush(30)
            self.broker.stop() if self.broker.process else None
        return self.tally

    def cycle(self) -> None:
        crash_at = self.rng.randrange(1, self.args.records)
        for index in range(self.args.records):
            if index == crash_at:
                # Let batches go out for a random few ms, so some are appended but not
                # yet acknowledged when the broker dies: the producer retries those.
                self.producer.flush(self.rng.uniform(0.0, 0.03))
                self.broker.crash()
            self.producer.produce(
                TOPIC, value=b"%012d" % self.counter, on_delivery=self._on_delivery
            )
            self.counter += 1
            self.tally.produced += 1
            self.producer.poll(0)
        ok, output = _verify(self.broker.log_dir)
        if not ok:
            self.tally.verify_failures += 1
            self.tally.problems.append(f"cycle {self.tally.cycles}: lethe verify: {output}")
        self.broker.start()
        if self.producer.flush(_DEADLINE_S) != 0:
            raise BenchError("the producer did not deliver everything after the restart")
        self.check(_read_all(self.broker.bootstrap, _high_watermark(self.broker.bootstrap)))
        self.tally.cycles += 1

    def check(self, records: list[tuple[int, bytes]]) -> None:
        """Each cycle reads the whole partition again, so every fault is counted once
        (by value) over the run, however many later cycles see it again."""
        seen: dict[bytes, int] = {}
        for offset, value in records:
            if value in seen and value not in self.faults["duplicate"]:
                self.faults["duplicate"].add(value)
                self.tally.problems.append(f"{value!r} at {seen[value]} and {offset}")
            seen.setdefault(value, offset)
        for value, offset in self.acked.items():
            if value not in seen and value not in self.faults["lost"]:
                self.faults["lost"].add(value)
                self.tally.problems.append(f"acknowledged {value!r} (offset {offset}) lost")
            elif value in seen and seen[value] != offset and value not in self.faults["misplaced"]:
                self.faults["misplaced"].add(value)
                self.tally.problems.append(
                    f"{value!r} acknowledged at {offset}, read at {seen[value]}"
                )
        self.tally.duplicates = len(self.faults["duplicate"])
        self.tally.lost = len(self.faults["lost"])
        self.tally.misplaced = len(self.faults["misplaced"])
        self.tally.problems = self.tally.problems[:50]


def _render(result: dict[str, Any]) -> str:
    tally = result["tally"]
    rows = [
        ("kill -9 cycles", tally["cycles"], ">= 50"),
        ("records produced", tally["produced"], "-"),
        ("records acknowledged", tally["acked"], "-"),
        ("acknowledged records lost", tally["lost"], "0"),
        ("records duplicated", tally["duplicates"], "0"),
        ("acknowledged at another offset", tally["misplaced"], "0"),
        ("lethe verify failures", tally["verify_failures"], "0"),
        ("failed deliveries", tally["failed_deliveries"], "-"),
    ]
    lines = [
        "# kill -9 loop (crash_bench.py)",
        "",
        f"Run {result['finished']} on {result['machine']}, {result['seconds']:.0f} s; "
        f"verdict: **{'PASS' if result['pass'] else 'FAIL'}**.",
        "",
        "| figure | value | target |",
        "|---|---|---|",
        *(f"| {name} | {value:,} | {target} |" for name, value, target in rows),
        "",
        f"Producer snapshots on disk at the end: {', '.join(result['snapshots']) or 'none'}.",
    ]
    lines += ["", *(f"- {note}" for note in result["notes"])] if result["notes"] else []
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(dir=args.work_dir) as scratch:
        loop = CrashLoop(args, Path(scratch))
        try:
            tally = loop.run()
        except BenchError as error:
            loop.broker.kill()
            print(f"crash_bench: {error}", file=sys.stderr)
            return 1
        snapshots = sorted(p.name for p in (loop.broker.log_dir / f"{TOPIC}-0").glob("*.snapshot"))
    result = {
        "finished": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
        "machine": f"{platform.machine()} {platform.python_version()}",
        "seconds": time.monotonic() - start,
        "args": {"cycles": args.cycles, "records": args.records, "seed": args.seed},
        "tally": {**asdict(tally)},
        "snapshots": snapshots,
        "pass": tally.clean and tally.cycles == args.cycles,
        "notes": args.note,
    }
    write_result_files(args.out, "crash", result, _render)
    print(_render(result))
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
