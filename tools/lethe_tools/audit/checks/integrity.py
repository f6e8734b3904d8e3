"""Check ``integrity``: CRC failures, index entries pointing at the wrong place, offset gaps.

Definition
----------
A **finding** is one of:

* ``crc``: a batch (any segment file) whose stored CRC does not match its
  bytes (CRC-32C for magic 2, CRC-32 for magic 0/1);
* ``offset index``: an ``.index`` entry whose log position is not the start
  of a batch of its segment, whose offset is below the last offset of the
  batch at that position, or past the segment's last offset. Kafka appends
  ``(last offset of the append, position of the append)`` every
  ``index.interval.bytes`` (kafka-facts 3.5); an append is one batch from a
  producer but may be several on a follower, so the offset may lie beyond
  the batch it points at, never before its last offset. A lookup through a
  wrong entry starts reading in the middle of a batch or after the offset
  it looks for;
* ``time index``: a ``.timeindex`` entry whose offset is not the last offset
  of a batch of its segment (Kafka indexes the batch holding the largest
  timestamp so far by its last offset), or whose timestamp is above the
  segment's largest timestamp;
* ``gap``: in a live log, a batch whose base offset is more than one above
  the previous batch's last offset, or a magic-2 batch holding fewer records
  than its offset range, where the missing offsets are not in the cleaned
  part (below the ``cleaner-offset-checkpoint`` entry): only compaction
  removes offsets from a Kafka log;
* ``problem``: a row of the ``problems`` table (a file or entry that could
  not be decoded), so one check reports everything wrong with the files.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.context import CheckContext, CheckOutput
from lethe_tools.audit.checks.frames import findings_frame, lit_long, live_batches

__all__ = ["NAME", "TITLE", "findings", "run"]

NAME = "integrity"
TITLE = "CRC failures, index entries pointing at the wrong place, unexplained offset gaps"
_LOG_FILE = r"\.(index|timeindex)(\.[a-z]+)?$"
_INDEX_OF = r"\.log(\.[a-z]+)?$"


def _crc(tables: dict[str, DataFrame]) -> DataFrame:
    # Filtered first: Parquet statistics skip the row groups where every CRC matched.
    batches = (
        tables["batches"]
        .where(~F.col("crc_ok"))
        .withColumn(
            "message",
            F.when(
                ~F.col("crc_ok"),
                F.format_string("crc: stored %d does not match the batch bytes", F.col("crc")),
            ),
        )
    )
    return findings_frame(
        NAME, batches, offset=F.col("base_offset"), records=F.col("records_count")
    )


def _entries(tables: dict[str, DataFrame], kind: str, *columns: Column) -> DataFrame:
    """Index entries of ``kind`` with ``log_file``, the segment they index, and ``columns``
    of that segment's ``segments`` row (null when there is none).

    ``log_file`` is the index file's name with ``.index``/``.timeindex`` replaced by
    ``.log``, any extra suffix kept (``_LOG_FILE``). The rename is done once per
    segment (one row per ``.log`` file, mapped to its index file's name) and the
    entries find theirs by a join on the file, so no regular expression runs per
    entry; an index file without a segment falls back to renaming its own name."""
    segments = tables["segments"].select(
        F.regexp_replace("file", _INDEX_OF, f".{kind}$1").alias("index_file"),
        F.col("file").alias("segment_file"),
        *columns,
    )
    entries = tables["indexes"].where(F.col("kind") == kind).drop("first_offset", "last_offset")
    joined = entries.join(F.broadcast(segments), entries["file"] == segments["index_file"], "left")
    log_file = F.coalesce(F.col("segment_file"), F.regexp_replace("file", _LOG_FILE, ".log$2"))
    return joined.withColumn("log_file", log_file).drop("index_file", "segment_file")


def _offset_index(tables: dict[str, DataFrame]) -> DataFrame:
    entries = _entries(tables, "index", F.col("last_offset").alias("seg_last"))
    batches = tables["batches"].select(
        F.col("file").alias("log_file"),
        F.col("position").alias("log_position"),
        F.col("base_offset").alias("batch_base"),
        F.col("last_offset").alias("batch_last"),
    )
    joined = entries.join(batches, ["log_file", "log_position"], "left")
    message = (
        F.when(
            F.col("batch_base").isNull(),
            F.format_string(
                "offset index: entry %d (offset %d) points at position %d, not a batch start",
                F.col("entry"),
                F.col("offset"),
                F.col("log_position"),
            ),
        )
        .when(
            F.col("offset") < F.col("batch_last"),
            F.format_string(
                "offset index: entry %d says offset %d, the batch at position %d holds %d..%d",
                F.col("entry"),
                F.col("offset"),
                F.col("log_position"),
                F.col("batch_base"),
                F.col("batch_last"),
            ),
        )
        .when(
            F.col("offset") > F.col("seg_last"),
            F.format_string(
                "offset index: entry %d says offset %d, past the segment's last offset %d",
                F.col("entry"),
                F.col("offset"),
                F.col("seg_last"),
            ),
        )
    )
    return findings_frame(NAME, joined.withColumn("message", message))


def _time_index(tables: dict[str, DataFrame]) -> DataFrame:
    entries = _entries(
        tables,
        "timeindex",
        F.col("first_offset").alias("seg_first"),
        F.col("last_offset").alias("seg_last"),
        F.col("max_timestamp").alias("seg_max_ts"),
    )
    lasts = tables["batches"].select(
        F.col("file").alias("log_file"), F.col("last_offset").alias("offset")
    )
    # Whether some batch of the segment ends at the entry's offset: a semi join and an
    # anti join split the entries (no distinct of the batches, no duplicated entries).
    keys = ["log_file", "offset"]
    joined = (
        entries.join(lasts, keys, "left_semi")
        .withColumn("is_batch_last", F.lit(True))
        .unionByName(
            entries.join(lasts, keys, "left_anti").withColumn(
                "is_batch_last", F.lit(None).cast("boolean")
            )
        )
    )
    message = F.when(
        F.col("seg_first").isNotNull() & F.col("is_batch_last").isNull(),
        F.format_string(
            "time index: entry %d points at offset %d, not the last offset of a batch "
            "of the segment (%d..%d)",
            F.col("entry"),
            F.col("offset"),
            F.col("seg_first"),
            F.col("seg_last"),
        ),
    ).when(
        F.col("seg_max_ts").isNotNull() & (F.col("timestamp") > F.col("seg_max_ts")),
        F.format_string(
            "time index: entry %d timestamp %d is above the segment's largest %d",
            F.col("entry"),
            F.col("timestamp"),
            F.col("seg_max_ts"),
        ),
    )
    return findings_frame(NAME, joined.withColumn("message", message))


def _gaps(tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    order = Window.partitionBy("log_id").orderBy("base_offset")  # log_id: one per log
    batches = live_batches(tables, logs).withColumn("prev_last", F.lag("last_offset").over(order))
    cleaned_to = F.coalesce(F.col("cleaner_offset"), lit_long(-1))
    between = (F.col("base_offset") > F.col("prev_last") + 1) & (
        F.col("base_offset") - 1 >= cleaned_to
    )
    inside = (
        (F.col("magic") == 2)
        & (F.col("records_count") < F.col("last_offset") - F.col("base_offset") + 1)
        & (F.col("last_offset") >= cleaned_to)
    )
    message = F.when(
        between,
        F.format_string(
            "gap: offsets %d..%d are missing outside the cleaned part",
            F.col("prev_last") + 1,
            F.col("base_offset") - 1,
        ),
    ).when(
        inside,
        F.format_string(
            "gap: batch %d..%d holds %d records outside the cleaned part",
            F.col("base_offset"),
            F.col("last_offset"),
            F.col("records_count"),
        ),
    )
    return findings_frame(NAME, batches.withColumn("message", message), offset=F.col("base_offset"))


def _problems(tables: dict[str, DataFrame]) -> DataFrame:
    problems = tables["problems"].withColumn(
        "message",
        F.format_string(
            "problem: %s at %s: %s",
            F.col("kind"),
            F.coalesce(F.col("field"), F.lit("-")),
            F.col("message"),
        ),
    )
    return findings_frame(NAME, problems)


def findings(tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    frames = [
        _crc(tables),
        _offset_index(tables),
        _time_index(tables),
        _gaps(tables, logs),
        _problems(tables),
    ]
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


#: message kind -> metric (counted by run_all from the findings)
KINDS = {
    "crc": "crc_failures",
    "offset index": "offset_index_errors",
    "time index": "time_index_errors",
    "gap": "gaps",
    "problem": "problems",
}


def run(ctx: CheckContext) -> CheckOutput:
    frame = findings(ctx.tables, ctx.logs)
    return CheckOutput(frame, kinds=KINDS, kind_pattern=r"^([a-z ]+):")
