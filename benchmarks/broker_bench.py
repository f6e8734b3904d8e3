"""Speed of the reference broker against confluent-kafka (librdkafka), broker on one core.

Usage::

    python benchmarks/broker_bench.py [--records 200000] [--rate 5000] [--out benchmarks/results]
    python benchmarks/broker_bench.py --render benchmarks/results/broker.json --note TEXT

Theory of operation
-------------------
One run starts ``lethe broker`` as a separate process on a free loopback port
with a fresh log directory (:mod:`bench_broker_process`), pinned to one CPU
(``--broker-cpu``, default 0); this process, which runs the clients, is pinned
to another (``--client-cpu``, default 1), so client and broker never share a
core. Then, each phase into its own one-partition topic created beforehand:

1. ``produce_acks1`` / ``produce_acksall``: ``--records`` records of 1 KiB at
   max rate with acks=1 / acks=all (linger.ms=5, batch.size 1,000,000, no
   compression): throughput, and the latency of every record at max rate;
   with the consumes of step 3, run ``--repeat`` times (default 3) into fresh
   topics: a figure is the median of its runs, and the results show min and max
   beside it, so one lucky or unlucky run neither passes nor fails a target;
2. ``latency_acks1`` / ``latency_acksall``: ``--rate`` records/s for
   ``--rate-seconds``: latency at a moderate fixed rate;
3. ``consume``: one consumer reads the ``produce_acks1`` topic from the
   beginning (fetch.max.bytes 64 MiB, max.partition.fetch.bytes 4 MiB, no
   group, no commits): throughput; then the same read with the clients'
   default 1 MiB and with 16 MiB partition fetches (``consume_fetch_*``),
   since the broker's cost per byte depends on the response size;
4. profile passes (``--profile-records``, not timed): the same produce and
   consumes (4 MiB and 16 MiB) with py-spy sampling the broker
   (:mod:`bench_broker_profile`).

Every phase must deliver / read exactly the records it should (keys prove each
one once), else the run fails with exit status 1 and writes nothing. Per phase
the broker's CPU seconds (``/proc``) over the wall seconds say how busy the
broker was: near 100 % means the broker is the limit, well below means the
client or waiting was. Results go to ``<out>/broker.json`` and ``broker.md``
(:mod:`bench_broker_report`) with PASS/MISS against the issue's targets.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import bench_broker_clients as clients
import confluent_kafka
from bench_broker_process import BrokerProcess, log_bytes, run_and_wait_seconds
from bench_broker_profile import PySpy, py_spy_path
from bench_broker_report import write_results
from bench_report import Figure, Target, evaluate
from bench_report import _fmt as fmt
from bench_timing import BenchError, OtherWork, pinned

HERE = Path(__file__).resolve().parent
MB = 1_000_000
T = TypeVar("T", clients.ProduceRun, clients.ConsumeRun)

TARGETS = [
    Target("produce_acks1_mb", "produce, acks=1, >= 100 MB/s (broker on one core)", 100.0),
    Target("produce_acksall_mb", "produce, acks=all, >= 100 MB/s (broker on one core)", 100.0),
    Target("consume_mb", "consume from the beginning >= 200 MB/s (broker on one core)", 200.0),
]
WARMUP_RECORDS = 100
MIB = 1024 * 1024
#: The target's consume phase first (4 x the clients' default max.partition.fetch.bytes),
#: then the clients' default and a 16 MiB partition fetch: the same read, other fetch sizes.
CONSUME_PHASES = [
    ("consume", 4 * MIB),
    ("consume_fetch_1mib", MIB),
    ("consume_fetch_16mib", 16 * MIB),
]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--records", type=int, default=200_000, help="records per throughput phase")
    add("--repeat", type=int, default=3, help="runs of each throughput phase (median, spread)")
    add("--value-size", type=int, default=1024, help="value bytes per record")
    add("--rate", type=float, default=5000.0, help="records/s of the fixed-rate phases")
    add("--rate-seconds", type=float, default=5.0, help="length of each fixed-rate phase")
    add("--profile-records", type=int, default=None, help="records per profile pass")
    add("--no-profile", action="store_true", help="skip the py-spy passes")
    add("--py-spy-rate", type=int, default=250, help="py-spy samples per second")
    add("--broker-cpu", type=int, default=0, help="CPU for the broker (-1: not pinned)")
    add("--client-cpu", type=int, default=1, help="CPU for the clients (-1: not pinned)")
    add("--out", type=Path, default=HERE / "results", help="results directory")
    add("--work-dir", type=Path, default=None, help="parent of the temporary log dir")
    add("--keep-logs", action="store_true", help="keep the broker's log dir and profiles")
    add("--note", action="append", default=[], help="a note for the results")
    add("--render", type=Path, default=None, help="re-render this broker.json (+ --note)")
    return parser.parse_args(argv)


def _cpu(wanted: int) -> int | None:
    """``wanted`` if this process may run there, else None (not pinned)."""
    if wanted < 0 or not hasattr(os, "sched_getaffinity"):
        return None
    return wanted if wanted in os.sched_getaffinity(0) else None


def _client_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def _percentiles(run: clients.ProduceRun) -> dict[str, float]:
    ordered = sorted(run.latency_s)
    rdkafka = sorted(run.rdkafka_latency_s)

    def at(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, max(0, int(q * len(values) + 0.999999) - 1))]

    return {
        "p50": at(ordered, 0.50),
        "p99": at(ordered, 0.99),
        "p99.9": at(ordered, 0.999),
        "max": ordered[-1],
        "mean": sum(ordered) / len(ordered),
        "rdkafka_p50": at(rdkafka, 0.50),
        "rdkafka_p99": at(rdkafka, 0.99),
    }


class Bench:
    """One run against one broker process; fills ``phases`` and ``figures``."""

    def __init__(self, args: argparse.Namespace, broker: BrokerProcess) -> None:
        self.args = args
        self.broker = broker
        self.phases: dict[str, dict[str, Any]] = {}
        self.figures: dict[str, Figure] = {}
        self.profiles: dict[str, dict[str, Any]] = {}

    def measured(self, name: str, work: Callable[[], T]) -> T:
        """Run one phase, recording broker and client CPU seconds around it."""
        broker_before, client_before = self.broker.cpu_seconds(), _client_cpu_seconds()
        sched_before = self.broker.run_and_wait_seconds()
        client_sched_before = run_and_wait_seconds(os.getpid())
        run = work()
        broker_cpu = self.broker.cpu_seconds() - broker_before
        sched = self.broker.run_and_wait_seconds()
        client_sched = run_and_wait_seconds(os.getpid())
        seconds = run.seconds
        self.phases[name] = {
            "records": run.delivered if isinstance(run, clients.ProduceRun) else run.records,
            "value_bytes": run.value_bytes,
            "key_bytes": run.key_bytes,
            "seconds": round(seconds, 4),
            "records_per_s": run.records / seconds,
            "mb_per_s": run.value_bytes / MB / seconds,
            "broker_cpu_seconds": round(broker_cpu, 2),
            "broker_busy": broker_cpu / seconds,
            "broker_waiting": None
            if sched is None or sched_before is None
            else (sched[1] - sched_before[1]) / seconds,
            "client_cpu_seconds": round(_client_cpu_seconds() - client_before, 2),
            "client_waiting_seconds": None
            if client_sched is None or client_sched_before is None
            else round(client_sched[1] - client_sched_before[1], 3),
        }
        phase = self.phases[name]
        print(
            f"  {name}: {phase['records']:,} records in {seconds:.2f} s = "
            f"{phase['records_per_s']:,.0f} records/s, {phase['mb_per_s']:.1f} MB/s, "
            f"broker busy {phase['broker_busy']:.0%}",
            flush=True,
        )
        return run

    def produce(self, name: str, topic: str, acks: str, rate: float | None = None) -> None:
        records = self.args.records if rate is None else max(1, int(rate * self.args.rate_seconds))
        bootstrap, size = self.broker.bootstrap, self.args.value_size
        run = self.measured(
            name,
            lambda: clients.produce(
                bootstrap, topic, records, acks=acks, value_size=size, rate=rate
            ),
        )
        phase = self.phases[name]
        phase["latency"] = _percentiles(run)
        phase["log_bytes"] = log_bytes(self.broker.log_dir, topic)
        phase["acks"], phase["rate"] = acks, rate
        print(
            f"    p50 {phase['latency']['p50'] * 1000:.1f} ms, p99 "
            f"{phase['latency']['p99'] * 1000:.1f} ms",
            flush=True,
        )

    def consume(self, name: str, topic: str, produced: str, fetch_bytes: int) -> None:
        expected = self.phases[produced]
        warmup = ("bench-warmup", WARMUP_RECORDS)
        run = self.measured(
            name,
            lambda: clients.consume(
                self.broker.bootstrap,
                topic,
                expected["records"],
                warmup=warmup,
                partition_fetch_bytes=fetch_bytes,
            ),
        )
        self.phases[name]["max_partition_fetch_bytes"] = fetch_bytes
        if (run.records, run.value_bytes, run.key_bytes) != (
            expected["records"],
            expected["value_bytes"],
            expected["key_bytes"],
        ):
            raise BenchError(f"{name}: read {run} but {produced} produced {expected}")

    def profile(self, name: str, work: Callable[[], object]) -> None:
        out = self.broker.log_dir.parent / f"profile-{name}.txt"
        spy = PySpy(self.broker.pid, out, self.args.py_spy_rate).start()
        before = self.broker.run_and_wait_seconds()
        start = time.perf_counter()
        try:
            work()
        finally:
            wall = time.perf_counter() - start
            after = self.broker.run_and_wait_seconds()
            summary = spy.stop() if spy.process is not None else {}
        summary["wall_seconds"] = round(wall, 2)
        if before is not None and after is not None:
            summary["broker_on_cpu_seconds"] = round(after[0] - before[0], 2)
            summary["broker_waiting_seconds"] = round(after[1] - before[1], 2)
        self.profiles[name] = summary
        print(f"  profiled {name}: {summary.get('samples', 0)} busy samples", flush=True)

    def add(
        self, key: str, label: str, value: tuple[float, str], seconds: float, note: str
    ) -> None:
        self.figures[key] = Figure(key, label, value[0], value[1], seconds, [seconds], note)


def run_name(name: str, run: int) -> str:
    """The phase name of ``name``'s run ``run`` (0-based): the first keeps the bare name."""
    return name if run == 0 else f"{name}#{run + 1}"


