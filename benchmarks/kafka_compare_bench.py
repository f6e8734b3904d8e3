"""lethe broker beside Kafka 4.0, same settings, same clients, alternating run by run.

Usage::

    LETHE_KAFKA_HOME=/path/to/kafka_2.13-4.0.0 python benchmarks/kafka_compare_bench.py \
        [--pairs 5] [--records 200000] [--out benchmarks/results]
    python benchmarks/kafka_compare_bench.py --smoke --out DIR     # lethe alone, tiny

Theory of operation
-------------------
On a shared machine absolute figures drift with other work, so the figure that
matters is a ratio measured under the same conditions: both brokers run at the
same time (the idle one costs little), neither is pinned, and every workload
runs on one broker and right after on the other, the order swapped every pair.
A pair gives one ratio lethe / Kafka per figure; the results give each ratio's
minimum, median and maximum over the pairs, every run's figures, and the load
average when the run started. Beside each rate, the broker process's own CPU
seconds over the run (``/proc``; the JVM's every thread for Kafka): a figure
that other work on the machine moves far less than a rate, and that tells a
broker which is the limit from one that waits for its client.

Settings: Kafka runs its distribution's ``config/server.properties`` with own
ports and ``log.dirs``; ``lethe broker`` runs its defaults, which are the same
file's values (``lethe_reference.server.defaults``); both get
:data:`bench_kafka_process.SHARED_OVERRIDES`. Workloads, each into a fresh
one-partition topic:

* ``tool_produce``: ``kafka-producer-perf-test.sh`` (the Java producer's
  defaults: acks=all, batch.size 16384, linger.ms 5), ``--records`` 1 KiB records;
* ``tool_consume``: ``kafka-consumer-perf-test.sh`` reading them with a new
  group (subscribe, join, fetch): ``MB.sec`` end to end and ``fetch.MB.sec``
  (the same without the group join);
* ``py_produce`` / ``py_consume``: confluent-kafka (:mod:`bench_broker_clients`:
  acks=all, linger.ms 5, batch.size 1 MB; the consumer assigned by hand, no
  group, 4 MiB partition fetches), every record checked once;
* ``py_consume_1mib``: the same read with librdkafka's default 1 MiB partition
  fetches (the size most consumers run with).

Without a Kafka distribution (no ``--kafka-home``, no ``LETHE_KAFKA_HOME``)
only lethe runs, and only the Python client workloads (the perf tools come
with Kafka). ``--smoke`` is a bounded run for tests (lethe alone, a few
thousand records, one pair); its figures mean nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bench_broker_clients as clients
import confluent_kafka
from bench_broker_process import BrokerProcess, cpu_seconds_of
from bench_kafka_process import (
    SHARED_OVERRIDES,
    KafkaBroker,
    consumer_perf,
    free_port,
    kafka_version,
    producer_perf,
)
from bench_results import write_result_files
from bench_timing import BenchError

HERE = Path(__file__).resolve().parent
MB = 1_000_000
MIB = 1 << 20
WARMUP = ("bench-warmup", 100)
_CREATE_ATTEMPTS = 3
#: Environment variables that change what runs (the Kafka distribution; which lethe sources).
_ENV = ("LETHE_KAFKA_HOME", "PYTHONPATH")
#: (workload, figure key, what it is), in report order.
FIGURES = [
    ("tool_produce", "mb_per_s", "kafka-producer-perf-test MB/s"),
    ("tool_consume", "mb_per_s", "kafka-consumer-perf-test MB/s, end to end (group join)"),
    ("tool_consume", "fetch_mb_per_s", "kafka-consumer-perf-test fetch.MB.sec (no join)"),
    ("py_produce", "mb_per_s", "confluent-kafka produce MB/s (acks=all)"),
    ("py_consume", "mb_per_s", "confluent-kafka consume MB/s (assigned, no group)"),
    ("py_consume_1mib", "mb_per_s", "confluent-kafka consume MB/s, librdkafka's 1 MiB fetches"),
    (
        "tool_produce",
        "broker_cpu_s",
        "broker CPU s per kafka-producer-perf-test run, lower is better",
    ),
    (
        "tool_consume",
        "broker_cpu_s",
        "broker CPU s per kafka-consumer-perf-test run, lower is better",
    ),
    ("py_produce", "broker_cpu_s", "broker CPU s per confluent-kafka produce run, lower is better"),
    ("py_consume", "broker_cpu_s", "broker CPU s per confluent-kafka consume run, lower is better"),
    (
        "py_consume_1mib",
        "broker_cpu_s",
        "broker CPU s per confluent-kafka 1 MiB-fetch consume run, lower is better",
    ),
]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--kafka-home", type=Path, default=os.environ.get("LETHE_KAFKA_HOME") or None)
    add("--pairs", type=int, default=5, help="runs of every workload on each broker")
    add("--records", type=int, default=200_000, help="records per produce run")
    add("--value-size", type=int, default=1024, help="bytes per record value")
    add("--ports", default="0", help="LO-HI: port range for both brokers (0: any free port)")
    add("--out", type=Path, default=HERE / "results", help="results directory")
    add("--name", default="kafka_compare", help="results file name (without suffix)")
    add("--work-dir", type=Path, default=None, help="parent of the temporary log dirs")
    add("--note", action="append", default=[], help="a note for the results")
    add("--smoke", action="store_true", help="tiny bounded run, lethe alone")
    args = parser.parse_args(argv)
    if args.smoke:
        args.kafka_home, args.pairs, args.records = None, 1, 2000
    return args


class Side:
    """One broker under test and the workloads run against it."""

    def __init__(self, name: str, bootstrap: str, kafka_home: Path | None, pid: int) -> None:
        self.name, self.bootstrap, self.kafka_home = name, bootstrap, kafka_home
        #: the broker's process (Kafka's start script execs the JVM): its CPU per run
        self.pid = pid
        self.commands: dict[str, str] = {}

    def _topic(self, workload: str, pair: int) -> str:
        """A fresh one-partition topic; creation is retried (a loaded machine can make a
        broker miss the admin client's deadline; a retry then finds the topic made)."""
        topic = f"{workload}-{pair}"
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                clients.create_topics(self.bootstrap, [topic])
                return topic
            except confluent_kafka.KafkaException as error:
                if error.args[0].code() == confluent_kafka.KafkaError.TOPIC_ALREADY_EXISTS:
                    return topic
                if attempt + 1 == _CREATE_ATTEMPTS:
                    raise BenchError(f"creating {topic} on {self.name}: {error}") from None
            except TimeoutError:
                if attempt + 1 == _CREATE_ATTEMPTS:
                    raise BenchError(f"creating {topic} on {self.name} timed out") from None
        return topic

    def tool_produce(self, pair: int, args: argparse.Namespace) -> dict[str, float]:
        assert self.kafka_home is not None
        topic = self._topic("tool", pair)
        run = producer_perf(self.kafka_home, self.bootstrap, topic, args.records, args.value_size)
        self.commands["tool_produce"] = shlex.join(run.command)
        return run.figures

    def tool_consume(self, pair: int, args: argparse.Namespace) -> dict[str, float]:
        assert self.kafka_home is not None
        group = f"perf-{pair}-{time.time_ns()}"
        run = consumer_perf(self.kafka_home, self.bootstrap, f"tool-{pair}", args.records, group)
        self.commands["tool_consume"] = shlex.join(run.command)
        return run.figures

    def py_produce(self, pair: int, args: argparse.Namespace) -> dict[str, float]:
        topic = self._topic("py", pair)
        run = clients.produce(
            self.bootstrap, topic, args.records, acks="all", value_size=args.value_size
        )
        return {"mb_per_s": run.value_bytes / MB / run.seconds, "seconds": run.seconds}

    def py_consume(
        self, pair: int, args: argparse.Namespace, fetch_bytes: int = clients.PARTITION_FETCH_BYTES
    ) -> dict[str, float]:
        run = clients.consume(
            self.bootstrap,
            f"py-{pair}",
            args.records,
            warmup=WARMUP,
            partition_fetch_bytes=fetch_bytes,
        )
        return {"mb_per_s": run.value_bytes / MB / run.seconds, "seconds": run.seconds}

    def py_consume_1mib(self, pair: int, args: argparse.Namespace) -> dict[str, float]:
        """The same read with librdkafka's default max.partition.fetch.bytes (1 MiB)."""
        return self.py_consume(pair, args, MIB)


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def _workloads(kafka: bool) -> list[str]:
    tools = ["tool_produce", "tool_consume"] if kafka else []
    return [*tools, "py_produce", "py_consume", "py_consume_1mib"]


def run_pairs(args: argparse.Namespace, sides: list[Side]) -> list[dict[str, Any]]:
    """Every workload on every side, alternating; one entry per run."""
    runs: list[dict[str, Any]] = []
    for pair in range(args.pairs):
        order = sides if pair % 2 == 0 else sides[::-1]
        for workload in _workloads(len(sides) > 1):
            for side in order:
                load = _load()
                work: Callable[[int, argparse.Namespace], dict[str, float]] = getattr(
                    side, workload
                )
                cpu_before = cpu_seconds_of(side.pid)
                figures = work(pair, args)
                figures["broker_cpu_s"] = round(cpu_seconds_of(side.pid) - cpu_before, 2)
                runs.append(
                    {"pair": pair, "broker": side.name, "workload": workload}
                    | {"load": load, "figures": figures}
                )
                shown = ", ".join(f"{k} {v:,.1f}" for k, v in figures.items())
                print(f"pair {pair} {workload:13} {side.name:6} {shown} (load {load})", flush=True)
    return runs


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
        "n": len(values),
    }


