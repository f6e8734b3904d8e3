"""Check ``compaction``: keys with more than one record in the cleaned part of a log.

Definition
----------
The *cleaned part* of a live log is ``[log_start, cleaner_offset)``, where
``cleaner_offset`` is the partition's entry in ``cleaner-offset-checkpoint``
(the first dirty offset, kafka-facts 4.2). After a cleaning Kafka keeps, in
the range it cleaned, only the record with the highest offset of each key
(KIP534-TMB-5). Records that are not *data* do not take part: control
records, records without a key, and records of aborted transactions (a
transactional record of producer P at an offset in ``[first, last)`` of an
entry of P in one of the partition's ``.txnindex`` files, ``last`` being the
ABORT marker's offset), which the cleaner removes on its own rule.

A **finding** is a data record of the cleaned part whose key has a record at
a higher offset in the cleaned part: compaction should have removed it.
``bytes`` is its key plus value size, ``records`` 1. A second kind of finding
is an aborted-transaction record still in the cleaned part.

The relational oracle (:mod:`lethe_tools.audit.oracle`) states the same rule
in SQL over plain rows with ``NOT EXISTS``; the tests hold this check to it,
and ``AuditOptions.oracle_dirs`` makes a run report (metric
``oracle_disagreements``) how many records the two disagree on.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.context import CheckContext, CheckOutput
from lethe_tools.audit.checks.frames import findings_frame, lit_long, live_records

__all__ = ["NAME", "TITLE", "cleaned_records", "findings", "oracle_metrics", "parent_dir", "run"]

NAME = "compaction"
TITLE = "Keys with more than one record in the cleaned part of a compacted log"


def parent_dir(column: str) -> Column:
    """The directory part of a path column."""
    return F.regexp_extract(F.col(column), r"^(.*)/[^/]*$", 1)


def cleaned_records(
    tables: dict[str, DataFrame], logs: DataFrame, live: DataFrame | None = None
) -> DataFrame:
    """Records of the cleaned part, with ``dir`` and ``aborted`` (see the definition).

    ``live``: live records with their log's columns (default: all of them)."""
    records = (live_records(tables, logs) if live is None else live).where(
        F.col("cleaner_offset").isNotNull()
        & (F.col("offset") >= F.col("log_start"))
        & (F.col("offset") < F.col("cleaner_offset"))
        & ~F.col("is_control")
    )
    records = records.withColumn("dir", parent_dir("file"))
    aborts = (
        tables["indexes"]
        .where(F.col("kind") == "txnindex")
        .select(
            parent_dir("file").alias("dir"),
            F.col("producer_id").alias("abort_pid"),
            F.col("first_offset").alias("abort_first"),
            F.col("last_offset").alias("abort_last"),
        )
    )
    hit = (
        records.where(F.col("is_transactional"))
        .join(
            aborts,
            (records["dir"] == aborts["dir"])
            & (F.col("producer_id") == F.col("abort_pid"))
            & (F.col("offset") >= F.col("abort_first"))
            & (F.col("offset") < F.col("abort_last")),
        )
        .select(records["file"], records["offset"])
        .distinct()
        .withColumn("aborted", F.lit(True))
    )
    return records.join(hit, ["file", "offset"], "left").withColumn(
        "aborted", F.coalesce(F.col("aborted"), F.lit(False))
    )


def findings(
    tables: dict[str, DataFrame], logs: DataFrame, live: DataFrame | None = None
) -> DataFrame:
    """Shadowed keys and aborted records of the cleaned part (``live`` as in cleaned_records)."""
    records = cleaned_records(tables, logs, live)
    data = records.where(~F.col("aborted") & F.col("key_hash").isNotNull())
    latest = F.max("offset").over(Window.partitionBy("dir", "key_hash"))
    shadowed = data.withColumn("latest", latest).withColumn(
        "message",
        F.when(
            F.col("offset") < F.col("latest"),
            F.format_string(
                "key %s is kept at offset %d and again at offset %d in the cleaned part",
                F.col("key_hash"),
                F.col("offset"),
                F.col("latest"),
            ),
        ),
    )
    aborted = records.where(F.col("aborted")).withColumn(
        "message",
        F.format_string("record of an aborted transaction of producer %d", F.col("producer_id")),
    )
    size = F.greatest(F.col("key_size"), F.lit(0)) + F.greatest(F.col("value_size"), F.lit(0))
    common = {"position": F.col("batch_position"), "bytes": size, "records": lit_long(1)}
    return findings_frame(NAME, shadowed, **common).unionByName(
        findings_frame(NAME, aborted, **common)
    )


def oracle_metrics(frame: DataFrame, oracle_dirs: tuple[str, ...]) -> dict[str, object]:
    """The oracle's verdict on ``frame``: how many records the two sides disagree on."""
    from lethe_tools.audit import oracle  # noqa: PLC0415 - only behind the option

    rows = [row.asDict() for row in frame.select("file", "offset").collect()]
    lines = oracle.disagreements(rows, oracle.run(oracle_dirs))
    return {"oracle_disagreements": len(lines), "oracle_first_disagreements": lines[:20]}


def run(ctx: CheckContext) -> CheckOutput:
    frame = findings(ctx.tables, ctx.logs, ctx.live_records())
    logs = ctx.logs.where(F.col("cleaner_offset").isNotNull()).count()
    metrics: dict[str, object] = {"compacted_logs_checked": logs}
    if ctx.options.oracle_dirs:
        metrics.update(oracle_metrics(frame, ctx.options.oracle_dirs))
    return CheckOutput(frame, metrics)