def _run_phases(bench: Bench, args: argparse.Namespace) -> None:
    bootstrap = bench.broker.bootstrap
    runs = range(args.repeat)
    topics = ["bench-warmup", "bench-rate-acks1", "bench-rate-acksall", "bench-profile"]
    topics += [f"bench-{acks}-{run}" for run in runs for acks in ("acks1", "acksall")]
    clients.create_topics(bootstrap, topics)
    clients.produce(bootstrap, "bench-warmup", WARMUP_RECORDS, acks="1", value_size=64)
    for run in runs:
        produced = run_name("produce_acks1", run)
        bench.produce(produced, f"bench-acks1-{run}", "1")
        bench.produce(run_name("produce_acksall", run), f"bench-acksall-{run}", "all")
        for name, fetch_bytes in CONSUME_PHASES:
            bench.consume(run_name(name, run), f"bench-acks1-{run}", produced, fetch_bytes)
    bench.produce("latency_acks1", "bench-rate-acks1", "1", rate=args.rate)
    bench.produce("latency_acksall", "bench-rate-acksall", "all", rate=args.rate)
    if args.no_profile:
        return
    count = args.profile_records or args.records
    size, warmup = args.value_size, ("bench-warmup", WARMUP_RECORDS)
    bench.profile(
        "produce (acks=1, max rate)",
        lambda: clients.produce(bootstrap, "bench-profile", count, acks="1", value_size=size),
    )
    bench.profile(
        "consume (from the beginning, 4 MiB partition fetches)",
        lambda: clients.consume(bootstrap, "bench-profile", count, warmup=warmup),
    )
    bench.profile(
        "consume (from the beginning, 16 MiB partition fetches)",
        lambda: clients.consume(
            bootstrap, "bench-profile", count, warmup=warmup, partition_fetch_bytes=16 * MIB
        ),
    )


