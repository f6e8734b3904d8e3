"""Throughput of ``lethe audit`` (Spark local[1], local[2]) beside single-process ``lethe verify``.

Usage::

    python benchmarks/audit_bench.py [--size-gib 6] [--base-gib 2] [--repeat 1]
                                     [--masters local[1],local[2]] [--out benchmarks/results]
                                     [--data-dir benchmarks/data] [--work-dir DIR] [--note TEXT]...

Theory of operation
-------------------
1. ``audit_data.ensure_logdir`` generates (or reuses) two log dirs,
   ``<data-dir>/<N>gib`` with at least ``--base-gib`` and ``--size-gib`` GiB
   of segments: 4 topics x 4 partitions, ~1 KiB records, 48 MiB segments,
   indexes and root checkpoints. Every file of both is read once so the page
   cache holds them for every measured run alike.
2. Whole processes, each run a fresh interpreter (and, for the audit, a fresh
   JVM), wall time from start to exit: ``lethe verify DIR`` (the issue's
   single-process reference), ``lethe verify --deep DIR`` (also decodes every
   record, the work closest to the audit's records table), then
   ``lethe audit DIR --master local[N] --out OUT --now T`` for N = 1, 2. Each
   command's runs alternate between the base dir and the large dir, best of
   ``--repeat`` each. The audit's stderr lines (``lethe audit: ... bytes of segments``,
   ``decoded ...``, ``report written``) are time-stamped as they arrive,
   which splits each run into phases: JVM/session start, decode (planning,
   then the tasks decoding every file and writing its Parquet parts: every
   table is complete then), checks and report, stop. Its stdout must report
   the generated record count.
3. Two kinds of figure. Whole process (large dir): MB / best seconds, as a
   user sees one run. Marginal: (MB large - MB base) / (best s large - best s
   base). A whole-process time is F + B / R: fixed costs F that do not grow
   with the data (interpreter and JVM start, Spark session, planning) plus
   the bytes B at the rate R that scales with cores. F caps the whole-process
   local[2]/local[1] ratio at (F + B/R1) / (F + B/R2), far below R2/R1 on a
   few GiB; the difference of two sizes cancels F and leaves R, everything
   that grows with the data. The per-phase differences show which phase
   grows. A difference of zero or less (noise) is reported as n/a, never as
   a negative rate. ``--base-gib 0``: whole-process figures only.
4. Where a task's time goes, without Spark, in this process pinned to one CPU:
   the decode the tasks run (``decode_item`` at level ``all`` into the row
   buffers, rows discarded) and the whole task (``sink.write_items``: decode,
   Arrow and Parquet files), over input partitions of the large dir's plan.
5. The machine's own ceiling for local[2] / local[1], also without Spark: the
   whole task over the same partitions in one process on one CPU, then in
   two processes on two CPUs at once, each doing that same work
   (``task_scaling``). Two vCPUs of a virtual machine may share a physical
   core or be slowed by neighbours; this ratio says how much two cores give
   this code here.

MB = 10^6 bytes of ``.log`` files. Targets (issue 5), judged on the marginal
figures: local[2] >= 1.8 x local[1]; per-core throughput (local[1], and
local[2] / 2) >= half of single-process ``lethe verify``. The same targets on
the whole-process figures are kept as rows marked "for reference" (with
``--base-gib 0`` they are the verdict). Results: ``<out>/audit.json`` and
``<out>/audit.md``.
"""

from __future__ import annotations

