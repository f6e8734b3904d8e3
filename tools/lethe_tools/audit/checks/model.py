"""What the audit's checks hand to the report: plain values, no Spark objects.

Theory of operation
-------------------
Every check is a Spark query over the audit tables whose result is a
*findings* DataFrame with the columns of :data:`FINDING_COLUMNS`: one row per
thing found (a batch below the log start offset, a tombstone past its
horizon, a key kept twice). Checks are column expressions in the DESIGN's
sense: a row's ``message`` is null when the row passes and says what is wrong
when it does not; only rows with a message are findings.

The driver then collects, per check, the count, the bytes and records the
findings cover, a bounded sample of rows, and the check's metrics (a few named
figures such as bytes reclaimable per topic). :class:`Findings` carries those
and the two distributions the report plots, so the report and its tests need
no Spark at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FINDING_COLUMNS",
    "SAMPLE_ROWS",
    "AuditOptions",
    "CheckResult",
    "Findings",
    "HistogramBucket",
]

#: Columns of every check's findings frame, in order.
FINDING_COLUMNS = (
    "check",
    "topic",
    "partition",
    "file",
    "position",
    "offset",
    "bytes",
    "records",
    "message",
)

#: Rows of each check kept in the report (the count and sums cover all rows).
SAMPLE_ROWS = 200


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """Inputs a log directory does not hold (topic configs live in the controller).

    ``consumed_retention_ms`` stands for KIP-68's ``retention.commitoffset.ms``:
    a segment is old enough for consumed retention when ``now`` minus its
    largest timestamp is greater than it. 0, the default, counts every
    segment with a timestamp before ``now``.

    ``oracle_dirs``: audit output directories whose Parquet tables the
    relational oracle (:mod:`lethe_tools.audit.oracle`) re-reads to hold the
    compaction check to it (empty = no oracle; it runs on the driver, so it
    is meant for small and medium audits).
    """

    consumed_retention_ms: int = 0
    sample_rows: int = SAMPLE_ROWS
    oracle_dirs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HistogramBucket:
    """``count`` values in ``[low_ms, high_ms)``; ``high_ms`` None = unbounded."""

    label: str
    low_ms: int
    high_ms: int | None
    count: int


@dataclass(slots=True)
class CheckResult:
    """One check's outcome: ``count`` findings covering ``bytes`` and ``records``."""

    name: str
    title: str
    definition: str
    count: int = 0
    bytes: int = 0
    records: int = 0
    samples: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.count > 0


@dataclass(slots=True)
class Findings:
    """Every check's result plus what the report plots."""

    now_ms: int
    checks: list[CheckResult] = field(default_factory=list)
    #: topic -> {"below_log_start": bytes, "consumed_retention": bytes, "delete_records": bytes}
    reclaimable_by_topic: dict[str, dict[str, int]] = field(default_factory=dict)
    tombstone_ages: list[HistogramBucket] = field(default_factory=list)
    problems: int = 0

    def check(self, name: str) -> CheckResult:
        """The result of the check called ``name``; KeyError names the checks that ran."""
        for result in self.checks:
            if result.name == name:
                return result
        raise KeyError(f"no check {name!r}; checks: {', '.join(c.name for c in self.checks)}")