def _figures(bench: Bench) -> None:
    for name, what in (
        ("produce_acks1", "produce acks=1, max rate"),
        ("produce_acksall", "produce acks=all, max rate"),
        ("consume", "consume from the beginning, 4 MiB partition fetches"),
        ("consume_fetch_1mib", "consume from the beginning, 1 MiB partition fetches"),
        ("consume_fetch_16mib", "consume from the beginning, 16 MiB partition fetches"),
    ):
        runs = [bench.phases[run_name(name, run)] for run in range(bench.args.repeat)]
        for suffix, field, unit in (
            ("mb", "mb_per_s", "MB/s"),
            ("rec", "records_per_s", "records/s"),
        ):
            key = f"{name}_{suffix}"
            bench.figures[key] = _median_figure(key, what, runs, field, unit)
    for name, what in (
        ("produce_acks1", "p99 latency, acks=1, max rate"),
        ("produce_acksall", "p99 latency, acks=all, max rate"),
        ("latency_acks1", "p99 latency, acks=1, fixed rate"),
        ("latency_acksall", "p99 latency, acks=all, fixed rate"),
    ):
        phase = bench.phases[name]
        latency = phase["latency"]
        rate = f"{phase['rate']:,.0f} records/s" if phase["rate"] else "max rate"
        note = (
            f"{rate}; p50 {latency['p50'] * 1000:.1f} ms, max {latency['max'] * 1000:.1f} ms; "
            f"librdkafka Message.latency() p99 {latency['rdkafka_p99'] * 1000:.1f} ms; "
            "lower is better"
        )
        key = f"{name}_p99" if name.startswith("latency") else f"latency_max_{name[8:]}_p99"
        bench.add(key, what, (latency["p99"] * 1000, "ms"), phase["seconds"], note)


