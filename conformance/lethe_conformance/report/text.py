"""The terminal matrix: one row per requirement, grouped by profile, then a summary.

Theory of operation
-------------------
::

    kip107 (required)
      KIP107-API-1    kip107  pass
      KIP107-API-2    kip107  not-covered
    ...
    target embedded: 130 pass, 2 fail, 79 not-covered, ... ; gate failed: kip107

A baselined failure shows its verdict (``fail (expected-failure)``). Reads only
the document from :func:`~lethe_conformance.report.data.report_data`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["by_profile", "outcome_label", "render_matrix", "statement_text", "summary_line"]


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
    return f"target {data['target']['name']}: {counts}; {gate}"


def render_matrix(data: Mapping[str, Any]) -> str:
    rows = data["requirements"]
    width = max((len(r["id"]) for r in rows), default=2)
    required = set(data["required_profiles"])
    lines: list[str] = []
    for profile, group in by_profile(rows):
        note = " (required)" if profile in required else ""
        lines.append(f"{profile}{note}")
        for row in group:
            lines.append(f"  {row['id']:<{width}}  {profile:<7}  {outcome_label(row)}")
        lines.append("")
    lines.append(summary_line(data))
    return "\n".join(lines) + "\n"
