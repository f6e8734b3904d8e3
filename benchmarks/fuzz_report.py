"""The fuzzer's targets and result files (``fuzz.json``, ``fuzz.md``).

Theory of operation
-------------------
The issue's targets are counts that must be zero (crashes, hangs,
tracebacks), a count that must be reached (fuzzed frames) and a memory
figure: RSS growth between the second quarter of the samples (after warm-up)
and the last quarter, medians of each so that one sample taken in the middle
of a burst does not decide. Each target ends PASS or MISS.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from bench_results import write_result_files

__all__ = ["evaluate", "rss_growth_mib", "write_results"]


def rss_growth_mib(samples: list[dict[str, float]]) -> float | None:
    """Median RSS of the last quarter minus that of the second quarter, MiB."""
    if len(samples) < 8:
        return None
    quarter = len(samples) // 4
    second = [s["rss_kib"] for s in samples[quarter : 2 * quarter]]
    last = [s["rss_kib"] for s in samples[-quarter:]]
    return (statistics.median(last) - statistics.median(second)) / 1024


def _row(target: str, required: str, measured: Any, ok: bool) -> dict[str, Any]:
    return {
        "target": target,
        "required": required,
        "measured": measured,
        "status": "PASS" if ok else "MISS",
    }


def evaluate(result: dict[str, Any], target_frames: int, growth_mib: float) -> list[dict[str, Any]]:
    """One row per target of issue 12 item 6."""
    failure = result["failure"] or ""
    hangs = int(failure.startswith("hang")) + int("did not stop" in result["stop_error"])
    growth = rss_growth_mib(result["rss_samples"])
    return [
        _row(
            "fuzzed frames",
            f">= {target_frames:,}",
            result["frames"],
            result["frames"] >= target_frames,
        ),
        _row("crashes (broker exited)", "0", int(result["crashed"]), not result["crashed"]),
        _row("hangs (probe unanswered, SIGTERM ignored)", "0", hangs, hangs == 0),
        _row(
            "tracebacks in the broker's stderr",
            "0",
            result["stderr"]["tracebacks"],
            result["stderr"]["tracebacks"] == 0,
        ),
        _row(
            "clean SIGTERM stop (exit 0)",
            "yes",
            not result["stop_error"],
            not result["stop_error"] and not result["crashed"],
        ),
        _row(
            "RSS growth, last vs second quarter (MiB)",
            f"<= {growth_mib}",
            None if growth is None else round(growth, 2),
            growth is not None and growth <= growth_mib,
        ),
    ]


def _rss_table(samples: list[dict[str, float]], rows: int = 12) -> list[str]:
    step = max(1, len(samples) // rows)
    picked = samples[::step]
    if samples and picked[-1] is not samples[-1]:
        picked.append(samples[-1])
    lines = ["| seconds | frames | RSS MiB |", "|---:|---:|---:|"]
    lines += [
        f"| {s['seconds']:.0f} | {s['frames']:,} | {s['rss_kib'] / 1024:.1f} |" for s in picked
    ]
    return lines


def render(result: dict[str, Any]) -> str:
    outcomes = ", ".join(f"{k} {v:,}" for k, v in sorted(result["outcomes"].items()))
    strategies = ", ".join(f"{k} {v:,}" for k, v in sorted(result["strategies"].items()))
    rate = result["frames"] / result["wall_seconds"] if result["wall_seconds"] else 0.0
    lines = [
        "# Protocol fuzzer",
        "",
        f"Run {result['started']} with `{result['command']}`: "
        f"{result['frames']:,} fuzzed frames in "
        f"{result['wall_seconds']:,.0f} s ({rate:,.0f} frames/s) over {result['connections']:,} "
        f"connections, {result['parameters']['workers']} at once in each of "
        f"{result['parameters']['processes']} client processes; corpus {result['corpus_frames']} "
        f"real frames. Machine: {result['machine']['cpu_count']} CPUs (shared), Python "
        f"{result['machine']['python']}.",
        "",
        f"- outcomes: {outcomes}",
        f"- strategies: {strategies}",
        f"- slowest liveness probe: {result['probe_max_seconds']} s; SIGTERM stop took "
        f"{result['stop_seconds']} s",
        f"- stopped early: {result['failure'] or 'no'}",
        _left_out(result),
        f"- broker stderr: {result['stderr']['tracebacks']} tracebacks, "
        f"{result['stderr']['error_lines']} ERROR lines",
        f"- topics the fuzzed frames created, deleted after each batch: "
        f"{result['topics_deleted']:,}; directories left: {result['topics_left']}; "
        f"`lethe verify` of the log dir: exit {result['verify']['exit_status']} "
        f"({result['verify']['summary']})",
        "",
        "| target | required | measured | result |",
        "|---|---|---:|---|",
    ]
    for row in result["targets"]:
        lines.append(
            f"| {row['target']} | {row['required']} | {row['measured']} | **{row['status']}** |"
        )
    lines += ["", "RSS of the broker over the run:", "", *_rss_table(result["rss_samples"])]
    if result["stalls_first"]:
        lines += ["", "First stalled exchanges (no answer within the stall bound; not hangs):", ""]
        lines += [f"- {stall}" for stall in result["stalls_first"]]
    lines += ["", *[f"- {note}" for note in result["notes"]], ""]
    return "\n".join(lines)


def write_results(out_dir: Path, result: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``fuzz.json`` and ``fuzz.md`` into ``out_dir``."""
    return write_result_files(out_dir, "fuzz", result, render)


def _left_out(result: dict[str, Any]) -> str:
    """The line on partition-heavy frames: all kept, or how many ``--max-partitions`` left out."""
    limit = result["parameters"]["max_partitions"]
    if not limit:
        return "- CreateTopics/CreatePartitions frames: all kept (`--max-partitions 0`)"
    return (
        f"- left out with `--max-partitions {limit}`: {result['excluded_partition_frames']:,} "
        f"CreateTopics/CreatePartitions frames asking for more than {limit} partitions"
    )