def _median_figure(
    key: str, label: str, runs: list[dict[str, Any]], field: str, unit: str
) -> Figure:
    """The median run of ``runs`` by ``field``, with every run's value kept (``runs``)."""
    ordered = sorted(runs, key=lambda phase: phase[field])
    middle = ordered[(len(ordered) - 1) // 2]  # the lower median: a run that happened
    values = [phase[field] for phase in ordered]
    busy = ", ".join(f"{phase['broker_busy']:.0%}" for phase in runs)
    spread = f"median of {len(values)} runs, min {fmt(values[0])}, max {fmt(values[-1])}; "
    note = f"{spread}{middle['records']:,} records per run, broker CPU busy {busy}"
    return Figure(key, label, middle[field], unit, middle["seconds"], values, note)


def _machine() -> dict[str, Any]:
    cpu_model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "confluent_kafka": str(getattr(confluent_kafka, "__version__", "?")),
        "librdkafka": confluent_kafka.libversion()[0],
        "py_spy": py_spy_path() is not None,
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
    }


def _setup(args: argparse.Namespace, broker: BrokerProcess, client: list[int]) -> dict[str, Any]:
    producer = clients.producer_config("", "1|all")
    consumer = clients.consumer_config("")
    shown = ("acks", "linger.ms", "batch.size", "compression.type", "queue.buffering.max.kbytes")
    return {
        "records": args.records,
        "repeat": args.repeat,
        "value_size": args.value_size,
        "key_size": 8,
        "rate": args.rate,
        "rate_seconds": args.rate_seconds,
        "broker_command": " ".join(
            ["lethe", *broker.command()[-7:-3], "DIR", *broker.command()[-2:]]
        ),
        "broker_affinity": broker.affinity,
        "client_affinity": client,
        "producer": ", ".join(f"{k}={producer[k]}" for k in shown),
        "consumer": ", ".join(
            f"{k}={v}" for k, v in consumer.items() if k not in ("bootstrap.servers", "group.id")
        ),
        "producer_config": {k: v for k, v in producer.items() if k != "bootstrap.servers"},
        "consumer_config": {k: v for k, v in consumer.items() if k != "bootstrap.servers"},
    }


