"""Check ``consumed-retention``: what KIP-68 would delete now, and what DeleteRecords would.

Definition
----------
*Committed offsets* come from the ``offsets`` table (offset-commit records of
the ``__consumer_offsets`` partitions in the log dirs). Per (group, topic,
partition) the committed state is the latest counted record by log offset
(KIP68-MCO-4): a non-transactional record always counts; a transactional one
(``sendOffsetsToTransaction``) counts only when the first control record of
its producer after it in the same ``__consumer_offsets`` partition is a
COMMIT marker. A latest record that is a tombstone means no committed offset.

The *min committed offset* of a partition is the minimum over its groups
(KIP68-MCO-1), capped at the partition's high watermark when the replication
checkpoint has one (KIP68-MCO-5); a partition no group committed for gets no
consumed retention (KIP68-MCO-2).

A live segment is *consumed* when the next segment's base offset (the log end
offset for the last one) is at or below the min committed offset
(KIP68-RET-2); *old* when ``now`` minus its largest timestamp (its file
modification time when it has none, i.e. null or -1 as for magic 0 data) is greater than
``AuditOptions.consumed_retention_ms`` (KIP68-RET-3). The active segment
counts when it holds records (KIP68-RET-6: Kafka rolls it first). Consumed
retention deletes only the prefix of segments that are both (KIP68-RET-4).

A **finding** is a segment of that prefix: ``bytes`` its size, ``records``
its record count. Metrics: per topic, the bytes consumed retention would
reclaim and the bytes DeleteRecords at the min committed offset would reclaim
(segments whose next base offset is at or below it, whatever their age; the
active segment stays, kafka-facts 1.3).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.compaction import parent_dir
from lethe_tools.audit.checks.context import CheckContext, CheckOutput, per_topic_sum
from lethe_tools.audit.checks.frames import LOG_KEYS, findings_frame, lit_long, live_segments

__all__ = ["NAME", "TITLE", "committed_offsets", "min_committed", "run"]

NAME = "consumed-retention"
TITLE = "What KIP-68 consumed retention would delete now, and DeleteRecords at that offset"
COMMIT = 1


def _transaction_outcomes(tables: dict[str, DataFrame], offsets: DataFrame) -> DataFrame:
    """(file, log_offset) of transactional commits with their marker's control type."""
    markers = (
        tables["records"]
        .where(F.col("is_control") & (F.col("topic") == "__consumer_offsets"))
        .select(
            parent_dir("file").alias("dir"),
            F.col("producer_id").alias("marker_pid"),
            F.col("offset").alias("marker_offset"),
            F.col("control_type"),
        )
    )
    pending = offsets.where(F.col("is_transactional")).withColumn("dir", parent_dir("file"))
    joined = pending.join(
        markers,
        (pending["dir"] == markers["dir"])
        & (F.col("producer_id") == F.col("marker_pid"))
        & (F.col("marker_offset") > F.col("log_offset")),
    )
    first = Window.partitionBy("file", "log_offset").orderBy("marker_offset")
    return (
        joined.withColumn("n", F.row_number().over(first))
        .where(F.col("n") == 1)
        .select("file", "log_offset", "control_type")
    )


def committed_offsets(tables: dict[str, DataFrame]) -> DataFrame:
    """(group, topic, partition, committed_offset): the committed state per group."""
    offsets = tables["offsets"]
    outcomes = _transaction_outcomes(tables, offsets)
    counted = offsets.join(outcomes, ["file", "log_offset"], "left").where(
        ~F.col("is_transactional") | (F.col("control_type") == COMMIT)
    )
    latest = Window.partitionBy("group", "topic", "partition").orderBy(
        F.col("log_offset").desc(), F.col("file").desc()
    )
    return (
        counted.withColumn("n", F.row_number().over(latest))
        .where((F.col("n") == 1) & ~F.col("is_tombstone"))
        .select("group", "topic", "partition", "committed_offset")
    )


def min_committed(tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    """Live logs with ``min_committed`` (capped at the high watermark), committed ones only."""
    minimum = (
        committed_offsets(tables)
        .groupBy("topic", "partition")
        .agg(F.min("committed_offset").alias("min_group_offset"))
    )
    capped = F.when(
        F.col("high_watermark").isNotNull(),
        F.least(F.col("min_group_offset"), F.col("high_watermark")),
    ).otherwise(F.col("min_group_offset"))
    return logs.join(minimum, ["topic", "partition"]).withColumn("min_committed", capped)


def _segments(ctx: CheckContext, committed: DataFrame) -> DataFrame:
    """Live segments of the logs in ``committed`` (min_committed's rows), the rule's columns."""
    order = Window.partitionBy(*LOG_KEYS).orderBy("base_offset")
    logs = committed.select(*LOG_KEYS, "log_end", "min_committed")
    segments = live_segments(ctx.tables).join(logs, LOG_KEYS)
    next_base = F.coalesce(F.lead("base_offset").over(order), F.col("log_end"))
    # Kafka's LogSegment.largestTimestamp: the max timestamp when there is one (>= 0;
    # magic 0 data and empty segments have -1 or none), else the file's mtime.
    newest = F.when(F.col("max_timestamp") >= 0, F.col("max_timestamp")).otherwise(
        F.col("modified_ms")
    )
    consumed = F.col("next_base") <= F.col("min_committed")
    old = (lit_long(ctx.now_ms) - newest) > lit_long(ctx.options.consumed_retention_ms)
    nonempty_if_active = ~F.col("is_active") | (F.col("record_count") > 0)
    segments = segments.withColumn("next_base", next_base).withColumn(
        "qualifies", consumed & old & nonempty_if_active
    )
    blocked = F.sum(F.when(F.col("qualifies"), 0).otherwise(1)).over(
        order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return segments.withColumn("blocked_before", blocked)


def run(ctx: CheckContext) -> CheckOutput:
    # Cached: the findings, the count and the DeleteRecords sums all read them.
    committed = min_committed(ctx.tables, ctx.logs).cache()
    segments = _segments(ctx, committed).cache()
    prefix = segments.withColumn(
        "message",
        F.when(
            F.col("blocked_before") == 0,
            F.format_string(
                "segment %d is consumed by every group (min committed offset %d) and older "
                "than %d ms",
                F.col("base_offset"),
                F.col("min_committed"),
                lit_long(ctx.options.consumed_retention_ms),
            ),
        ),
    )
    frame = findings_frame(
        NAME,
        prefix,
        position=lit_long(0),
        offset=F.col("base_offset"),
        bytes=F.col("size"),
        records=F.col("record_count"),
    )
    by_delete_records = segments.where(
        ~F.col("is_active") & (F.col("next_base") <= F.col("min_committed"))
    )
    partitions = committed.count()
    return CheckOutput(
        frame,
        {"partitions_with_commits": partitions},
        {"delete_records": per_topic_sum(by_delete_records, "size")},
        reclaim_as="consumed_retention",
        cached=[segments, committed],
    )
