"""Wall time of the whole conformance suite against Apache Kafka launched by the runner.

Usage::

    python benchmarks/conformance_kafka_bench.py --kafka-home DIR [--out benchmarks/results]
        [--verified conformance/verified/kafka-4.0.0] [--launch-ports LO-HI] [--note TEXT]...

Theory of operation
-------------------
One process, as a user runs it: ``lethe conformance run --launch kafka
--kafka-home DIR --report R`` (Kafka formatted and started by the runner, one
node, three for cluster scenarios, a node of its own per own-log-dir
scenario). Its wall time is the figure (aim: under 15 minutes on a 2-core
machine), with the CPU time of the runner and its children (the JVMs), the
machine's load before and after, the outcome counts and the slowest
scenarios from the report. A run counts whatever its verdict (exit 0 or 1);
any other exit fails the benchmark and nothing is written.

``--verified DIR`` also copies the run's report.json and report.md there, with
the Kafka version and commit id read from the distribution's
``kafka-clients`` jar: the run that is the verified report is the run timed.
Results: ``<out>/conformance_kafka.json`` and ``<out>/conformance_kafka.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from bench_results import write_result_files

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 15 * 60.0


def kafka_version(home: Path) -> dict[str, str]:
    """version and commitId from ``libs/kafka-clients-*.jar`` (kafka-version.properties)."""
    for jar in sorted((home / "libs").glob("kafka-clients-*.jar")):
        with zipfile.ZipFile(jar) as archive:
            text = archive.read("kafka/kafka-version.properties").decode()
        pairs = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        return {"version": pairs.get("version", "?"), "commit_id": pairs.get("commitId", "?")}
    raise SystemExit(f"{home}/libs has no kafka-clients jar")


def run(home: Path, ports: str | None) -> tuple[float, float, int, Path]:
    report = Path(tempfile.mkdtemp(prefix="lethe-kafka-bench-"))
    argv = [
        str(Path(sys.executable).with_name("lethe")),
        "conformance",
        "run",
        "--launch",
        "kafka",
        "--kafka-home",
        str(home),
        "--report",
        str(report),
    ]
    if ports:
        argv += ["--launch-ports", ports]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"lethe conformance run exited {done.returncode}: {done.stderr[-2000:]}")
    (report / "matrix.txt").write_text(done.stdout)
    return wall, cpu, done.returncode, report


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka-home", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--verified", type=Path)
    parser.add_argument("--launch-ports")
    parser.add_argument("--note", action="append", default=[])
    options = parser.parse_args(args)
    kafka = kafka_version(options.kafka_home)
    load_before = os.getloadavg()
    wall, cpu, status, report = run(options.kafka_home, options.launch_ports)
    load_after = os.getloadavg()
    data: dict[str, Any] = json.loads((report / "report.json").read_text())
    slowest = sorted(data["scenarios"], key=lambda s: -s["duration_s"])[:10]
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": "lethe conformance run --launch kafka --kafka-home DIR --report DIR",
        "kafka": kafka,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "exit_status": status,
        "target_s": TARGET_SECONDS,
        "summary": data["summary"],
        "retries": data.get("retries", {}),
        "slowest": [{"id": s["id"], "s": s["duration_s"]} for s in slowest],
        "notes": options.note,
    }
    write_result_files(options.out, "conformance_kafka", result, render)
    if options.verified is not None:
        options.verified.mkdir(parents=True, exist_ok=True)
        for name in ("report.json", "report.md"):
            shutil.copyfile(report / name, options.verified / name)
        (options.verified / "matrix.txt").write_text((report / "matrix.txt").read_text())
    shutil.rmtree(report, ignore_errors=True)
    print(render(result))
    return 0


def render(result: dict[str, Any]) -> str:
    kafka = result["kafka"]
    verdict = "PASS" if result["wall_s"] < result["target_s"] else "MISS"
    counts = ", ".join(f"{n} {k}" for k, n in result["summary"].items() if n)
    lines = [
        "# Conformance suite against launched Apache Kafka",
        "",
        f"Run {result['when']}: `{result['command']}` on Kafka {kafka['version']} "
        f"(commitId {kafka['commit_id']}). Machine: {result['machine']}. Load average "
        f"{result['load_before']} before, {result['load_after']} after.",
        "",
        "| figure | measured | target | result |",
        "|---|---:|---:|---|",
        f"| wall time, one run | {result['wall_s']} s | < {result['target_s']:.0f} s | "
        f"**{verdict}** |",
        f"| CPU time (runner and JVMs) | {result['cpu_s']} s | | |",
        "",
        f"Outcomes: {counts}; exit status {result['exit_status']}. "
        f"Retries: {result['retries'] or 'none'}.",
        "",
        "| slowest scenario | s |",
        "|---|---:|",
        *(f"| `{s['id']}` | {s['s']} |" for s in result["slowest"]),
        "",
        *(f"- {note}" for note in result["notes"]),
    ]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.exit(main())
