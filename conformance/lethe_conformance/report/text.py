"""The terminal matrix: one row per requirement, grouped by profile, then a summary.

Theory of operation
-------------------
::

    kip107 (required): 40 pass, 1 fail
      KIP107-API-1    pass            DeleteRecords is API key 21 ...
      KIP107-API-2    fail            The low watermark ...
                      why: steps[3] delete_records: $.steps[3].expect...: expected 5, got 3
    ...
    target kafka (...): 130 pass, 2 fail, ...; 4 retries (NOT_LEADER_OR_FOLLOWER 4); gate failed

The matrix opens with what judged the run: lethe's version, the suite's
catalog and scenario versions, the Kafka the expectations were verified on,
and the API versions the target advertised. Each row carries the
requirement's statement, shortened to the terminal's width; every row that
is not a pass says why on the next line (the mismatch, the missing
capability and what would provide it, or the catalog's reason). A
baselined failure shows its verdict (``fail (expected-failure)``). Reads only the document from
:func:`~lethe_conformance.report.data.report_data`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "LINE_WIDTH",
    "api_ranges",
    "by_profile",
    "header_lines",
    "outcome_label",
    "render_matrix",
    "shorten",
    "statement_text",
    "suite_text",
    "summary_line",
]

#: The matrix's line width (requirement statements and reasons are cut to fit).
LINE_WIDTH = 160
_OUTCOME_WIDTH = 14


def by_profile(rows: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    """Rows grouped by profile, in first-seen order."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row["profile"]), []).append(row)
    yield from groups.items()


def outcome_label(row: Mapping[str, Any]) -> str:
    """The outcome, with the baseline verdict when it changes the meaning."""
    verdict = row.get("verdict")
    if verdict in ("expected-failure", "fixed"):
        return f"{row['outcome']} ({verdict})"
    return str(row["outcome"])


def statement_text(row: Mapping[str, Any]) -> str:
    """The statement, and for a requirement no target can show, the catalog's reason."""
    if row["outcome"] == "not-observable" and row.get("reason"):
        return f"{row['statement']} (not observable: {row['reason']})"
    return str(row["statement"])


def summary_line(data: Mapping[str, Any]) -> str:
    counts = ", ".join(f"{n} {state}" for state, n in data["summary"].items() if n)
    if data["failed_profiles"]:
        gate = f"gate failed: {', '.join(data['failed_profiles'])}"
    else:
        gate = f"gate passed (required: {', '.join(data['required_profiles']) or 'none'})"
    retries = data.get("retries") or {}
    if retries:
        listed = ", ".join(f"{name} {n}" for name, n in retries.items())
        gate = f"{sum(retries.values())} retries ({listed}); {gate}"
    return f"target {data['target']['name']}: {counts}; {gate}"


def header_lines(data: Mapping[str, Any]) -> list[str]:
    """What judged the run and what was judged: lethe's and the suite's versions, the
    Kafka the expectations were verified on, the target's advertised API ranges."""
    suite = data.get("suite")
    lines = [f"lethe {data['lethe_version']}" + (f"; suite: {suite_text(suite)}" if suite else "")]
    ranges = api_ranges(data["target"])
    if ranges:
        lines.append(f"target {data['target']['name']} advertises: {ranges}")
    return lines


def suite_text(suite: Mapping[str, Any]) -> str:
    kafka = suite["verified_against"]
    return (
        f"catalog {suite['catalog_version']}, scenarios {suite['scenarios_version']}, "
        f"expectations verified on {kafka['broker']} {kafka['version']} "
        f"(commit {kafka['commit_id']}, {kafka['report']})"
    )


def api_ranges(target: Mapping[str, Any]) -> str:
    """``NAME(key) min-max, ...`` of every API the target advertised."""
    return ", ".join(
        f"{a['name']}({a['api_key']}) {a['min']}-{a['max']}" for a in target.get("api_versions", ())
    )


def render_matrix(data: Mapping[str, Any], columns: int = LINE_WIDTH) -> str:
    rows = data["requirements"]
    width = max((len(r["id"]) for r in rows), default=2)
    required = set(data["required_profiles"])
    counts = data.get("profiles", {})
    lines: list[str] = []
    for line in header_lines(data):
        lines += textwrap.wrap(line, columns, subsequent_indent="    ", break_on_hyphens=False)
    lines.append("")
    for profile, group in by_profile(rows):
        if all(row["outcome"] == "not-selected" for row in group):
            continue  # --profile: the matrix shows what the run ran and gates
        note = " (required)" if profile in required else ""
        tally = ", ".join(f"{n} {state}" for state, n in counts.get(profile, {}).items())
        lines.append(f"{profile}{note}" + (f": {tally}" if tally else ""))
        for row in group:
            head = f"  {row['id']:<{width}}  {outcome_label(row):<{_OUTCOME_WIDTH}}  "
            lines.append(head + shorten(str(row["statement"]), columns - len(head)))
            why = row.get("why")
            if why and row["outcome"] != "pass":
                indent = " " * (width + 4)
                lines.append(indent + shorten(f"why: {why}", columns - len(indent)))
        lines.append("")
    for scenario in data.get("scenarios", ()):
        if scenario.get("verdict") in ("failed", "fixed") and scenario.get("reason"):
            text = f"baseline: {scenario['id']}: {scenario['reason']}"
            lines.append(shorten(text, columns))
    lines.append(summary_line(data))
    return "\n".join(lines) + "\n"


def shorten(text: str, room: int) -> str:
    """``text`` on one line, cut to ``room`` characters with an ellipsis."""
    flat = " ".join(text.split())
    room = max(room, 20)
    return flat if len(flat) <= room else flat[: room - 1] + "\u2026"