import argparse
import multiprocessing
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
from audit_report import markdown, run_notes, write_results
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
#: issue 5's targets, on the whole processes' figures
WHOLE_TARGETS = [
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
#: the same targets on the marginal figures (the verdict when there are two sizes)
TARGETS = [
    Target(
        f"{t.figure}_marginal",
        f"{t.label}, marginal",
        relative_to=f"{t.relative_to}_marginal",
        factor=t.factor,
    )
    for t in WHOLE_TARGETS
]
REFERENCE = " (whole process, for reference)"


def _lethe() -> list[str]:
    found = shutil.which("lethe")
    return [found] if found else [sys.executable, "-m", "lethe_tools.cli"]


def _warm(root: Path) -> None:
    """Read every file of ``root`` so the timed command finds it in the page cache.

    Called before every timed run, not once: this machine's kernel reclaims
    idle page-cache pages proactively (DAMON), and a run that reads part of
    its log dir from disk measured the disk (a cold first read cost ~1.5 s
    per GiB more here)."""
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
    seconds = []
    for _ in range(max(1, repeat)):
        _warm(root)
        seconds.append(_timed(command)[0])
    return seconds


def run_audit(root: Path, master: str, work: Path, records: int) -> dict[str, Any]:
    out = work / ("out-" + re.sub(r"\W", "", master))
    command = [*_lethe(), "audit", str(root), "--master", master, "--out", str(out)]
    _warm(root)
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


def task_profile(root: Path, cpu: int | None, budget: int = PROFILE_BYTES) -> dict[str, float]:
    """One core, no Spark: MB/s of the tasks' decode alone and of the whole task.

    Over whole input partitions spread evenly over the job's own plan, about
    ``budget`` bytes of segments (:func:`_profile_parts`: a sample with the
    dir's mix of topics and codecs), so the profile takes seconds, not
    minutes, on ``cpu``. The whole task is ``sink.write_items``: decode, Arrow
    batches and Parquet files (to a temp dir).
    """
    _warm(root)
    parts, covered = _profile_parts(root, budget)
    with pinned(cpu):
        # one whole partition first, untimed: a process's first decode pays one-time
        # set-up (lazy imports, dtypes, codecs) that a small first item does not reach
        _decode_discarding(parts[:1])
        start = time.perf_counter()
        _decode_discarding(parts)
        decode = time.perf_counter() - start
    whole, files = _write_timed(parts, cpu)
    return {
        "bytes": covered,
        "decode_s": round(decode, 2),
        "task_s": round(whole, 2),
        "decode_mb_s": round(covered / MB / decode, 1),
        "task_mb_s": round(covered / MB / whole, 1),
        "parquet_files": files,
    }


def task_scaling(
    root: Path, budget: int = 4 * PROFILE_BYTES, repeat: int = 3
) -> dict[str, float] | None:
    """No Spark: the whole task's MB/s on one CPU and on two CPUs at once.

    The ceiling this machine puts on local[2] / local[1]: the task code
    (``sink.write_items``) over some input partitions, first in one process
    pinned to one CPU, then in two forked processes pinned to one CPU each,
    started together, each over the same partitions (identical work, so
    neither waits for the other's larger share); two-CPU MB/s is twice the
    bytes over the slower process's time. Best of ``repeat`` for each, as two
    vCPUs' speed varies from second to second. None with fewer than two CPUs.
    """
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        return None
    parts, covered = _profile_parts(root, budget)
    _warm(root)
    one = both = float("inf")
    for _ in range(repeat):
        one = min(one, _write_timed(parts, cpus[-1])[0])
        with multiprocessing.get_context("fork").Pool(2) as pool:
            pair = pool.starmap(_write_timed, [(parts, cpus[0]), (parts, cpus[-1])])
        both = min(both, max(seconds for seconds, _ in pair))
    return {
        "bytes": covered,
        "one_cpu_s": round(one, 4),
        "two_cpus_s": round(both, 4),
        "one_cpu_mb_s": round(covered / MB / one, 1),
        "two_cpus_mb_s": round(2 * covered / MB / both, 1),
        "ratio": round(2 * one / both, 2),
    }


def _profile_parts(root: Path, budget: int) -> tuple[list[Any], int]:
    """Whole input partitions of the job's plan, evenly spaced, about ``budget`` bytes of segments.

    Spaced over the whole plan, not its first ones: the plan places the largest
    files first, and its first partitions can hold no segment of the lz4 topic
    at all, which made an earlier profile twice too fast."""
    from lethe_tools.audit.datasource import KafkaLogReader, absolute

    reader = KafkaLogReader({"level": "write", "out": "-", "paths": absolute([str(root)])})
    every = reader.partitions()

    def size(part: Any) -> int:
        return sum(i.size for i in part.items if i.kind == "log")

    average = max(1, sum(size(part) for part in every) // max(1, len(every)))
    wanted = max(1, -(-budget // average))  # partitions of average size to cover the budget
    parts = every[:: max(1, len(every) // wanted)]
    return parts, sum(size(part) for part in parts)


def _write_timed(parts: list[Any], cpu: int | None) -> tuple[float, int]:
    """(seconds, Parquet files) of ``write_items`` over ``parts`` on ``cpu``, to a temp dir.

    One partition is written first, untimed, so the timed pass starts warm."""
    from lethe_tools.audit.sink import write_items

    target = Path(tempfile.mkdtemp(prefix="audit-task-"))
    try:
        with pinned(cpu):
            write_items(parts[0].items, str(target), len(parts))
            start = time.perf_counter()
            files = sum(
                len(write_items(part.items, str(target), number))
                for number, part in enumerate(parts)
            )
            return time.perf_counter() - start, files
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _decode_discarding(parts: list[Any]) -> None:
    """Decode ``parts`` as a task of level "write" does, dropping the rows at each flush."""
    from lethe_tools.audit.decode import decode_item
    from lethe_tools.audit.rows import Tables

    for part in parts:
        out = Tables()
        for item in part.items:
            for _ in decode_item(item, "all", out):
                if out.count >= 65536:
                    for columns in out.all():
                        columns.discard()


def _figure(name: str, label: str, runs: list[float], size: int, note: str = "") -> Figure:
    best = min(runs)
    return Figure(name, label, size / MB / best, "MB/s", best, runs, note)


def marginal_rate(
    small_bytes: int, small_s: float, large_bytes: int, large_s: float
) -> float | None:
    """MB/s of what the larger dir added: extra bytes / extra seconds; None unless both grew.

    A difference of zero or less is noise larger than the work the extra
    data cost, not a rate, so it is reported as n/a.
    """
    grown, took = large_bytes - small_bytes, large_s - small_s
    if grown <= 0 or took <= 0:
        return None
    return grown / MB / took


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return min(runs, key=lambda run: float(run["seconds"]))


def _name(command: str) -> str:
    return command if command.startswith("verify") else "audit_" + re.sub(r"\W", "", command)


def _label(command: str) -> str:
    if command.startswith("verify"):
        return "lethe verify" + (" --deep" if command == "verify_deep" else "")
    return f"lethe audit --master {command}"


def marginal_figures(
    small: dict[str, list[dict[str, Any]]],
    large: dict[str, list[dict[str, Any]]],
    sizes: tuple[int, int],
    span: str,
) -> tuple[dict[str, Figure], dict[str, dict[str, Any]]]:
    """Marginal figures of every command timed at both sizes, and one row per figure.

    ``small``/``large``: command -> runs (``seconds``, audit runs also
    ``phases``) on the dirs of ``sizes`` = (small, large) bytes of segments.
    The rows keep the n/a ones (``value`` None), which get no Figure, so a
    target on them is n/a too. Audit rows note the seconds each phase grew by.
    """
    figures: dict[str, Figure] = {}
    rows: dict[str, dict[str, Any]] = {}
    for command, runs in large.items():
        one, two = _best(small[command]), _best(runs)
        rate = marginal_rate(sizes[0], one["seconds"], sizes[1], two["seconds"])
        grew = {
            k: round(v - one["phases"].get(k, 0.0), 2) for k, v in two.get("phases", {}).items()
        }
        note = f"{two['seconds']:.2f} s - {one['seconds']:.2f} s"
        if grew:
            note += "; per phase: " + ", ".join(f"{k} {v:+.1f} s" for k, v in grew.items())
        name = _name(command) + "_marginal"
        rows[name] = {
            "label": f"{_label(command)}, marginal ({span})",
            "value": rate,
            "bytes": sizes[1] - sizes[0],
            "seconds": round(two["seconds"] - one["seconds"], 3),
            "phases": grew,
            "note": note,
        }
    if "audit_local2_marginal" in rows:
        two_row = rows["audit_local2_marginal"]
        rows["audit_local2_per_core_marginal"] = {
            **two_row,
            "label": f"lethe audit local[2], per core, marginal ({span})",
            "value": None if two_row["value"] is None else two_row["value"] / 2,
            "note": "local[2] marginal / 2",
        }
    for name, row in rows.items():
        if row["value"] is not None:
            figures[name] = Figure(
                name, row["label"], row["value"], "MB/s", row["seconds"], [], row["note"]
            )
    return figures, rows


def time_command(data: LogDir, repeat: int, work: Path, command: str) -> list[dict[str, Any]]:
    """``command`` ``repeat`` times on ``data``: runs with ``seconds`` (audit: phases too)."""
    root, times = Path(data.path), max(1, repeat)
    if command.startswith("verify"):
        return [{"seconds": s} for s in run_verify(root, times, command == "verify_deep")]
    return [run_audit(root, command, work, data.records) for _ in range(times)]


def whole_figures(runs: dict[str, list[dict[str, Any]]], size: int) -> dict[str, Figure]:
    """Whole-process figures (start to exit) of every command on a dir of ``size`` bytes."""
    figures: dict[str, Figure] = {}
    for command, done in runs.items():
        phases_note = ", ".join(f"{k} {v} s" for k, v in _best(done).get("phases", {}).items())
        name = _name(command)
        figures[name] = _figure(
            name,
            f"{_label(command)}, whole process",
            [run["seconds"] for run in done],
            size,
            note=phases_note,
        )
    if "audit_local2" in figures:
        two = figures["audit_local2"]
        figures["audit_local2_per_core"] = Figure(
            "audit_local2_per_core",
            "lethe audit local[2], per core",
            two.value / 2,
            "MB/s",
            two.seconds,
        )
    return figures


def measure(
    data: LogDir,
    repeat: int,
    work: Path,
    masters: tuple[str, ...] = MASTERS,
    *,
    base: LogDir | None = None,
    span: str = "",
) -> tuple[dict[str, Figure], dict[str, Any]]:
    """Whole-process figures on ``data``; with ``base``, marginal ones from both dirs.

    Each command's runs alternate between the base dir and the large one
    (base, large, base, large, ...) before the next command starts, so a
    change in the machine's load falls on both sizes alike: a slow spell
    during the base runs alone would inflate a marginal rate.
    """
    commands = ["verify", "verify_deep", *masters]
    small: dict[str, list[dict[str, Any]]] = {}
    large: dict[str, list[dict[str, Any]]] = {}
    for command in commands:
        for _ in range(max(1, repeat)):
            if base is not None:
                small.setdefault(command, []).extend(time_command(base, 1, work, command))
            large.setdefault(command, []).extend(time_command(data, 1, work, command))
    figures = whole_figures(large, data.log_bytes)
    detail: dict[str, Any] = {master: large[master] for master in masters}
    if base is not None:
        extra, rows = marginal_figures(small, large, (base.log_bytes, data.log_bytes), span)
        figures.update(extra)
        detail["marginal"] = rows
        detail["base_runs"] = small
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    detail["task_profile_one_core"] = task_profile(Path(data.path), cpus[-1])
    detail["task_scaling"] = task_scaling(Path(data.path))
    return figures, detail


def targets(figures: dict[str, Figure], marginal: bool) -> list[dict[str, Any]]:
    """Target rows: judged on the marginal figures, whole-process rows kept for reference.

    Without marginal figures (``--base-gib 0``) the whole-process rows are the verdict.
    """
    if not marginal:
        return [{**row, "informational": False} for row in evaluate(WHOLE_TARGETS, figures)]
    judged = [{**row, "informational": False} for row in evaluate(TARGETS, figures)]
    reference = [
        {**row, "target": row["target"] + REFERENCE, "informational": True}
        for row in evaluate(WHOLE_TARGETS, figures)
    ]
    return judged + reference


def _sizes(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.size_gib <= 0 or args.base_gib < 0:
        parser.error("--size-gib must be > 0 and --base-gib >= 0")
    if args.base_gib and args.base_gib >= args.size_gib:
        parser.error("--base-gib must be smaller than --size-gib (or 0: no marginal figures)")


def _logdir(data_dir: Path, gib: float) -> LogDir:
    """Each size in a dir of its own (``<data-dir>/<N>gib``), read once into the page cache."""
    data = ensure_logdir(data_dir / f"{gib:g}gib", int(gib * GIB))
    _warm(Path(data.path))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gib", type=float, default=6.0, help="the large dir")
    parser.add_argument(
        "--base-gib", type=float, default=2.0, help="the base dir (0: no marginal figures)"
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--note", action="append", default=[])
    parser.add_argument(
        "--masters", default=",".join(MASTERS), help="comma-separated Spark masters to time"
    )
    args = parser.parse_args(argv)
    _sizes(parser, args)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    base = _logdir(args.data_dir, args.base_gib) if args.base_gib else None
    data = _logdir(args.data_dir, args.size_gib)
    span = f"{args.size_gib:g} GiB - {args.base_gib:g} GiB"
    load_before = os.getloadavg()
    other = OtherWork()
    work = Path(tempfile.mkdtemp(prefix="audit-bench-", dir=args.work_dir))
    try:
        masters = tuple(args.masters.split(","))
        figures, detail = measure(data, args.repeat, work, masters, base=base, span=span)
    except BenchError as error:
        print(f"audit_bench: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    spent = other.stop()
    marginal: dict[str, dict[str, Any]] = detail.pop("marginal", {})
    result = {
        "started": started,
        "command": " ".join(["python", "benchmarks/audit_bench.py", *(argv or sys.argv[1:])]),
        "repeat": args.repeat,
        "data": asdict(data),
        "base_data": None if base is None else asdict(base),
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            **spent,
        },
        "figures": {name: asdict(fig) for name, fig in figures.items()},
        "marginal": marginal,
        "targets": targets(figures, base is not None),
        "detail": detail,
        "notes": [*run_notes(detail, marginal, spent), *args.note],
    }
    write_results(args.out, result)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
