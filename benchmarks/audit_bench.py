"""Throughput of ``lethe audit`` (Spark local[1], local[2]) beside single-process ``lethe verify``.

Usage::

    python benchmarks/audit_bench.py [--size-gib 2] [--repeat 1] [--out benchmarks/results]
                                     [--data-dir benchmarks/data] [--work-dir DIR] [--note TEXT]...

Theory of operation
-------------------
1. ``audit_data.ensure_logdir`` generates (or reuses) a log dir of at least
   ``--size-gib`` GiB of segments: 4 topics x 4 partitions, ~1 KiB records,
   48 MiB segments, indexes and root checkpoints. Every file is read once so
   the page cache holds it for every measured run alike.
2. Whole processes, each run a fresh interpreter (and, for the audit, a fresh
   JVM), wall time from start to exit: ``lethe verify DIR`` (the issue's
   single-process reference), ``lethe verify --deep DIR`` (also decodes every
   record, the work closest to the audit's records table), then
   ``lethe audit DIR --master local[N] --out OUT --now T`` for N = 1, 2. The
   audit's stderr lines (``lethe audit: ... bytes of segments``, ``decoded
   ...``, ``report written``) are time-stamped as they arrive, which splits
   each run into phases: JVM/session start, decode (planning, then the tasks
   decoding every file and writing its Parquet parts: every table is complete
   then), checks and report, stop. Its stdout must report the generated
   record count.
3. Where a task's time goes, without Spark, in this process pinned to one CPU:
   the decode the tasks run (``decode_item`` at level ``all`` into the row
   buffers, rows discarded) and the whole task (``sink.write_items``: decode,
   Arrow and Parquet files), over input partitions of the job's plan.

MB = 10^6 bytes of ``.log`` files; MB/s = MB / wall seconds (best run).
Targets (issue 5): local[2] >= 1.8 x local[1]; per-core throughput (local[1],
and local[2] / 2) >= half of single-process ``lethe verify``. Results:
``<out>/audit.json`` and ``<out>/audit.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from audit_data import GIB, LogDir, ensure_logdir
from bench_report import Figure, Target, evaluate
from bench_timing import BenchError, OtherWork, pinned

HERE = Path(__file__).resolve().parent
MB = 1_000_000
NOW_MS = 1_800_000_000_000
MASTERS = ("local[1]", "local[2]")
PROFILE_BYTES = 256 * 1024 * 1024
#: phase name <- the stderr line that ends it
PHASES = (
    ("start", re.compile(r"log dirs, \d+ bytes")),
    ("decode", re.compile(r"decoded \d+ rows")),
    ("checks", re.compile(r"report written")),
)
TARGETS = [
    Target("audit_local2", "local[2] >= 1.8 x local[1]", relative_to="audit_local1", factor=1.8),
    Target(
        "audit_local1",
        "per-core, local[1] >= 0.5 x lethe verify",
        relative_to="verify",
        factor=0.5,
    ),
    Target(
        "audit_local2_per_core",
        "per-core, local[2] / 2 >= 0.5 x lethe verify",
        relative_to="verify",
        factor=0.5,
    ),
]


def _lethe() -> list[str]:
    found = shutil.which("lethe")
    return [found] if found else [sys.executable, "-m", "lethe_tools.cli"]


def _warm(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            with open(path, "rb") as handle:
                while handle.read(16 * 1024 * 1024):
                    pass


def _timed(command: list[str]) -> tuple[float, str, list[tuple[float, str]]]:
    """(seconds, stdout, [(seconds since start, stderr line)]); raises on failure."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    lines: list[tuple[float, str]] = []

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append((time.perf_counter() - start, line.rstrip("\n")))

    # stderr belongs to the reader thread alone: communicate() would read it
    # too, and the lines it took never reached the phase timings.
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert process.stdout is not None
    stdout = process.stdout.read()
    process.wait()
    reader.join()
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        tail = "\n".join(text for _, text in lines[-20:])
        raise BenchError(f"{' '.join(command)} exited {process.returncode}: {tail}")
    return seconds, stdout, lines


def phases(lines: list[tuple[float, str]], total: float) -> dict[str, float]:
    """Seconds per phase of an audit run from its time-stamped stderr lines."""
    found: dict[str, float] = {}
    previous = 0.0
    for name, pattern in PHASES:
        at = next((t for t, text in lines if pattern.search(text)), None)
        if at is None:
            continue
        found[name] = round(at - previous, 2)
        previous = at
    found["stop"] = round(total - previous, 2)
    return found


def run_verify(root: Path, repeat: int, deep: bool) -> list[float]:
    command = [*_lethe(), "verify", *(["--deep"] if deep else []), str(root)]
    return [_timed(command)[0] for _ in range(max(1, repeat))]