def summarize(runs: list[dict[str, Any]], brokers: list[str]) -> list[dict[str, Any]]:
    """Per figure: each broker's spread, and the lethe / Kafka ratio's spread over pairs."""
    rows = []
    for workload, key, label in FIGURES:
        per = {
            broker: {
                run["pair"]: run["figures"][key]
                for run in runs
                if run["workload"] == workload
                and run["broker"] == broker
                and key in run["figures"]  # results written before a figure existed
            }
            for broker in brokers
        }
        if not per["lethe"]:
            continue
        row: dict[str, Any] = {"workload": workload, "figure": key, "label": label}
        row |= {broker: _spread(list(values.values())) for broker, values in per.items()}
        if "kafka" in per:
            ratios = [per["lethe"][p] / per["kafka"][p] for p in per["lethe"] if per["kafka"][p]]
            row["ratio"] = _spread(ratios)
            row["ratios"] = [round(r, 3) for r in ratios]
        rows.append(row)
    return rows


def _versions(kafka_home: Path | None) -> dict[str, str]:
    versions: dict[str, str] = {
        "python": platform.python_version(),
        "confluent_kafka": str(confluent_kafka.__version__),
        "librdkafka": str(confluent_kafka.libversion()[0]),
    }
    if kafka_home is not None:
        versions["kafka"] = kafka_version(kafka_home)
    return versions


