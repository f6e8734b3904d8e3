"""Wall time of the conformance suite against the embedded reference broker.

Usage::

    python benchmarks/conformance_bench.py [--repeat 3] [--workers 2] [--out benchmarks/results]
                                           [--profile P]... [--scenario ID]... [--note TEXT]...

Theory of operation
-------------------
The issue's speed target is about what a user runs, so both ways of running
the suite are timed as whole processes, each run a fresh process (interpreter
start, imports, broker start and every scenario included), ``--repeat`` times,
and the **median** is the figure (the spread is kept: every run's seconds are
in the JSON)::

    pytest_xdist   python -m pytest --pyargs lethe_conformance --lethe-embedded -n 2
                   (one reference broker per xdist worker)        target: < 60 s
    cli            lethe conformance run --report DIR  (one broker, scenarios in turn)

Both run from an empty temporary directory, so neither picks up the
repository's pytest configuration or conftest files, as in a user's CI job.
A run counts whatever the suite's verdict: pytest exit 1 (a scenario failed)
and ``lethe conformance run`` exit 1 (a required profile failed) are timed and
recorded with their outcome counts, and the notes say the suite was not green;
any other exit status (a crash, a usage error, an interrupted run) fails the
benchmark and nothing is written.

Where the time goes: the CLI's report gives every scenario's duration; the
slowest ones, and the share of the whole they take, are in the results. The
pytest figure over the CLI figure shows what two workers buy.

``--profile`` and ``--scenario`` narrow both commands (``--lethe-profile`` /
``--profile``; ``-k`` / a ``--scenarios`` folder holding copies of the named
files), for the harness test's tiny runs. Results: ``<out>/conformance.json``
and ``<out>/conformance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_results import write_result_files
from bench_timing import BenchError, OtherWork
from lethe_formats.fixtures import fixtures_root

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 60.0
#: Exit statuses that mean "the suite ran to the end" (0 green, 1 some failure).
_FINISHED = (0, 1)
_SLOWEST = 10


@dataclass(frozen=True, slots=True)
class Run:
    """One timed process: wall seconds, exit status, what it reported, its CPU seconds."""

    seconds: float
    exit_status: int
    outcomes: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Measured:
    """The runs of one command and their median."""

    name: str
    label: str
    command: str
    runs: list[Run]

    @property
    def median(self) -> float:
        return statistics.median(run.seconds for run in self.runs)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (median)")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (-n)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--profile", action="append", default=[], help="only this profile")
    parser.add_argument("--scenario", action="append", default=[], help="only this scenario id")
    parser.add_argument("--note", action="append", default=[], help="a note for the results")
    return parser.parse_args(argv)


def _scenario_files(ids: Sequence[str]) -> list[Path]:
    """The shipped scenario files with these ids (the folder the suite reads)."""
    found = {p.stem: p for p in (fixtures_root() / "scenarios").rglob("*.json")}
    missing = sorted(set(ids) - set(found))
    if missing:
        raise BenchError(f"no scenario file for {missing}")
    return [found[i] for i in ids]


def pytest_command(args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "pytest", "--pyargs", "lethe_conformance"]
    command += ["--lethe-embedded", "-n", str(args.workers), "-q", "-p", "no:cacheprovider"]
    for profile in args.profile:
        command += ["--lethe-profile", profile]
    if args.scenario:
        command += ["-k", " or ".join(args.scenario)]
    return command


def cli_command(args: argparse.Namespace, report: Path, scenarios: Path | None) -> list[str]:
    lethe = shutil.which("lethe") or "lethe"
    command = [lethe, "conformance", "run", "--report", str(report)]
    for profile in args.profile:
        command += ["--profile", profile]
    if scenarios is not None:
        command += ["--scenarios", str(scenarios)]
    return command


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(
    command: Sequence[str], cwd: Path
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds, CPU seconds (the process and its children: xdist workers, the broker
    threads) and the finished process; a run that did not finish is a BenchError."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, check=False, timeout=1800
    )
    seconds = time.perf_counter() - start
    if done.returncode not in _FINISHED:
        tail = (done.stderr or done.stdout)[-2000:]
        raise BenchError(f"{' '.join(command)} exited {done.returncode}: {tail}")
    return seconds, _children_cpu() - cpu, done


def pytest_outcomes(stdout: str) -> dict[str, int]:
    """Counts from pytest's last summary line (``3 passed, 2 skipped in 4.1s``)."""
    lines = [line for line in stdout.strip().splitlines() if " in " in line]
    counts: dict[str, int] = {}
    if not lines:
        return counts
    for part in lines[-1].strip("= ").split(" in ")[0].split(","):
        words = part.split()
        if len(words) == 2 and words[0].isdigit():
            counts[words[1]] = int(words[0])
    return counts


