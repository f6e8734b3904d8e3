"""Frames several checks share: live logs, their log start and end offsets, findings rows.

Theory of operation
-------------------
Kafka describes a partition's log by its *live* segments (``<20 digits>.log``
in a live ``<topic>-<partition>`` directory); ``.deleted``, ``.cleaned`` and
``.swap`` files and ``-delete``/``-stray``/``-future`` directories are
leftovers the broker removes or replaces. The checks therefore work on:

* :func:`live_logs`: one row per live partition directory with
  ``log_start`` = the log start offset Kafka loads, ``max(checkpoint entry,
  first segment base offset)`` (kafka-facts 1.4: the checkpoint lists only
  partitions whose start is above the first base offset), and ``log_end`` =
  the offset after the last batch (the active segment's base offset when it is
  empty), plus the checkpoint columns;
* :func:`live_files`: one row per live segment file with its log's offsets
  and a small ``log_id`` per log; :func:`share` caches it once per run, with
  the small tables, so each check's join reads memory instead of re-planning
  and re-reading the partitions and segments tables;
* :func:`live_batches` / :func:`live_records`: batches and records of live
  segments joined (broadcast) with :func:`live_files`, so each knows its log
  start offset, cleaner offset and high watermark. A condition on the
  batches' own columns goes *before* that join, where Parquet row-group
  statistics answer it (markers, CRC failures, batches below a bound);
* :func:`check_records`: the live records any check reads (below the log
  start, tombstones, the cleaned part of a compacted log). ``run_all``
  caches it once, so the records table is scanned once for every check;
  each check still applies its own full condition to it.

Joins go through the ``file`` column (``segments.file`` is unique per
``.log`` file, with the topic and partition) because batches and records do
not carry the log dir.
:func:`findings_frame` turns a frame with a nullable ``message`` column into
the uniform findings columns (:data:`~.model.FINDING_COLUMNS`), keeping only
the rows whose message is set.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.model import FINDING_COLUMNS

__all__ = [
    "LIVE_FILES",
    "LOG_KEYS",
    "RECORD_COLUMNS",
    "check_records",
    "findings_frame",
    "lit_long",
    "live_batches",
    "live_files",
    "live_logs",
    "live_records",
    "live_segments",
    "offset_bound",
    "release",
    "share",
]

LOG_KEYS = ["logdir", "topic", "partition"]


def lit_long(value: int) -> Column:
    """A long literal (a Python int literal would be an int column below 2**31)."""
    return F.lit(value).cast("long")


def live_segments(tables: dict[str, DataFrame]) -> DataFrame:
    """Live ``.log`` files of live partition directories."""
    live_dirs = tables["partitions"].where(F.col("dir_kind") == "live").select(*LOG_KEYS)
    segments = tables["segments"].where(F.col("extra_suffix") == "")
    return segments.join(live_dirs, LOG_KEYS, "left_semi")


def live_logs(tables: dict[str, DataFrame]) -> DataFrame:
    """One row per live log: checkpoints, ``log_start``, ``log_end``, live segment bytes."""
    ends = (
        live_segments(tables)
        .groupBy(*LOG_KEYS)
        .agg(
            F.max(F.col("last_offset") + 1).alias("_after_last"),
            F.max("base_offset").alias("_active_base"),
            F.sum("size").alias("live_bytes"),
        )
    )
    partitions = tables["partitions"].where(F.col("dir_kind") == "live")
    first = F.col("first_base_offset")
    return (
        partitions.join(ends, LOG_KEYS, "left")
        .withColumn(
            "log_start",
            F.when(
                F.col("log_start_offset").isNotNull() & first.isNotNull(),
                F.greatest(F.col("log_start_offset"), first),
            ).otherwise(F.coalesce(F.col("log_start_offset"), first)),
        )
        .withColumn("log_end", F.greatest(F.col("_after_last"), F.col("_active_base")))
        .withColumn("live_bytes", F.coalesce(F.col("live_bytes"), lit_long(0)))
        .drop("_after_last", "_active_base")
    )


#: Key under which :func:`share` keeps the cached :func:`live_files` frame in a tables dict.
LIVE_FILES = "live_files"
#: The tables :func:`share` caches whole: a row per partition, segment, checkpoint entry,
#: commit or problem.
_SMALL_TABLES = ("partitions", "segments", "checkpoints", "offsets", "problems")
#: Columns of the records table the record-level checks read (see :func:`check_records`).
RECORD_COLUMNS = (
    "topic",
    "partition",
    "file",
    "batch_position",
    "offset",
    "timestamp",
    "key_hash",
    "key_size",
    "value_size",
    "is_tombstone",
    "is_control",
    "is_transactional",
    "producer_id",
    "magic",
    "delete_horizon",
)


def live_files(tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    """One row per live ``.log`` file with its log's offsets and ``log_id``: the join side
    of every live batch or record (tiny: one row per segment). The copy :func:`share` cached
    is used when ``tables`` holds one."""
    shared = tables.get(LIVE_FILES)
    if shared is not None:
        return shared
    files = live_segments(tables).select("file", *LOG_KEYS, F.col("is_active").alias("in_active"))
    # log_id: a small number per log (its rank by the log keys), so that a window over
    # a log's batches partitions and sorts by one int instead of three columns whose
    # first (the log dir) is the same string in every row.
    log_id = F.dense_rank().over(Window.orderBy(*LOG_KEYS)).alias("log_id")
    columns = logs.select(
        *LOG_KEYS, "log_start", "log_end", "cleaner_offset", "high_watermark", log_id
    )
    return files.join(columns, LOG_KEYS)


def share(tables: dict[str, DataFrame], logs: DataFrame) -> dict[str, DataFrame]:
    """``tables`` plus the cached :func:`live_files` frame (filled on first use).

    The small tables (one row per partition, segment, checkpoint entry,
    commit or problem) are cached too: most checks join them, and a scan of a
    cached table costs no file listing and no Parquet footers."""
    shared = dict(tables)
    for name in _SMALL_TABLES:
        if name in shared:
            shared[name] = shared[name].cache()
    shared[LIVE_FILES] = live_files(shared, logs).cache()
    return shared


def release(tables: dict[str, DataFrame]) -> None:
    """Unpersist what :func:`share` cached."""
    for name in (*_SMALL_TABLES, LIVE_FILES):
        if name in tables:
            tables[name].unpersist()


def _with_log(frame: DataFrame, tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    """``frame`` (rows of live files only) with its file's log columns.

    Joined on ``file`` and the topic and partition, as the rows' own
    columns say, so a row is matched to its log exactly as by the log keys."""
    return frame.join(F.broadcast(live_files(tables, logs)), ["file", "topic", "partition"])


def live_batches(
    tables: dict[str, DataFrame], logs: DataFrame, where: Column | None = None
) -> DataFrame:
    """Batches of live segments with their log's offsets (see the module docstring).

    ``where``, a condition on the batches' own columns, is applied before the
    join: Parquet row-group statistics answer it (a marker or CRC condition
    skips most of the table), and fewer rows reach the join."""
    batches = tables["batches"] if where is None else tables["batches"].where(where)
    return _with_log(batches, tables, logs)


def live_records(tables: dict[str, DataFrame], logs: DataFrame) -> DataFrame:
    """Records of live segments with their log's offsets."""
    return _with_log(tables["records"], tables, logs)


