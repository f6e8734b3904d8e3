"""Figures, targets and the two result files (``formats.json``, ``formats.md``).

Theory of operation
-------------------
A :class:`Figure` is one measured rate (best of N runs) with the seconds and
the amount of work behind it. A :class:`Target` compares one figure with a
threshold that is either fixed (Kafka's own tools measured on this kind of
machine) or derived from another figure of the same run (``5 x kafka-python``):
comparing readers measured in the same run on the same bytes cancels most of
the machine's load, which a fixed reference figure cannot. Every target ends
as PASS or MISS; nothing is rounded before the comparison.

Units: MB = 10^6 bytes, M records = 10^6 records, seconds of wall time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Figure", "Target", "evaluate", "write_results"]


@dataclass(frozen=True, slots=True)
class Figure:
    """A measured rate: ``value`` in ``unit`` from ``amount`` units of work in ``seconds``."""

    name: str
    label: str
    value: float
    unit: str
    seconds: float
    runs: list[float] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    """``figure`` must reach ``threshold`` (or ``factor`` x the figure ``relative_to``)."""

    figure: str
    label: str
    threshold: float | None = None
    relative_to: str | None = None
    factor: float = 1.0
    source: str = ""


def _required(target: Target, figures: dict[str, Figure]) -> float | None:
    if target.relative_to is None:
        return target.threshold
    base = figures.get(target.relative_to)
    return None if base is None else base.value * target.factor


def evaluate(targets: list[Target], figures: dict[str, Figure]) -> list[dict[str, Any]]:
    """One row per target: required value, measured value, PASS / MISS / n/a."""
    rows = []
    for target in targets:
        figure = figures.get(target.figure)
        required = _required(target, figures)
        if figure is None or required is None:
            status = "n/a"
        else:
            status = "PASS" if figure.value >= required else "MISS"
        rows.append(
            {
                "target": target.label,
                "figure": target.figure,
                "required": required,
                "measured": None if figure is None else figure.value,
                "unit": None if figure is None else figure.unit,
                "status": status,
                "source": target.source,
            }
        )
    return rows


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def _markdown(result: dict[str, Any]) -> str:
    machine = result["machine"]
    segment = result["segment"]
    lines = [
        "# Formats speed benchmark",
        "",
        f"Run {result['started']} with `{result['command']}`; best of {result['repeat']} runs.",
        f"Machine: {machine['cpu_model']}, {machine['cpu_count']} CPUs, "
        f"Python {machine['python']} ({machine['python_implementation']}), "
        f"lethe decoder `{machine['lethe_implementation']}`, "
        f"aiokafka C reader: {machine['aiokafka_c']}. "
        f"Load average {machine['loadavg_before']} before, {machine['loadavg_after']} after; "
        f"other processes' CPU time during the {machine['wall_seconds']} s run: "
        f"{_fmt(machine['other_cpu_seconds'])} s.",
        f"Segment: {segment['size']:,} bytes, {segment['records']:,} records in "
        f"{segment['batches']:,} uncompressed batches (sha256 `{segment['sha256'][:16]}...`).",
        "",
        "| figure | measured | unit | best s | note |",
        "|---|---:|---|---:|---|",
    ]
    for figure in result["figures"].values():
        lines.append(
            f"| {figure['label']} | {_fmt(figure['value'])} | {figure['unit']} | "
            f"{figure['seconds']:.3f} | {figure['note']} |"
        )
    lines += ["", "| target | required | measured | unit | result |", "|---|---:|---:|---|---|"]
    for row in result["targets"]:
        lines.append(
            f"| {row['target']} | {_fmt(row['required'])} | {_fmt(row['measured'])} | "
            f"{row['unit'] or '-'} | **{row['status']}** |"
        )
    lines += ["", *[f"- {note}" for note in result["notes"]], ""]
    return "\n".join(lines)


def write_results(out_dir: Path, result: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``formats.json`` and ``formats.md`` into ``out_dir``; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    as_json = dict(result)
    as_json["figures"] = {name: asdict(fig) for name, fig in result["figures"].items()}
    json_path = out_dir / "formats.json"
    md_path = out_dir / "formats.md"
    json_path.write_text(json.dumps(as_json, indent=2) + "\n")
    md_path.write_text(_markdown(as_json))
    return json_path, md_path