def run_audit(root: Path, master: str, work: Path, records: int) -> dict[str, Any]:
    out = work / ("out-" + re.sub(r"\W", "", master))
    command = [*_lethe(), "audit", str(root), "--master", master, "--out", str(out)]
    seconds, stdout, lines = _timed([*command, "--now", str(NOW_MS)])
    rows = re.search(r"^records: (\d+) rows$", stdout, re.MULTILINE)
    if rows is None or int(rows[1]) != records:
        raise BenchError(f"audit {master} wrote {rows and rows[1]} records, expected {records}")
    parquet = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    shutil.rmtree(out, ignore_errors=True)
    return {
        "seconds": seconds,
        "phases": phases(lines, seconds),
        "parquet_bytes": parquet,
        "stderr": [f"{at:7.2f} {text}" for at, text in lines if "tasks" not in text],
    }


def task_profile(root: Path, budget: int = PROFILE_BYTES) -> dict[str, float]:
    """One core, no Spark: MB/s of the tasks' decode alone and of the whole task.

    Over whole input partitions of the job's own plan until ``budget`` bytes
    of segments are covered (the rates hold for the rest: every partition is
    alike), so the profile takes seconds, not minutes. The whole task is
    ``sink.write_items``: decode, Arrow batches and Parquet files (to a temp dir).
    """
    from lethe_tools.audit.datasource import KafkaLogReader, absolute
    from lethe_tools.audit.decode import decode_item
    from lethe_tools.audit.rows import Tables
    from lethe_tools.audit.sink import write_items

    reader = KafkaLogReader({"level": "write", "out": "-", "paths": absolute([str(root)])})
    parts, covered = [], 0
    for part in reader.partitions():
        if covered >= budget:
            break
        parts.append(part)
        covered += sum(i.size for i in part.items if i.kind == "log")  # type: ignore[attr-defined]
    start = time.perf_counter()
    for part in parts:
        out = Tables()
        for item in part.items:  # type: ignore[attr-defined]
            for _ in decode_item(item, "all", out):  # what a task of level "write" decodes
                if out.count >= 65536:
                    for columns in out.all():
                        columns.take()
        for columns in out.all():
            columns.take()
    decode = time.perf_counter() - start
    target = Path(tempfile.mkdtemp(prefix="audit-profile-"))
    try:
        start = time.perf_counter()
        files = 0
        for number, part in enumerate(parts):
            files += len(write_items(part.items, str(target), number))  # type: ignore[attr-defined]
        whole = time.perf_counter() - start
    finally:
        shutil.rmtree(target, ignore_errors=True)
    return {
        "bytes": covered,
        "decode_s": round(decode, 2),
        "task_s": round(whole, 2),
        "decode_mb_s": round(covered / MB / decode, 1),
        "task_mb_s": round(covered / MB / whole, 1),
        "parquet_files": files,
    }


def _figure(name: str, label: str, runs: list[float], size: int, note: str = "") -> Figure:
    best = min(runs)
    return Figure(name, label, size / MB / best, "MB/s", best, runs, note)


def measure(
    data: LogDir, repeat: int, work: Path, masters: tuple[str, ...] = MASTERS
) -> tuple[dict[str, Figure], dict[str, Any]]:
    root = Path(data.path)
    figures: dict[str, Figure] = {}
    detail: dict[str, Any] = {}
    figures["verify"] = _figure(
        "verify", "lethe verify, whole process", run_verify(root, repeat, False), data.log_bytes
    )
    figures["verify_deep"] = _figure(
        "verify_deep",
        "lethe verify --deep, whole process",
        run_verify(root, repeat, True),
        data.log_bytes,
    )
    for master in masters:
        runs = [run_audit(root, master, work, data.records) for _ in range(max(1, repeat))]
        best = min(runs, key=lambda run: run["seconds"])
        name = "audit_" + master.strip("[]").replace("[", "")
        figures[name] = _figure(
            name,
            f"lethe audit --master {master}, whole process",
            [run["seconds"] for run in runs],
            data.log_bytes,
            note=", ".join(f"{k} {v} s" for k, v in best["phases"].items()),
        )
        detail[master] = runs
    if "audit_local2" in figures:
        two = figures["audit_local2"]
        figures["audit_local2_per_core"] = Figure(
            "audit_local2_per_core",
            "lethe audit local[2], per core",
            two.value / 2,
            "MB/s",
            two.seconds,
        )
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    with pinned(cpus[-1]):
        detail["task_profile_one_core"] = task_profile(root)
    return figures, detail


def _fmt(value: float | None) -> str:
    return "-" if value is None else (f"{value:,.1f}" if value >= 10 else f"{value:.3g}")


