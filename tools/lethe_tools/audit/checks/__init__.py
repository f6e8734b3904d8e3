"""The audit's checks: Spark queries over the audit tables, each with a documented definition.

Theory of operation
-------------------
:func:`run_all` computes, once and cached, the live logs
(:func:`.frames.live_logs`) and the live records any check reads
(:func:`.frames.check_records`: one scan of the records table for all
checks), runs every check of :data:`CHECKS` and collects, per check, the
number of findings, the bytes and records they cover, a bounded sample
(ordered by topic, partition, offset so reports are stable) and the check's
metrics. The findings of all checks are one cached union, so every count,
sum, count per message kind and bytes per topic comes from one grouped
aggregation, and every check's sample from one windowed query (the first
``sample_rows`` per check): two Spark jobs for all checks, not two each.
The checks' own metric queries are many small Spark jobs whose time is
mostly planning and scheduling on the driver, so the checks run in driver
threads at once (Spark runs jobs submitted from several threads
concurrently); each check's queries are the same as when run alone. The
small tables and the live segment files with their logs' offsets are cached
once (:func:`.frames.share`), and the problems count is the integrity
check's count of ``problem`` findings (one per problems row), not a job of
its own.

What grows with the data is kept to single passes: the records table is
read once (its needed columns, pre-filtered); the batches are read by the
gap window (sorted per log by an int ``log_id``) and the two index joins;
CRC, marker and below-start conditions are pushed to the Parquet scan.
:func:`run_check` does the same for one check alone. The definitions are the
check modules' docstrings; the report prints them beside the figures so a
reader knows exactly what was counted.

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
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from types import ModuleType
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks import below_log_start, compaction, consumed, horizons, integrity
from lethe_tools.audit.checks.context import CheckContext, CheckOutput
from lethe_tools.audit.checks.frames import (
    check_records,
    live_logs,
    offset_bound,
    release,
    share,
)
from lethe_tools.audit.checks.model import (
    FINDING_COLUMNS,
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


_ORDER = ("topic", "partition", "offset", "file", "position", "message")


def _with_kind(output: CheckOutput) -> DataFrame:
    """The findings with ``kind``: the message part ``kind_pattern`` captures ("" without one)."""
    pattern = output.kind_pattern
    kind = F.regexp_extract("message", pattern, 1) if pattern else F.lit("")
    return output.findings.withColumn("kind", kind)


def _gather(
    outputs: list[CheckOutput], sample_rows: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """check -> grouped figures per (kind, topic), and check -> sample rows (in _ORDER).

    Two Spark jobs over the cached union of every check's findings."""
    union = reduce(DataFrame.unionByName, [_with_kind(output) for output in outputs]).cache()
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in (
        union.groupBy("check", "kind", "topic")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("bytes").alias("b"), F.sum("records").alias("r"))
        .collect()
    ):
        groups.setdefault(row["check"], []).append(row.asDict())
    samples: dict[str, list[dict[str, Any]]] = {}
    if groups:
        order = Window.partitionBy("check").orderBy(*_ORDER)
        first = union.withColumn("_n", F.row_number().over(order)).where(F.col("_n") <= sample_rows)
        ranked = sorted(first.select(*FINDING_COLUMNS, "_n").collect(), key=lambda r: r["_n"])
        for row in ranked:
            sample = row.asDict()
            del sample["_n"]
            samples.setdefault(sample["check"], []).append(sample)
    union.unpersist()
    for output in outputs:
        for frame in output.cached:
            frame.unpersist()
    return groups, samples


def _result(
    module: ModuleType,
    output: CheckOutput,
    groups: list[dict[str, Any]],
    samples: list[dict[str, Any]],
) -> CheckResult:
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
    groups, samples = _gather([output], ctx.options.sample_rows)
    name = module.NAME
    return _result(module, output, groups.get(name, []), samples.get(name, [])), output


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
    shared = share(tables, logs)
    bound = offset_bound(logs)
    records = check_records(shared, logs, bound).cache()
    records.count()  # filled once here, before the checks read it from several threads
    ctx = CheckContext(shared, logs, now_ms, options, records, bound)
    runners: list[Callable[[CheckContext], CheckOutput]] = [module.run for module in CHECKS]
    with ThreadPoolExecutor(max_workers=len(runners)) as pool:
        outputs = list(pool.map(lambda runner: runner(ctx), runners))
    groups, samples = _gather(outputs, options.sample_rows)
    findings = Findings(now_ms=now_ms)
    for module, output in zip(CHECKS, outputs, strict=True):
        name = module.NAME
        result = _result(module, output, groups.get(name, []), samples.get(name, []))
        findings.checks.append(result)
        if module is integrity:  # every problems row is one "problem" finding
            findings.problems = int(result.metrics[integrity.KINDS["problem"]])
        for kind, by_topic in output.reclaimable.items():
            for topic, size in by_topic.items():
                findings.reclaimable_by_topic.setdefault(topic, {})[kind] = size
        ages = output.metrics.get("tombstone_ages")
        if isinstance(ages, list) and all(isinstance(b, HistogramBucket) for b in ages):
            findings.tombstone_ages = ages
    records.unpersist()
    release(shared)
    logs.unpersist()
    return findings
