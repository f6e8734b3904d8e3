"""What every check receives and returns.

A check is a function ``run(ctx) -> CheckOutput``: it reads the tables (and
the shared :func:`~.frames.live_logs` frame, computed once) and returns its
findings frame, a few named metrics already collected to the driver, and
optionally bytes reclaimable per topic under a named kind for the report's
plot. Collecting metrics inside the check keeps each definition in one module.

Figures that are plain aggregates of the findings themselves are *declared*
instead of collected (``kinds``: the count of findings whose message starts
with a kind; ``reclaim_as``: the findings' bytes per topic), so that
:func:`lethe_tools.audit.checks.run_all` gets them, the totals and the
per-topic sums from one grouped aggregation of the cached findings, rather
than one Spark job each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.model import AuditOptions

__all__ = ["CheckContext", "CheckOutput", "per_topic_sum"]


@dataclass(frozen=True, slots=True)
class CheckContext:
    """The tables, the live logs, ``now`` and the options; ``records``, when set, is the
    shared (cached) :func:`~.frames.check_records` frame the checks read records from,
    and ``bound`` an offset no log's start or cleaner offset exceeds (a pre-filter)."""

    tables: dict[str, DataFrame]
    logs: DataFrame
    now_ms: int
    options: AuditOptions
    records: DataFrame | None = None
    #: at least every log's ``log_start`` and ``cleaner_offset`` (:func:`~.frames.offset_bound`)
    bound: int | None = None

    def live_records(self) -> DataFrame:
        """The live records a check may look at: the shared frame, else computed here."""
        if self.records is not None:
            return self.records
        from lethe_tools.audit.checks.frames import check_records  # noqa: PLC0415 - cycle

        return check_records(self.tables, self.logs)


@dataclass(slots=True)
class CheckOutput:
    findings: DataFrame
    metrics: dict[str, object] = field(default_factory=dict)
    #: kind -> topic -> bytes, merged into Findings.reclaimable_by_topic
    reclaimable: dict[str, dict[str, int]] = field(default_factory=dict)
    #: message kind (the text the regex ``kind_pattern`` captures) -> metric name
    kinds: dict[str, str] = field(default_factory=dict)
    kind_pattern: str = ""
    #: reclaimable kind under which the findings' bytes per topic are reported
    reclaim_as: str | None = None
    #: frames the check cached; released once its findings are collected
    cached: list[DataFrame] = field(default_factory=list)


def per_topic_sum(frame: DataFrame, column: str) -> dict[str, int]:
    """topic -> sum of ``column`` over ``frame`` (a small result, collected)."""
    rows = frame.groupBy("topic").agg(F.sum(column).alias("total")).collect()
    return {row["topic"]: int(row["total"] or 0) for row in rows}
