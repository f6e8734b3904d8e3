"""The audit report as one self-contained HTML page.

Sections, in order: the audit time and problem count; the two plots (bytes
reclaimable per topic, tombstone age distribution); one section per check
with its title, verdict, figures, metrics, its definition (the check
module's docstring, so the page says exactly what was counted) and a sample of
its findings. Everything from the data is escaped; no script, no external
resource, so the file can be mailed or archived as is.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any

from lethe_tools.audit.checks.model import CheckResult, Findings
from lethe_tools.audit.report.svg import histogram, human_bytes, stacked_bars

__all__ = ["RECLAIM_KINDS", "render"]

#: report key -> legend label, in plot order
RECLAIM_KINDS = {
    "below_log_start": "below log start (next retention pass)",
    "consumed_retention": "KIP-68 consumed retention",
    "delete_records": "DeleteRecords at min committed",
}
_SAMPLE_COLUMNS = (
    "topic",
    "partition",
    "offset",
    "position",
    "bytes",
    "records",
    "message",
    "file",
)
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#f3f3f3;text-align:left}.found{color:#b00}.clean{color:#070}
pre{white-space:pre-wrap;background:#f8f8f8;padding:.6em;font-size:13px}
.chart{width:100%;max-width:60em}.none{color:#666}
"""


def _time(ms: int) -> str:
    """``ms`` as a UTC date; a value outside Python's calendar (``--now`` is any long) as is."""
    try:
        stamp = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, ValueError, OSError):
        return f"{ms} ms since the epoch"
    return stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + f" UTC ({ms} ms)"


def _cell(value: Any) -> str:
    return "" if value is None else escape(str(value))


def _samples(check: CheckResult) -> str:
    if not check.samples:
        return ""
    head = "".join(f"<th>{name}</th>" for name in _SAMPLE_COLUMNS)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_cell(row.get(n))}</td>" for n in _SAMPLE_COLUMNS) + "</tr>"
        for row in check.samples
    )
    more = check.count - len(check.samples)
    note = f"<p>{more} more in the findings not shown.</p>" if more > 0 else ""
    return f"<table><tr>{head}</tr>{rows}</table>{note}"


def _check(check: CheckResult) -> str:
    verdict = (
        f'<span class="found">{check.count} found</span>'
        if check.found
        else '<span class="clean">nothing found</span>'
    )
    metrics = "".join(
        f"<tr><th>{escape(k)}</th><td>{_cell(v)}</td></tr>" for k, v in check.metrics.items()
    )
    return (
        f'<section id="{escape(check.name)}"><h2>{escape(check.title)}</h2>'
        f"<p><code>{escape(check.name)}</code>: {verdict}; "
        f"{check.records} records, {escape(human_bytes(check.bytes))}</p>"
        f"<table>{metrics}</table><h3>Definition</h3><pre>{escape(check.definition)}</pre>"
        f"{_samples(check)}</section>"
    )


def render(findings: Findings) -> str:
    """The page for ``findings``."""
    topics = sorted(findings.reclaimable_by_topic)
    rows = [
        (t, [findings.reclaimable_by_topic[t].get(k, 0) for k in RECLAIM_KINDS]) for t in topics
    ]
    bars = stacked_bars(rows, list(RECLAIM_KINDS.values()))
    ages = histogram([(b.label, b.count) for b in findings.tombstone_ages])
    checks = "".join(_check(check) for check in findings.checks)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>lethe audit</title><style>{_STYLE}</style></head><body>"
        f"<h1>lethe audit</h1><p>As of {escape(_time(findings.now_ms))}; "
        f"{findings.problems} problems decoding the files.</p>"
        f"<h2>Bytes reclaimable per topic</h2>{bars}"
        f"<h2>Tombstone age distribution</h2>{ages}{checks}</body></html>"
    )
