"""The audit benchmark's results files: Markdown tables, notes and the method paragraph.

Theory of operation
-------------------
``audit_bench.py`` measures and evaluates; this module only presents a
finished result dict (figures, marginal rows, target rows, run details) as
``audit.json`` and ``audit.md``. The notes derive shares and speed-ups from
the phase timings already in the result, so no figure is computed twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MB = 1_000_000


def _fmt(value: float | None) -> str:
    return "-" if value is None else (f"{value:,.1f}" if value >= 10 else f"{value:.3g}")


def _data_line(data: dict[str, Any]) -> str:
    return (
        f"{data['log_bytes']:,} bytes of segments in {data['segments']} segments, "
        f"{data['records']:,} records, {data['batches']:,} batches (`{data['path']}`)"
    )


def _method(result: dict[str, Any]) -> list[str]:
    """The paragraph under the tables: how the marginal figures are made and why they judge."""
    if not result.get("marginal"):
        return [
            "Whole-process figures only (`--base-gib 0`): every time includes the fixed start-up "
            "costs (interpreter, JVM, Spark session, planning), and the targets are judged on "
            "these times.",
        ]
    return [
        "Every command ran on two generated log dirs, the base dir and the large one. A "
        "marginal figure is the difference in bytes of segments between the two dirs divided "
        "by the difference between the best times on them. Work that does not depend on the "
        "amount of data (starting the interpreter and the JVM, the Spark session, planning the "
        "query) is in both times and drops out; everything that grows with the data stays in. "
        "The targets concern throughput on large log dirs, and a fixed cost in every run holds "
        "the whole-process local[2]/local[1] ratio well under 1.8 on a few GiB whatever the "
        "per-byte speed-up, so they are judged on the marginal figures. The whole-process "
        "figures (large dir, start to exit) and their verdicts are shown too, marked for "
        "reference. A marginal figure is n/a when the large dir did not take longer than the "
        "base dir (noise larger than the difference).",
    ]


def markdown(result: dict[str, Any]) -> str:
    data, machine = result["data"], result["machine"]
    marginal: dict[str, dict[str, Any]] = result.get("marginal") or {}
    lines = [
        "# Audit speed benchmark",
        "",
        f"Run {result['started']} with `{result['command']}`; best of {result['repeat']}.",
        f"Machine: {machine['cpu_count']} CPUs, Python {machine['python']}; load average "
        f"{machine['loadavg_before']} before, {machine['loadavg_after']} after; other processes' "
        f"CPU time during the {machine['wall_seconds']} s run: "
        f"{_fmt(machine['other_cpu_seconds'])} s.",
        f"Data: {_data_line(data)}.",
    ]
    if result.get("base_data"):
        lines.append(f"Base dir for the marginal figures: {_data_line(result['base_data'])}.")
    lines += [
        "",
        "| figure | MB/s | best s | runs s | phases (best run) |",
        "|---|---:|---:|---|---|",
    ]
    for name, fig in result["figures"].items():
        if name in marginal:
            continue
        runs = ", ".join(f"{s:.1f}" for s in fig["runs"]) or "-"
        lines.append(
            f"| {fig['label']} | {_fmt(fig['value'])} | {fig['seconds']:.1f} | {runs} | "
            f"{fig['note']} |"
        )
    if marginal:
        lines += [
            "",
            "| marginal figure | MB/s | extra MB | extra s | large - base (best runs) |",
            "|---|---:|---:|---:|---|",
        ]
        for row in marginal.values():
            value = "n/a" if row["value"] is None else _fmt(row["value"])
            lines.append(
                f"| {row['label']} | {value} | {row['bytes'] / MB:,.0f} | "
                f"{row['seconds']:.2f} | {row['note']} |"
            )
    lines += ["", "| target | required | measured | result |", "|---|---:|---:|---|"]
    for row in result["targets"]:
        lines.append(
            f"| {row['target']} | {_fmt(row['required'])} | {_fmt(row['measured'])} | "
            f"**{row['status']}** |"
        )
    lines += ["", *_method(result), "", *[f"- {note}" for note in result["notes"]], ""]
    return "\n".join(lines)


def write_results(out: Path, result: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "audit.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "audit.md").write_text(markdown(result))


def run_notes(
    detail: dict[str, Any], marginal: dict[str, dict[str, Any]], other: dict[str, Any]
) -> list[str]:
    notes = []
    profile = detail["task_profile_one_core"]
    notes.append(
        f"one core, no Spark, {profile['bytes']:,} bytes of the job's input partitions: the "
        f"tasks' decode runs at {profile['decode_mb_s']} MB/s, the whole task (decode, Arrow, "
        f"Parquet files) at {profile['task_mb_s']} MB/s"
    )
    scaling = detail.get("task_scaling")
    if scaling:
        notes.append(
            f"no Spark, the whole task over {scaling['bytes']:,} bytes of input partitions: "
            f"{scaling['one_cpu_mb_s']} MB/s in one process on one CPU, {scaling['two_cpus_mb_s']}"
            f" MB/s in two processes on two CPUs at once, {scaling['ratio']}x: what this "
            "machine's two CPUs give this code, the ceiling of local[2] / local[1]"
        )
    notes += _phase_notes(detail)
    notes += _growth_notes(marginal)
    wall = other.get("wall_seconds") or 0
    if other.get("other_cpu_seconds") and wall and other["other_cpu_seconds"] > 0.05 * wall:
        notes.append(
            f"CPU time not accounted to this process and its reaped children: "
            f"{other['other_cpu_seconds']:.0f} s during the {wall} s run; it includes the "
            "audit's own Spark JVMs (grandchildren, never reaped by this process), so it "
            "overstates other work"
        )
    return notes


def _growth_notes(rows: dict[str, dict[str, Any]]) -> list[str]:
    """Where the seconds the larger dir added went, per audit master: which phase grows."""
    notes = []
    for name, row in rows.items():
        if not row["phases"] or name.endswith("per_core_marginal") or row["seconds"] <= 0:
            continue
        shares = ", ".join(
            f"{phase} {100 * seconds / row['seconds']:.0f} %"
            for phase, seconds in row["phases"].items()
        )
        notes.append(
            f"{row['label']}: of the {row['seconds']:.1f} s the larger dir added, {shares}"
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
