"""The audit's checks: Spark queries over the audit tables, each with a documented definition.

Theory of operation
-------------------
:func:`run_all` computes the live logs once (:func:`.frames.live_logs`), runs
every check of :data:`CHECKS` in order and collects, per check, the number of
findings, the bytes and records they cover, a bounded sample (ordered by
topic, partition, offset so reports are stable) and the check's metrics
(counts per message kind and bytes per topic come from the same grouped
aggregation as the totals: each check costs its own collects, one grouped
job and one sample job). The
definitions are the check modules' docstrings; the report prints them beside
the figures so a reader knows exactly what was counted.

=====================  ==========================================================
``below-log-start``    bytes and records on disk below the log start offset
``delete-horizon``     tombstones/markers past their horizon, tombstones without one
``compaction``         keys kept more than once in the cleaned part
``consumed-retention`` what KIP-68 consumed retention / DeleteRecords would reclaim
``integrity``          CRC failures, wrong index entries, unexplained offset gaps
=====================  ==========================================================
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks import below_log_start, compaction, consumed, horizons, integrity
from lethe_tools.audit.checks.context import CheckContext, CheckOutput
from lethe_tools.audit.checks.frames import live_logs
from lethe_tools.audit.checks.model import (
    AuditOptions,
    CheckResult,
    Findings,
    HistogramBucket,
)

__all__ = ["CHECKS", "AuditOptions", "CheckResult", "Findings", "run_all", "run_check"]

CHECKS: tuple[ModuleType, ...] = (below_log_start, horizons, compaction, consumed, integrity)


def _definition(module: ModuleType) -> str:
    doc = inspect.getdoc(module) or ""
    _, _, rest = doc.partition("Definition\n----------\n")
    return rest.strip() or doc


def _grouped(output: CheckOutput, frame: DataFrame) -> list[dict[str, Any]]:
    """Findings counted and summed per (kind, topic): one Spark job for every figure."""
    pattern = output.kind_pattern
    kind = F.regexp_extract("message", pattern, 1) if pattern else F.lit("")
    rows = (
        frame.groupBy(kind.alias("kind"), F.col("topic"))
        .agg(F.count(F.lit(1)).alias("n"), F.sum("bytes").alias("b"), F.sum("records").alias("r"))
        .collect()
    )
    return [row.asDict() for row in rows]


def _collect(module: ModuleType, output: CheckOutput, sample_rows: int) -> CheckResult:
    frame = output.findings.cache()
    groups = _grouped(output, frame)
    ordered = frame.orderBy("topic", "partition", "offset", "file", "position", "message")
    samples = [row.asDict() for row in ordered.limit(sample_rows).collect()] if groups else []
    frame.unpersist()
    metrics = {k: v for k, v in output.metrics.items() if k != "tombstone_ages"}
    for kind, name in output.kinds.items():
        metrics[name] = sum(int(g["n"] or 0) for g in groups if g["kind"] == kind)
    if output.reclaim_as is not None:
        by_topic: dict[str, int] = {}
        for g in groups:
            topic = str(g["topic"])
            by_topic[topic] = by_topic.get(topic, 0) + int(g["b"] or 0)
        output.reclaimable[output.reclaim_as] = by_topic
    return CheckResult(
        name=module.NAME,
        title=module.TITLE,
        definition=_definition(module),
        count=sum(int(g["n"] or 0) for g in groups),
        bytes=sum(int(g["b"] or 0) for g in groups),
        records=sum(int(g["r"] or 0) for g in groups),
        samples=samples,
        metrics=metrics,
    )


def run_check(module: ModuleType, ctx: CheckContext) -> tuple[CheckResult, CheckOutput]:
    """One check's result (and its raw output, for the plots)."""
    runner: Callable[[CheckContext], CheckOutput] = module.run
    output = runner(ctx)
    return _collect(module, output, ctx.options.sample_rows), output


def run_all(
    spark: SparkSession,
    tables: dict[str, DataFrame],
    now_ms: int,
    options: AuditOptions | None = None,
) -> Findings:
    """Run every check over ``tables`` as of ``now_ms``; see the module docstring."""
    del spark  # the tables carry their session; kept for the job's call shape
    options = options or AuditOptions()
    logs = live_logs(tables).cache()
    ctx = CheckContext(tables, logs, now_ms, options)
    findings = Findings(now_ms=now_ms, problems=tables["problems"].count())
    for module in CHECKS:
        result, output = run_check(module, ctx)
        findings.checks.append(result)
        for kind, by_topic in output.reclaimable.items():
            for topic, size in by_topic.items():
                findings.reclaimable_by_topic.setdefault(topic, {})[kind] = size
        ages = output.metrics.get("tombstone_ages")
        if isinstance(ages, list) and all(isinstance(b, HistogramBucket) for b in ages):
            findings.tombstone_ages = ages
    logs.unpersist()
    return findings