def check_records(
    tables: dict[str, DataFrame], logs: DataFrame, bound: int | None = None
) -> DataFrame:
    """Live records below the log start, tombstones, and records of the cleaned part.

    A superset of the rows every record-level condition of the checks selects
    (below-log-start: ``offset < log_start``; delete-horizon: tombstones;
    compaction: ``offset < cleaner_offset``), with the columns they read.
    ``bound``, when given, must be at least every log's ``log_start`` and
    ``cleaner_offset`` (:func:`offset_bound`): records are then first filtered
    by ``is_tombstone OR offset < bound``, which Parquet row-group statistics
    answer before the join, so most of the records table is never decoded.
    """
    records = tables["records"].select(*RECORD_COLUMNS)
    if bound is not None:
        records = records.where(F.col("is_tombstone") | (F.col("offset") < lit_long(bound)))
    cleaned = F.col("cleaner_offset").isNotNull() & (F.col("offset") < F.col("cleaner_offset"))
    wanted = (F.col("offset") < F.col("log_start")) | F.col("is_tombstone") | cleaned
    return _with_log(records, tables, logs).where(wanted)


def offset_bound(logs: DataFrame) -> int:
    """The largest ``log_start`` or ``cleaner_offset`` of any live log (0 with none)."""
    row = logs.agg(
        F.max("log_start").alias("start"), F.max("cleaner_offset").alias("cleaner")
    ).first()
    if row is None:
        return 0
    return max(int(row["start"] or 0), int(row["cleaner"] or 0))


def findings_frame(check: str, frame: DataFrame, **columns: Column) -> DataFrame:
    """The rows of ``frame`` whose ``message`` is set, as findings of ``check``.

    ``columns`` supplies finding columns ``frame`` lacks or names differently;
    a finding column found nowhere is null (``bytes``/``records`` 0).
    """
    present = set(frame.columns)
    chosen: list[Column] = [F.lit(check).alias("check")]
    for name in FINDING_COLUMNS[1:]:
        if name in columns:
            column = columns[name]
        elif name in present:
            column = F.col(name)
        elif name in ("bytes", "records"):
            column = lit_long(0)
        else:
            column = F.lit(None)
        kind = {"partition": "int", "message": "string", "topic": "string", "file": "string"}
        chosen.append(column.cast(kind.get(name, "long")).alias(name))
    return frame.where(F.col("message").isNotNull()).select(*chosen)