def measure_pytest(args: argparse.Namespace, cwd: Path) -> Measured:
    command = pytest_command(args)
    runs = []
    for index in range(max(1, args.repeat)):
        seconds, cpu, done = _timed(command, cwd)
        outcomes = pytest_outcomes(done.stdout)
        runs.append(Run(round(seconds, 3), done.returncode, outcomes, round(cpu, 2)))
        print(f"  pytest -n {args.workers} run {index + 1}: {seconds:.1f} s", flush=True)
    shown = " ".join(["python -m pytest", *command[3:]])
    return Measured("pytest_xdist", f"pytest --lethe-embedded -n {args.workers}", shown, runs)


def measure_cli(args: argparse.Namespace, cwd: Path) -> tuple[Measured, dict[str, Any]]:
    """The CLI runs, and the report of the last one (per-scenario durations)."""
    scenarios = None
    if args.scenario:
        scenarios = cwd / "scenarios"
        scenarios.mkdir(exist_ok=True)
        for path in _scenario_files(args.scenario):
            shutil.copy(path, scenarios / path.name)
    runs = []
    report: dict[str, Any] = {}
    for index in range(max(1, args.repeat)):
        folder = cwd / f"report-{index}"
        command = cli_command(args, folder, scenarios)
        seconds, cpu, done = _timed(command, cwd)
        report = json.loads((folder / "report.json").read_text())
        if not report.get("complete", False):
            raise BenchError(f"lethe conformance run left an incomplete report: {folder}")
        outcomes = _scenario_outcomes(report)
        runs.append(Run(round(seconds, 3), done.returncode, outcomes, round(cpu, 2)))
        print(f"  lethe conformance run {index + 1}: {seconds:.1f} s", flush=True)
    shown = " ".join(["lethe conformance run --report DIR", *command[5:]])
    if scenarios is not None:
        shown = shown.replace(str(scenarios), "DIR")
    return Measured("cli", "lethe conformance run", shown, runs), report


def _scenario_outcomes(report: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for scenario in report.get("scenarios", ()):
        counts[scenario["outcome"]] = counts.get(scenario["outcome"], 0) + 1
    return counts


def slowest(report: dict[str, Any], count: int = _SLOWEST) -> list[dict[str, Any]]:
    """The slowest scenarios of a CLI report, with their share of all scenario time."""
    scenarios = report.get("scenarios", [])
    total = sum(s["duration_s"] for s in scenarios) or 1.0
    ranked = sorted(scenarios, key=lambda s: s["duration_s"], reverse=True)[:count]
    return [
        {
            "scenario": s["id"],
            "seconds": round(s["duration_s"], 3),
            "share": round(s["duration_s"] / total, 3),
        }
        for s in ranked
    ]


def _machine() -> dict[str, Any]:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu_model": model,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
    }


def _targets(pytest_run: Measured) -> list[dict[str, Any]]:
    value = pytest_run.median
    return [
        {
            "target": f"full suite, embedded broker, pytest -n 2, under {TARGET_SECONDS:.0f} s",
            "figure": pytest_run.name,
            "required_max_seconds": TARGET_SECONDS,
            "measured_seconds": value,
            "status": "PASS" if value < TARGET_SECONDS else "MISS",
        }
    ]


