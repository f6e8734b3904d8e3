"""The audit's JSON summary: every figure of the report, machine-readable.

Layout (``report.json``)::

    {"format": "lethe-audit-report", "version": 1, "now_ms": ..., "problems": N,
     "checks": [{"name", "title", "definition", "found", "count", "bytes", "records",
                 "metrics": {...}, "samples": [{check, topic, partition, file, position,
                                                offset, bytes, records, message}, ...]}],
     "reclaimable_by_topic": {topic: {"below_log_start": B, "consumed_retention": B,
                                      "delete_records": B}},
     "tombstone_ages": [{"label", "low_ms", "high_ms", "count"}]}

Integers stay JSON integers (offsets and byte counts fit a double only up to
2**53, which is why nothing here is turned into a float).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from lethe_tools.audit.checks.model import Findings

__all__ = ["FORMAT", "VERSION", "summary"]

FORMAT = "lethe-audit-report"
VERSION = 1


def summary(findings: Findings) -> dict[str, Any]:
    """The JSON document of the module docstring."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "now_ms": findings.now_ms,
        "problems": findings.problems,
        "checks": [
            {
                "name": check.name,
                "title": check.title,
                "definition": check.definition,
                "found": check.found,
                "count": check.count,
                "bytes": check.bytes,
                "records": check.records,
                "metrics": check.metrics,
                "samples": check.samples,
            }
            for check in findings.checks
        ],
        "reclaimable_by_topic": {
            topic: dict(sorted(kinds.items()))
            for topic, kinds in sorted(findings.reclaimable_by_topic.items())
        },
        "tombstone_ages": [asdict(bucket) for bucket in findings.tombstone_ages],
    }
