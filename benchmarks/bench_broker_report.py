"""The broker benchmark's result files, ``broker.json`` and ``broker.md``.

Theory of operation
-------------------
Figures and targets are the formats benchmark's (:mod:`bench_report`:
:class:`Figure`, :class:`Target`, :func:`evaluate`, the same number format and
PASS/MISS rule), so both result tables read alike. On top of them the broker
report has a table per phase (records, bytes, seconds, how busy the broker
process was, latency percentiles), the distance to each target (measured as a
percentage of required), and the profile of the broker (:mod:`bench_broker_profile`)
as three short tables per profiled phase.

``broker.json`` holds everything; ``broker.md`` is rendered from that JSON
alone (:func:`render`), so notes added after a run (``--render``) re-render the
same figures without measuring again.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench_report import Figure
from bench_report import _fmt as fmt

__all__ = ["render", "write_results"]


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _header(result: dict[str, Any]) -> list[str]:
    machine, setup = result["machine"], result["setup"]
    other = machine.get("other_cpu_seconds")
    return [
        "# Broker speed benchmark",
        "",
        f"Run {result['started']} with `{result['command']}`.",
        f"Machine: {machine['cpu_model']}, {machine['cpu_count']} CPUs, "
        f"Python {machine['python']}; confluent-kafka {machine['confluent_kafka']} "
        f"(librdkafka {machine['librdkafka']}). Load average {machine['loadavg_before']} "
        f"before, {machine.get('loadavg_after')} after; other processes' CPU time during the "
        f"{machine.get('wall_seconds')} s run: {fmt(other)} s.",
        f"Broker: `{setup['broker_command']}`, one process, one event loop, CPU affinity "
        f"{setup['broker_affinity']}; client (this process, librdkafka threads included) "
        f"affinity {setup['client_affinity']}.",
        f"Records: {setup['value_size']}-byte values, {setup['key_size']}-byte keys, one "
        f"partition per topic, {setup['records']:,} records per throughput phase, "
        f"{setup.get('repeat', 1)} run(s) of each. Producer: "
        f"{setup['producer']}. Consumer: {setup['consumer']}.",
        "",
    ]


def _figures(result: dict[str, Any]) -> list[str]:
    lines = ["| figure | measured | unit | seconds | note |", "|---|---:|---|---:|---|"]
    for figure in result["figures"].values():
        lines.append(
            f"| {figure['label']} | {fmt(figure['value'])} | {figure['unit']} | "
            f"{figure['seconds']:.3f} | {figure['note']} |"
        )
    return [*lines, ""]


def _phases(result: dict[str, Any]) -> list[str]:
    lines = [
        "| phase | records | MB | s | records/s | MB/s | broker CPU busy | broker waiting for CPU "
        "| client CPU s | client waiting s "
        "| p50 ms | p99 ms | p99.9 ms | max ms | librdkafka p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, phase in result["phases"].items():
        latency = phase.get("latency") or {}
        lines.append(
            f"| {name} | {phase['records']:,} | {phase['value_bytes'] / 1e6:.1f} | "
            f"{phase['seconds']:.2f} | {phase['records_per_s']:,.0f} | {phase['mb_per_s']:.1f} | "
            f"{phase['broker_busy']:.0%} | {_share(phase.get('broker_waiting'))} | "
            f"{phase['client_cpu_seconds']:.2f} | {fmt(phase.get('client_waiting_seconds'))} | "
            f"{_ms(latency.get('p50'))} | {_ms(latency.get('p99'))} | "
            f"{_ms(latency.get('p99.9'))} | {_ms(latency.get('max'))} | "
            f"{_ms(latency.get('rdkafka_p99'))} |"
        )
    return [*lines, ""]


def _targets(result: dict[str, Any]) -> list[str]:
    lines = [
        "| target | required | measured | unit | of target | result |",
        "|---|---:|---:|---|---:|---|",
    ]
    for row in result["targets"]:
        share = "-"
        if row["required"] and row["measured"] is not None:
            share = f"{row['measured'] / row['required']:.0%}"
        lines.append(
            f"| {row['target']} | {fmt(row['required'])} | {fmt(row['measured'])} | "
            f"{row['unit'] or '-'} | {share} | **{row['status']}** |"
        )
    return [*lines, ""]


def _share_table(title: str, rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"| {title} | share of busy samples |", "|---|---:|"]
    lines += [f"| `{row['name']}` | {row['share']:.1%} |" for row in rows]
    return [*lines, ""]


def _profiles(result: dict[str, Any]) -> list[str]:
    lines = ["## Where the time goes (broker process, py-spy)", ""]
    profiles = result.get("profiles") or {}
    if not profiles:
        return [*lines, "Not profiled in this run.", ""]
    for phase, profile in profiles.items():
        if not profile.get("samples"):
            lines += [f"### {phase}", "", "No samples.", ""]
            continue
        lines += [
            f"### {phase}: {profile['samples']:,} busy samples at {profile['rate']} Hz "
            f"({profile['busy_seconds']} s busy in {profile.get('wall_seconds', '?')} s)",
            "",
        ]
        if "broker_on_cpu_seconds" in profile:
            lines += [
                f"Broker on a CPU {profile['broker_on_cpu_seconds']} s, waiting for its CPU "
                f"{profile['broker_waiting_seconds']} s (schedstat) in this pass.",
                "",
            ]
        lines += _share_table("area (package of the running frame)", profile["areas"][:10])
        lines += _share_table("function, self time", profile["self"])
        lines += _share_table("lethe function, inclusive time", profile["inclusive"])
    return lines


def render(result: dict[str, Any]) -> str:
    """``broker.md`` from the JSON result (figures, phases, targets, profiles, notes)."""
    lines = _header(result)
    lines += _figures(result)
    lines += ["## Phases", "", *_phases(result)]
    lines += ["## Targets", "", *_targets(result)]
    lines += _profiles(result)
    lines += ["## Notes", "", *[f"- {note}" for note in result["notes"]], ""]
    return "\n".join(lines)


def write_results(out_dir: Path, result: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``broker.json`` and ``broker.md`` into ``out_dir``; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    as_json = dict(result)
    as_json["figures"] = {
        name: asdict(fig) if isinstance(fig, Figure) else fig
        for name, fig in result["figures"].items()
    }
    json_path, md_path = out_dir / "broker.json", out_dir / "broker.md"
    json_path.write_text(json.dumps(as_json, indent=2) + "\n")
    md_path.write_text(render(as_json))
    return json_path, md_path
