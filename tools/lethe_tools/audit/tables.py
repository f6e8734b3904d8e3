"""The audit tables as DataFrames: one read of the log dirs, split into the eight tables.

Theory of operation
-------------------
The ``kafka-log`` source at level ``audit`` decodes every discovered file
(segments to the last record, for their problems and committed offsets) and
returns a DataFrame with one nullable struct column per table but records
(exactly one non-null per row). It is persisted (memory, spilling to disk), so
writing seven tables reads the files once, not seven times; it is small, about
one row per batch. The records table, a row per record, is read on its own
and goes straight to Parquet without a cache::

    kafka-log(level=audit) --persist--> union
        union.where(batches IS NOT NULL).select("batches.*")   -> batches
        ...                                                    -> each table
        partitions LEFT JOIN pivot(checkpoints)                 -> partitions
    kafka-log(level=records)                                    -> records

The partitions rows decoded in tasks leave the four checkpoint columns null:
root checkpoint files are separate files, decoded by other tasks, so their
values are joined in here by (logdir, topic, partition). Only live partition
dirs get them, because Kafka's checkpoints describe the live log of a
topic-partition, not a ``-delete``/``-stray``/``-future`` copy.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.datasource import AUDIT_TABLES, FORMAT, absolute
from lethe_tools.audit.schemas import PARTITIONS

__all__ = ["CHECKPOINT_COLUMNS", "AuditRead", "read_tables", "with_checkpoints"]

#: partitions column <- root checkpoint file
CHECKPOINT_COLUMNS = {
    "log_start_offset": "log-start-offset-checkpoint",
    "recovery_point": "recovery-point-offset-checkpoint",
    "high_watermark": "replication-offset-checkpoint",
    "cleaner_offset": "cleaner-offset-checkpoint",
}
_KEYS = ["logdir", "topic", "partition"]


class AuditRead:
    """The persisted union read and the tables split from it."""

    def __init__(self, union: DataFrame, records: DataFrame) -> None:
        self.union = union
        self.tables: dict[str, DataFrame] = {
            name: union.where(F.col(name).isNotNull()).select(f"{name}.*") for name in AUDIT_TABLES
        }
        self.tables["records"] = records
        self.tables["partitions"] = with_checkpoints(
            self.tables["partitions"], self.tables["checkpoints"]
        )

    def release(self) -> None:
        self.union.unpersist()


def read_tables(
    spark: SparkSession,
    paths: list[str],
    *,
    min_partitions: int | None = None,
    partition_bytes: int | None = None,
) -> AuditRead:
    """Discover ``paths`` and return the persisted read with the eight tables."""
    reader = spark.read.format(FORMAT).option("paths", absolute(paths))
    parallelism = spark.sparkContext.defaultParallelism
    reader = reader.option("minPartitions", str(min_partitions or 2 * parallelism))
    if partition_bytes is not None:
        reader = reader.option("partitionBytes", str(partition_bytes))
    union = reader.option("level", "audit").load().persist(StorageLevel.MEMORY_AND_DISK)
    records = reader.option("level", "records").load()
    return AuditRead(union, records)


def with_checkpoints(partitions: DataFrame, checkpoints: DataFrame) -> DataFrame:
    """``partitions`` with its checkpoint columns filled from the root checkpoint entries."""
    kinds: list[bool | float | int | str] = list(CHECKPOINT_COLUMNS.values())
    pivot = (
        checkpoints.where(F.col("kind").isin(kinds))
        .groupBy(*_KEYS)
        .pivot("kind", kinds)
        .agg(F.max("offset"))
    )
    for column, kind in CHECKPOINT_COLUMNS.items():
        pivot = pivot.withColumnRenamed(kind, f"_{column}")
    joined = partitions.drop(*CHECKPOINT_COLUMNS).join(pivot, on=_KEYS, how="left")
    live = F.col("dir_kind") == F.lit("live")
    filled = [
        F.when(live, F.col(f"_{column}")).cast("long").alias(column)
        for column in CHECKPOINT_COLUMNS
    ]
    others = [F.col(name) for name in PARTITIONS.fieldNames() if name not in CHECKPOINT_COLUMNS]
    return joined.select(*others, *filled).select(*PARTITIONS.fieldNames())