def markdown(result: dict[str, Any]) -> str:
    data, machine = result["data"], result["machine"]
    lines = [
        "# Audit speed benchmark",
        "",
        f"Run {result['started']} with `{result['command']}`; best of {result['repeat']}.",
        f"Machine: {machine['cpu_count']} CPUs, Python {machine['python']}; load average "
        f"{machine['loadavg_before']} before, {machine['loadavg_after']} after; other processes' "
        f"CPU time during the {machine['wall_seconds']} s run: "
        f"{_fmt(machine['other_cpu_seconds'])} s.",
        f"Data: {data['log_bytes']:,} bytes of segments in {data['segments']} segments, "
        f"{data['records']:,} records, {data['batches']:,} batches (`{data['path']}`).",
        "",
        "| figure | MB/s | best s | runs s | phases (best run) |",
        "|---|---:|---:|---|---|",
    ]
    for fig in result["figures"].values():
        runs = ", ".join(f"{s:.1f}" for s in fig["runs"]) or "-"
        lines.append(
            f"| {fig['label']} | {_fmt(fig['value'])} | {fig['seconds']:.1f} | {runs} | "
            f"{fig['note']} |"
        )
    lines += ["", "| target | required | measured | result |", "|---|---:|---:|---|"]
    for row in result["targets"]:
        lines.append(
            f"| {row['target']} | {_fmt(row['required'])} | {_fmt(row['measured'])} | "
            f"**{row['status']}** |"
        )
    lines += ["", *[f"- {note}" for note in result["notes"]], ""]
    return "\n".join(lines)


def write_results(out: Path, result: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "audit.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "audit.md").write_text(markdown(result))


def _notes(figures: dict[str, Figure], detail: dict[str, Any], other: dict[str, Any]) -> list[str]:
    notes = []
    profile = detail["task_profile_one_core"]
    notes.append(
        f"one core, no Spark, {profile['bytes']:,} bytes of the job's input partitions: the "
        f"tasks' decode runs at {profile['decode_mb_s']} MB/s, the whole task (decode, Arrow, "
        f"Parquet files) at {profile['task_mb_s']} MB/s"
    )
    notes += _phase_notes(detail)
    wall = other.get("wall_seconds") or 0
    if other.get("other_cpu_seconds") and wall and other["other_cpu_seconds"] > 0.05 * wall:
        notes.append(
            f"CPU time not accounted to this process and its reaped children: "
            f"{other['other_cpu_seconds']:.0f} s during the {wall} s run; it includes the "
            "audit's own Spark JVMs (grandchildren, never reaped by this process), so it "
            "overstates other work"
        )
    return notes


def _phase_notes(detail: dict[str, Any]) -> list[str]:
    """Share of each phase per master, and each phase's speed-up from local[1] to local[2]."""
    best = {
        master: min(runs, key=lambda run: run["seconds"])
        for master, runs in detail.items()
        if master.startswith("local")
    }
    notes = []
    for master, run in best.items():
        shares = ", ".join(
            f"{name} {100 * seconds / run['seconds']:.0f} %"
            for name, seconds in run["phases"].items()
        )
        notes.append(f"{master} time by phase: {shares}")
    if {"local[1]", "local[2]"} <= set(best):
        one, two = best["local[1]"]["phases"], best["local[2]"]["phases"]
        ratios = ", ".join(
            f"{name} {one[name] / two[name]:.2f}x" for name in one if two.get(name, 0) > 0
        )
        notes.append(f"speed-up local[1] -> local[2] per phase: {ratios}")
        after = {m: run["seconds"] - run["phases"].get("start", 0.0) for m, run in best.items()}
        notes.append(
            "without the start phase (interpreter, JVM and session start, the same for any "
            f"data size): local[1] {after['local[1]']:.1f} s, local[2] {after['local[2]']:.1f} s, "
            f"{after['local[1]'] / after['local[2]']:.2f}x"
        )
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gib", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--note", action="append", default=[])
    parser.add_argument(
        "--masters", default=",".join(MASTERS), help="comma-separated Spark masters to time"
    )
    args = parser.parse_args(argv)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    data = ensure_logdir(args.data_dir, int(args.size_gib * GIB))
    _warm(Path(data.path))
    load_before = os.getloadavg()
    other = OtherWork()
    work = Path(tempfile.mkdtemp(prefix="audit-bench-", dir=args.work_dir))
    try:
        figures, detail = measure(data, args.repeat, work, tuple(args.masters.split(",")))
    except BenchError as error:
        print(f"audit_bench: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    spent = other.stop()
    result = {
        "started": started,
        "command": " ".join(["python", "benchmarks/audit_bench.py", *(argv or sys.argv[1:])]),
        "repeat": args.repeat,
        "data": asdict(data),
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            **spent,
        },
        "figures": {name: asdict(fig) for name, fig in figures.items()},
        "targets": evaluate(TARGETS, figures),
        "detail": detail,
        "notes": [*_notes(figures, detail, spent), *args.note],
    }
    write_results(args.out, result)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