def _command() -> str:
    """This run's command line, with the environment that chose what ran."""
    env = [f"{name}={os.environ[name]}" for name in _ENV if os.environ.get(name)]
    return shlex.join([*env, Path(sys.executable).name, *sys.argv])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    lo, _, hi = args.ports.partition("-")
    hi = hi or "0"
    with tempfile.TemporaryDirectory(prefix="lethe-compare-", dir=args.work_dir) as tmp:
        work = Path(tmp)
        overrides = [f"{key}={value}" for key, value in SHARED_OVERRIDES.items()]
        lethe_port = free_port(int(lo), int(hi))
        lethe = BrokerProcess(
            work / "lethe-logs", cpu=None, listen=f"127.0.0.1:{lethe_port}", overrides=overrides
        )
        kafka: KafkaBroker | None = None
        if args.kafka_home is not None:
            port = free_port(lethe_port + 1 if int(lo) else 0, int(hi))
            controller = free_port(port + 1 if int(lo) else 0, int(hi))
            kafka = KafkaBroker(args.kafka_home, work / "kafka", port, controller)
        started: list[Any] = []
        try:
            started.append(lethe.start())
            sides = [Side("lethe", lethe.bootstrap, args.kafka_home, lethe.pid)]
            if kafka is not None:
                started.append(kafka.start())
                assert kafka.process is not None
                sides.append(Side("kafka", kafka.bootstrap, args.kafka_home, kafka.process.pid))
            for side in sides:
                clients.create_topics(side.bootstrap, [WARMUP[0]])
                clients.produce(side.bootstrap, WARMUP[0], WARMUP[1], acks="all")
            load_before = _load()
            started_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
            runs = run_pairs(args, sides)
            load_after = _load()
        finally:
            for broker in reversed(started):
                broker.stop()
    brokers = [side.name for side in sides]
    return {
        "started": started_at,
        "command": _command(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "load_before": load_before,
        "load_after": load_after,
        "versions": _versions(args.kafka_home),
        "settings": {
            "records": args.records,
            "value_size": args.value_size,
            "pairs": args.pairs,
            "shared_overrides": dict(SHARED_OVERRIDES),
            "lethe": shlex.join(lethe.command()),
            "kafka": None if kafka is None else kafka.settings(),
            "py_producer": clients.producer_config("BOOTSTRAP", "all"),
            "py_consumer": clients.consumer_config("BOOTSTRAP"),
            "tool_commands": sides[0].commands,
        },
        "runs": runs,
        "summary": summarize(runs, brokers),
        "notes": args.note,
    }


def _fmt(spread: dict[str, float], digits: int = 1) -> str:
    return " / ".join(f"{spread[k]:.{digits}f}" for k in ("min", "median", "max"))


def markdown(result: dict[str, Any]) -> str:
    settings, versions = result["settings"], result["versions"]
    both = settings["kafka"] is not None
    lines = [
        "# lethe broker beside Kafka" if both else "# lethe broker (no Kafka given)",
        "",
        f"Run {result['started']} with `{result['command']}`.",
        f"Machine: {result['machine']['cpus']} CPUs, {result['machine']['platform']}; load "
        f"average {result['load_before']} before, {result['load_after']} after.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        f"{settings['pairs']} pairs, {settings['records']:,} records of "
        f"{settings['value_size']} bytes per produce run, a fresh topic per run.",
        "",
        "## Summary (min / median / max over pairs)",
        "",
    ]
    head = "| figure | lethe | " + ("Kafka | lethe / Kafka |" if both else "")
    lines += [head, "|---|---:|" + ("---:|---:|" if both else "")]
    for row in result["summary"]:
        cells = [row["label"], _fmt(row["lethe"])]
        if both:
            cells += [_fmt(row["kafka"]), _fmt(row["ratio"], 2)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Settings", ""]
    lines.append(f"- lethe: `{settings['lethe']}` (port and log dir of the run)")
    if both:
        changed = ", ".join(f"`{k}={v}`" for k, v in settings["kafka"].items())
        lines.append(f"- Kafka: the distribution's config/server.properties with {changed}")
    shared = ", ".join(f"`{k}={v}`" for k, v in settings["shared_overrides"].items())
    lines.append(f"- on both brokers: {shared}")
    for name, command in settings["tool_commands"].items():
        lines.append(f"- {name}: `{command}`")
    for name in ("py_producer", "py_consumer"):
        config = ", ".join(
            f"{k}={v}" for k, v in settings[name].items() if k != "bootstrap.servers"
        )
        lines.append(f"- {name} (confluent-kafka): {config}")
    lines += ["", "## Every run", "", "| pair | workload | broker | load average | figures |"]
    lines.append("|---:|---|---|---|---|")
    for run in result["runs"]:
        shown = ", ".join(f"{k} {v:,.2f}" for k, v in run["figures"].items())
        lines.append(
            f"| {run['pair']} | {run['workload']} | {run['broker']} | {run['load']} | {shown} |"
        )
    if result["notes"]:
        lines += ["", "## Notes", "", *(f"- {note}" for note in result["notes"])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    try:
        result = measure(args)
    except BenchError as error:
        print(f"kafka_compare_bench: {error}", file=sys.stderr)
        return 1
    json_path, md_path = write_result_files(args.out, args.name, result, markdown)
    print(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
