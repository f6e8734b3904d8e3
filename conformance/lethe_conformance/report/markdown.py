"""The Markdown report: summary, the matrix per profile, then every non-passing scenario.

Theory of operation
-------------------
Meant for CI job summaries and pull requests: tables GitHub renders, the
statement beside each ID, and for each failing scenario its mismatches as
expected-versus-actual rows. Reads only the :func:`report_data` document;
``|`` and newlines in free text are escaped so a table never breaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lethe_conformance.report.text import (
    api_ranges,
    by_profile,
    outcome_label,
    statement_text,
    suite_text,
    summary_line,
)

__all__ = ["render_markdown"]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(data: Mapping[str, Any]) -> str:
    target = data["target"]
    lines = [
        "# lethe conformance report",
        "",
        f"- target: `{target['name']}` (clock {target['clock']}, capabilities: "
        f"{', '.join(target['capabilities']) or 'none'})",
        f"- profiles offered: {', '.join(target['profiles_offered']) or 'none'}",
        f"- run: {data['started']} to {data['finished']}, lethe {data['lethe_version']}",
        f"- suite: {suite_text(data['suite']) if data.get('suite') else 'unknown'}",
        f"- advertised API versions: {api_ranges(target) or 'none'}",
        f"- {summary_line(data)}",
        "",
    ]
    for profile, group in by_profile(data["requirements"]):
        lines += [f"## {profile}", "", "| ID | outcome | statement |", "|---|---|---|"]
        lines += [
            f"| {row['id']} | {_cell(outcome_label(row))} | {_cell(statement_text(row))} |"
            for row in group
        ]
        lines.append("")
    failing = [s for s in data["scenarios"] if s["outcome"] != "pass"]
    if failing:
        lines += ["## Scenarios not passing", ""]
        for scenario in failing:
            lines.append(f"### {scenario['id']}: {scenario['outcome']}")
            lines += ["", f"`{scenario['source']}`: {_cell(scenario['detail'])}", ""]
            if scenario.get("reason"):
                lines += [f"baseline ({scenario['verdict']}): {_cell(scenario['reason'])}", ""]
            if scenario["mismatches"]:
                lines += ["| step | mismatch (expected and actual as JSON) |", "|---|---|"]
                lines += [
                    f"| {m['step']} {m['op']} | `{_cell(m['text'])}` |"
                    for m in scenario["mismatches"]
                ]
                lines.append("")
    return "\n".join(lines) + "\n"
