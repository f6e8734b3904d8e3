"""The HTML report: one self-contained file (inline CSS, no scripts, no external assets).

Theory of operation
-------------------
A CI artifact must open anywhere, offline, years later: so the page links
nothing (no stylesheet, font, image or script URL) and carries its CSS in a
``<style>`` element. Every piece of text from the run (statements, mismatch
values, target names) goes through :func:`html.escape`. Layout: a header
with the target and summary, one table per profile (outcome cells coloured by
state), then the scenarios that did not pass with their mismatches.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from lethe_conformance.report.text import (
    api_ranges,
    by_profile,
    outcome_label,
    statement_text,
    suite_text,
    summary_line,
)

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}
code{font-family:ui-monospace,monospace}
.pass{background:#d7f5d7}.fail,.error{background:#f8d0d0}
.unsupported,.not-applicable,.inconclusive{background:#f5efc8}
.not-covered,.not-observable,.not-selected{background:#e6e6e6}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _requirement_table(profile: str, group: list[Mapping[str, Any]]) -> list[str]:
    out = [
        f"<h2>{_e(profile)}</h2>",
        "<table><tr><th>ID</th><th>outcome</th><th>statement</th></tr>",
    ]
    for row in group:
        out.append(
            f"<tr><td><code>{_e(row['id'])}</code></td>"
            f'<td class="{_e(row["outcome"])}">{_e(outcome_label(row))}</td>'
            f"<td>{_e(statement_text(row))}</td></tr>"
        )
    out.append("</table>")
    return out


def _scenario_section(scenario: Mapping[str, Any]) -> list[str]:
    out = [
        f"<h3><code>{_e(scenario['id'])}</code>: "
        f'<span class="{_e(scenario["outcome"])}">{_e(scenario["outcome"])}</span></h3>',
        f"<p><code>{_e(scenario['source'])}</code>: {_e(scenario['detail'])}</p>",
    ]
    if scenario["mismatches"]:
        out.append("<table><tr><th>step</th><th>mismatch (expected and actual as JSON)</th></tr>")
        out += [
            f"<tr><td>{_e(m['step'])} {_e(m['op'])}</td><td><code>{_e(m['text'])}</code></td></tr>"
            for m in scenario["mismatches"]
        ]
        out.append("</table>")
    return out


def render_html(data: Mapping[str, Any]) -> str:
    target = data["target"]
    body = [
        "<h1>lethe conformance report</h1>",
        "<ul>",
        f"<li>target <code>{_e(target['name'])}</code>, clock {_e(target['clock'])}, "
        f"capabilities: {_e(', '.join(target['capabilities']) or 'none')}</li>",
        f"<li>profiles offered: {_e(', '.join(target['profiles_offered']) or 'none')}</li>",
        f"<li>run {_e(data['started'])} to {_e(data['finished'])}, "
        f"lethe {_e(data['lethe_version'])}</li>",
        f"<li>suite: {_e(suite_text(data['suite']) if data.get('suite') else 'unknown')}</li>",
        f"<li>advertised API versions: {_e(api_ranges(target) or 'none')}</li>",
        f"<li><strong>{_e(summary_line(data))}</strong></li>",
        "</ul>",
    ]
    for profile, group in by_profile(data["requirements"]):
        body += _requirement_table(profile, group)
    failing = [s for s in data["scenarios"] if s["outcome"] != "pass"]
    if failing:
        body.append("<h2>Scenarios not passing</h2>")
        for scenario in failing:
            body += _scenario_section(scenario)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>lethe conformance: {_e(target['name'])}</title>"
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