def _notes(args: argparse.Namespace, result: dict[str, Any]) -> list[str]:
    machine, setup, phases = result["machine"], result["setup"], result["phases"]
    notes = [
        f"Each throughput phase ran {args.repeat} times (`#2`, `#3`: the later runs, each into "
        "a fresh topic); a figure is the lower median of its runs (a run that happened, not "
        "an average) and its note gives the min and max; MB = 10^6 bytes of record values "
        "(keys, 8 bytes each, not counted).",
        f"Broker pinned with os.sched_setaffinity to CPU(s) {setup['broker_affinity']}, clients "
        f"to {setup['client_affinity']}; broker CPU busy = the broker process's user+system CPU "
        "seconds (/proc/PID/stat) over the phase's wall seconds.",
        "Latency: produce() to the delivery callback in this process (perf_counter); "
        "'librdkafka p99' is the same interval on librdkafka's clock (Message.latency() is "
        "rd_kafka_message_latency: now minus the time produce() enqueued the record). At max "
        "rate it is mostly time queued in the client (queue bound 32 MiB, Java's default "
        "buffer.memory), as in kafka-producer-perf-test --throughput -1.",
        "Consume timing starts at assign() of the topic, after a warm-up read of another topic "
        "(connection, metadata and the coordinator lookup librdkafka makes for a group.id) "
        "and a metadata request for the topic. The three consume phases read the same "
        "produce_acks1 records (in the page cache) and differ only in "
        "max.partition.fetch.bytes: 4 MiB for the target's figure (4 x the clients' 1 MiB "
        "default; picked after trial runs in which 16 MiB cost the broker more CPU per byte), "
        "1 MiB and 16 MiB beside it.",
    ]
    top = max(
        phase["records_per_s"] for name, phase in phases.items() if name.startswith("produce_")
    )
    if args.rate > 0.5 * top:
        notes.append(
            f"The fixed rate ({args.rate:,.0f} records/s) is over half the max produce rate "
            f"measured ({top:,.0f} records/s): not a moderate load on this machine."
        )
    notes.append(
        "'broker waiting for CPU': the time the broker was ready to run but another process held "
        "its CPU (kernel schedstat run-queue wait), over the phase's wall seconds."
    )
    for name, phase in phases.items():
        waiting = phase.get("broker_waiting")
        if waiting is not None and waiting > 0.05:
            notes.append(
                f"{name}: the broker waited for its CPU {waiting:.0%} of the phase (other "
                "processes ran on it); the figure is a lower bound."
            )
        throughput = name.startswith(("produce_", "consume"))
        if throughput and phase["broker_busy"] + (waiting or 0.0) < 0.85:
            notes.append(
                f"{name}: the broker was busy only {phase['broker_busy']:.0%} of the phase; "
                "part of the limit is outside the broker's CPU (client, batching, waits)."
            )
    other, wall = machine.get("other_cpu_seconds"), machine.get("wall_seconds")
    if other is not None and wall and other > 0.05 * wall:
        notes.append(
            f"Other work ran on this {machine['cpu_count']}-CPU machine during the run: other "
            f"processes used {other:.0f} CPU-seconds in {wall:.0f} s (on average "
            f"{other / wall:.2f} CPUs busy); the figures are lower bounds."
        )
    elif other is not None:
        notes.append(f"Other processes used {other:.1f} CPU-seconds during the {wall} s run.")
    return notes + list(args.note)


def _command_line(argv: Sequence[str]) -> str:
    """The command as run, without ``--note`` texts (they are listed under the tables)."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip or arg == "--note" or arg.startswith("--note="):
            skip = arg == "--note"
            continue
        shown.append(arg)
    return " ".join(["python benchmarks/broker_bench.py", *shown])


def _rerender(args: argparse.Namespace) -> int:
    """Add ``--note`` texts to an existing result and render ``broker.md`` again."""
    path: Path = args.render
    result = json.loads(path.read_text())
    result["notes"] = [*result["notes"], *args.note]
    for written in write_results(path.parent, result):
        print(f"wrote {written}")
    return 0


def _measure(args: argparse.Namespace, work_dir: Path) -> dict[str, Any]:
    broker_cpu, client_cpu = _cpu(args.broker_cpu), _cpu(args.client_cpu)
    broker = BrokerProcess(work_dir / "logs", cpu=broker_cpu).start()
    print(f"broker pid {broker.pid} on {broker.bootstrap}, CPUs {broker.affinity}", flush=True)
    bench = Bench(args, broker)
    try:
        with pinned(client_cpu):
            client = sorted(os.sched_getaffinity(0))
            _run_phases(bench, args)
        broker.stop()
    finally:
        broker.kill()
    _figures(bench)
    return {
        "setup": _setup(args, broker, client),
        "phases": bench.phases,
        "figures": bench.figures,
        "targets": evaluate(TARGETS, bench.figures),
        "profiles": bench.profiles,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    if args.render is not None:
        return _rerender(args)
    if not args.no_profile and py_spy_path() is None:
        print("py-spy not found: pip install py-spy, or pass --no-profile", file=sys.stderr)
        return 1
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    machine = _machine()
    meter = OtherWork()
    work_dir = Path(tempfile.mkdtemp(prefix="lethe-broker-bench-", dir=args.work_dir))
    try:
        measured = _measure(args, work_dir)
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    finally:
        if args.keep_logs:
            print(f"kept {work_dir}")
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    machine |= meter.stop()
    result = {
        "started": started,
        "command": _command_line(sys.argv[1:] if argv is None else argv),
        "machine": machine,
        **measured,
    }
    result["notes"] = _notes(args, result)
    for path in write_results(args.out, result):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