def _notes(
    args: argparse.Namespace, machine: dict[str, Any], measured: list[Measured]
) -> list[str]:
    notes = [
        "Each run is a fresh process started from an empty temporary directory; the figure is "
        "the median of the runs' wall seconds (interpreter start, imports, broker start, every "
        "scenario and the report included). CPU s is the process's and its children's user + "
        "system time (xdist workers, the broker threads): far below the wall time, the run "
        "waited, for CPUs other processes held or in the scenarios' polls.",
    ]
    if args.profile or args.scenario:
        notes.append(
            f"Narrowed run (profiles {args.profile or 'all'}, scenarios {args.scenario or 'all'}): "
            "not the full suite."
        )
    for item in measured:
        red = [run.exit_status for run in item.runs if run.exit_status != 0]
        if red:
            notes.append(f"{item.label}: {len(red)} of {len(item.runs)} runs were not green.")
    other, wall = machine["other_cpu_seconds"], machine["wall_seconds"]
    if other is not None and other > 0.05 * wall:
        notes.append(
            f"Other work ran on this {machine['cpu_count']}-CPU machine during the run: other "
            f"processes used {other:.0f} CPU-seconds in {wall:.0f} s (on average "
            f"{other / wall:.2f} CPUs busy); the figures are upper bounds."
        )
    elif other is not None:
        notes.append(f"Other processes used {other:.1f} CPU-seconds during the {wall:.0f} s run.")
    return notes + list(args.note)


def _markdown(result: dict[str, Any]) -> str:
    machine = result["machine"]
    lines = [
        "# Conformance suite speed benchmark",
        "",
        f"Run {result['started']} with `{result['command']}`; median of "
        f"{result['repeat']} runs per command.",
        f"Machine: {machine['cpu_model']}, {machine['cpu_count']} CPUs, Python "
        f"{machine['python']}. Load average {machine['loadavg_before']} before, "
        f"{machine['loadavg_after']} after.",
        "",
        "| figure | command | median s | runs s | CPU s per run | outcomes (last run) |",
        "|---|---|---:|---|---|---|",
    ]
    for fig in result["figures"].values():
        runs = ", ".join(f"{r['seconds']:.1f}" for r in fig["runs"])
        cpu = ", ".join(f"{r['cpu_seconds']:.1f}" for r in fig["runs"])
        outcomes = ", ".join(f"{n} {k}" for k, n in sorted(fig["runs"][-1]["outcomes"].items()))
        lines.append(
            f"| {fig['label']} | `{fig['command']}` | {fig['median']:.1f} | {runs} | {cpu} | "
            f"{outcomes} |"
        )
    lines += ["", "| target | required | measured | result |", "|---|---:|---:|---|"]
    for row in result["targets"]:
        lines.append(
            f"| {row['target']} | < {row['required_max_seconds']:.0f} s | "
            f"{row['measured_seconds']:.1f} s | **{row['status']}** |"
        )
    lines += ["", "## Slowest scenarios (`lethe conformance run`, last run)", ""]
    lines += ["| scenario | s | share of scenario time |", "|---|---:|---:|"]
    for row in result["slowest"]:
        lines.append(f"| `{row['scenario']}` | {row['seconds']:.2f} | {row['share']:.0%} |")
    lines += ["", *[f"- {note}" for note in result["notes"]], ""]
    return "\n".join(lines)


def write_results(out_dir: Path, result: dict[str, Any]) -> tuple[Path, Path]:
    """``conformance.json`` and ``conformance.md`` in ``out_dir``."""
    return write_result_files(out_dir, "conformance", result, _markdown)


def _command_line(argv: Sequence[str]) -> str:
    """The command as run, without ``--out`` and ``--note`` (and their values)."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--out", "--note"):
            skip = True
            continue
        if not arg.startswith(("--out=", "--note=")):
            shown.append(arg)
    return " ".join(["python benchmarks/conformance_bench.py", *shown])


def _figure(item: Measured) -> dict[str, Any]:
    return {
        "label": item.label,
        "command": item.command,
        "median": round(item.median, 3),
        "unit": "s",
        "runs": [asdict(run) for run in item.runs],
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    machine = _machine()
    meter = OtherWork()
    work = Path(tempfile.mkdtemp(prefix="lethe-conformance-bench-"))
    try:
        print("pytest --pyargs lethe_conformance --lethe-embedded ...", flush=True)
        pytest_run = measure_pytest(args, work)
        print("lethe conformance run ...", flush=True)
        cli_run, report = measure_cli(args, work)
    except (BenchError, subprocess.TimeoutExpired, OSError, ValueError) as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    machine |= meter.stop()
    measured = [pytest_run, cli_run]
    result = {
        "started": started,
        "command": _command_line(sys.argv[1:] if argv is None else argv),
        "repeat": args.repeat,
        "machine": machine,
        "figures": {item.name: _figure(item) for item in measured},
        "targets": _targets(pytest_run),
        "slowest": slowest(report),
        "notes": _notes(args, machine, measured),
    }
    for path in write_results(args.out, result):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
