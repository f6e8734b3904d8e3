"""Check ``below-log-start``: bytes and records still on disk below the log start offset.

Definition
----------
For each live log, ``log_start`` is the log start offset Kafka loads
(:func:`~.frames.live_logs`). A **finding** is a batch of a live segment with
``base_offset < log_start``:

* ``records``: its records with ``offset < log_start`` (invisible to every
  consumer since DeleteRecords or retention moved the start past them);
* ``bytes``: the batch's size when the whole batch is below the start
  (``last_offset < log_start``), else 0: Kafka deletes whole segments, never
  part of a batch, so a batch straddling the start is still needed.

Metrics:

* ``segments_reclaimable`` / ``segment_bytes_reclaimable``: live segments
  Kafka's next retention pass deletes by its log-start rule
  (``UnifiedLog.deleteLogStartOffsetBreachedSegments``): a segment whose next
  segment's base offset is at or below ``log_start``; the active segment has no
  next segment and is never deleted by this rule;
* ``pending_deleted_bytes``: ``.deleted`` segment files waiting for
  ``file.delete.delay.ms``, already off the log but still on disk;
* per topic, ``segment_bytes_reclaimable`` goes into the report's
  "bytes reclaimable" plot.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.context import CheckContext, CheckOutput
from lethe_tools.audit.checks.frames import (
    LOG_KEYS,
    findings_frame,
    lit_long,
    live_batches,
    live_records,
    live_segments,
)

__all__ = ["NAME", "TITLE", "findings", "pending_deleted", "reclaimable_segments", "run"]

NAME = "below-log-start"
TITLE = "Bytes and records on disk below the log start offset"


def findings(
    tables: dict[str, DataFrame],
    logs: DataFrame,
    records: DataFrame | None = None,
    bound: int | None = None,
) -> DataFrame:
    """One finding per live batch starting below its log's start offset.

    ``records``: live records with their log's columns (default: all of them);
    ``bound``: an offset no log start exceeds, so batches at or above it are
    skipped before the join (by Parquet statistics)."""
    before = None if bound is None else F.col("base_offset") < lit_long(bound)
    batches = live_batches(tables, logs, before).where(F.col("base_offset") < F.col("log_start"))
    below = (
        (live_records(tables, logs) if records is None else records)
        .where(F.col("offset") < F.col("log_start"))
        .groupBy("file", "batch_position")
        .agg(F.count(F.lit(1)).alias("records_below"))
        .withColumnRenamed("batch_position", "position")
    )
    joined = batches.join(below, ["file", "position"], "left").withColumn(
        "message",
        F.format_string(
            "batch %d..%d is below the log start offset %d",
            F.col("base_offset"),
            F.col("last_offset"),
            F.col("log_start"),
        ),
    )
    whole = F.col("last_offset") < F.col("log_start")
    return findings_frame(
        NAME,
        joined,
        offset=F.col("base_offset"),
        bytes=F.when(whole, F.col("size")).otherwise(lit_long(0)),
        records=F.coalesce(F.col("records_below"), lit_long(0)),
    )


def reclaimable_segments(tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    """Live segments whose next segment starts at or below the log start offset."""
    order = Window.partitionBy(*LOG_KEYS).orderBy("base_offset")
    segments = live_segments(tables).withColumn("next_base", F.lead("base_offset").over(order))
    starts = logs.select(*LOG_KEYS, "log_start")
    return segments.join(starts, LOG_KEYS).where(
        F.col("next_base").isNotNull() & (F.col("next_base") <= F.col("log_start"))
    )


def pending_deleted(tables: dict[str, DataFrame]) -> DataFrame:
    """``.deleted`` segment files still on disk."""
    return tables["segments"].where(F.col("extra_suffix") == ".deleted")


def run(ctx: CheckContext) -> CheckOutput:
    """Findings plus the segment metrics of the module docstring."""
    reclaimable = reclaimable_segments(ctx.tables, ctx.logs)
    per_topic = (
        reclaimable.groupBy("topic")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("size").alias("b"))
        .collect()
    )
    pending = pending_deleted(ctx.tables).agg(F.sum("size").alias("b")).first()
    metrics: dict[str, object] = {
        "segments_reclaimable": sum(int(row["n"]) for row in per_topic),
        "segment_bytes_reclaimable": sum(int(row["b"] or 0) for row in per_topic),
        "pending_deleted_bytes": int(pending["b"] or 0) if pending else 0,
    }
    by_topic = {row["topic"]: int(row["b"] or 0) for row in per_topic}
    frame = findings(ctx.tables, ctx.logs, ctx.live_records(), ctx.bound)
    return CheckOutput(frame, metrics, {"below_log_start": by_topic})
