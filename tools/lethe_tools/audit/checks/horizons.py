"""Check ``delete-horizon``: tombstones and markers past their horizon, tombstones without one.

Definition
----------
KIP-534 (kafka-facts 4.3): the first cleaning that keeps a tombstone or a
transaction marker with no data left gives its magic-2 batch a delete horizon
(attribute bit 6, the horizon in ``baseTimestamp``); a later cleaning whose
current time is **at or after** the horizon removes it. A **finding** is,
in a live segment:

* ``tombstone past horizon``: a record with a null value (not a control
  record) whose batch horizon is ``<= now``: the next cleaning must drop it,
  so it survives only because the log was not cleaned since;
* ``marker past horizon``: a control batch whose horizon is ``<= now``;
* ``tombstone without horizon``: a magic-2 tombstone in the cleaned part of a
  compacted log (offset below the partition's ``cleaner-offset-checkpoint``
  entry) whose batch has no horizon. Kafka 3.1+ sets one on every tombstone
  it keeps, so this is a log cleaned by an older broker or by a faulty one,
  and nothing bounds how long the tombstone stays.

``records`` is 1 per record finding and the batch's record count for a
marker; ``bytes`` is 0 (a tombstone's space is freed with its segment's
rewrite, not by itself).

Metrics: the count of each kind, and the age distribution of every tombstone
still on disk (``now`` minus the record's timestamp), plotted by the report.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from lethe_tools.audit.checks.context import CheckContext, CheckOutput
from lethe_tools.audit.checks.frames import findings_frame, lit_long, live_batches, live_records
from lethe_tools.audit.checks.model import HistogramBucket

__all__ = ["AGE_BUCKETS", "NAME", "TITLE", "age_histogram", "findings", "run"]

NAME = "delete-horizon"
TITLE = "Tombstones and transaction markers past their delete horizon, tombstones without one"

_MIN, _HOUR, _DAY = 60_000, 3_600_000, 86_400_000
#: (label, low, high) in ms of age; high None = no upper bound.
AGE_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("< 1 min", 0, _MIN),
    ("1 min - 1 h", _MIN, _HOUR),
    ("1 h - 1 d", _HOUR, _DAY),
    ("1 d - 7 d", _DAY, 7 * _DAY),
    ("7 d - 30 d", 7 * _DAY, 30 * _DAY),
    (">= 30 d", 30 * _DAY, None),
)


def _record_findings(records: DataFrame, now_ms: int) -> DataFrame:
    tombstone = F.col("is_tombstone") & ~F.col("is_control")
    horizon = F.col("delete_horizon")
    cleaned = F.col("cleaner_offset").isNotNull() & (F.col("offset") < F.col("cleaner_offset"))
    message = F.when(
        tombstone & horizon.isNotNull() & (horizon <= lit_long(now_ms)),
        F.format_string("tombstone past horizon %d (now %d)", horizon, lit_long(now_ms)),
    ).when(
        tombstone & horizon.isNull() & (F.col("magic") == 2) & cleaned,
        F.format_string(
            "tombstone without horizon in the cleaned part (cleaner offset %d)",
            F.col("cleaner_offset"),
        ),
    )
    return findings_frame(
        NAME,
        records.withColumn("message", message),
        position=F.col("batch_position"),
        records=lit_long(1),
    )


def _past_horizon(now_ms: int) -> Column:
    """A control batch whose delete horizon is at or before ``now``."""
    horizon = F.col("delete_horizon")
    return F.col("is_control") & horizon.isNotNull() & (horizon <= lit_long(now_ms))


def _marker_findings(batches: DataFrame, now_ms: int) -> DataFrame:
    horizon = F.col("delete_horizon")
    message = F.when(
        _past_horizon(now_ms),
        F.format_string("marker past horizon %d (now %d)", horizon, lit_long(now_ms)),
    )
    return findings_frame(
        NAME,
        batches.withColumn("message", message),
        offset=F.col("base_offset"),
        records=F.col("records_count"),
    )


def findings(
    tables: dict[str, DataFrame], logs: DataFrame, now_ms: int, records: DataFrame | None = None
) -> DataFrame:
    """Record findings (tombstones) and batch findings (markers), one frame.

    ``records``: live records with their log's columns (default: all of them)."""
    records = live_records(tables, logs) if records is None else records
    batches = live_batches(tables, logs, _past_horizon(now_ms))  # markers are few: filter first
    return _record_findings(records, now_ms).unionByName(_marker_findings(batches, now_ms))


def age_histogram(records: DataFrame, now_ms: int) -> list[HistogramBucket]:
    """Tombstones on disk by age; a timestamp after ``now`` counts in the first bucket."""
    age = F.greatest(lit_long(now_ms) - F.col("timestamp"), lit_long(0))
    label = F.lit(AGE_BUCKETS[-1][0])
    for name, _low, high in reversed(AGE_BUCKETS[:-1]):
        assert high is not None
        label = F.when(age < lit_long(high), F.lit(name)).otherwise(label)
    tombstones = records.where(F.col("is_tombstone") & ~F.col("is_control"))
    counts = {
        row["bucket"]: int(row["n"])
        for row in tombstones.groupBy(label.alias("bucket"))
        .agg(F.count(F.lit(1)).alias("n"))
        .collect()
    }
    return [HistogramBucket(n, low, high, counts.get(n, 0)) for n, low, high in AGE_BUCKETS]


#: message kind -> metric (counted by run_all from the findings)
KINDS = {
    "tombstone past horizon": "tombstones_past_horizon",
    "marker past horizon": "markers_past_horizon",
    "tombstone without horizon": "tombstones_without_horizon",
}


def run(ctx: CheckContext) -> CheckOutput:
    records = ctx.live_records()
    frame = findings(ctx.tables, ctx.logs, ctx.now_ms, records)
    pattern = "^(" + "|".join(KINDS) + ")"
    output = CheckOutput(frame, kinds=KINDS, kind_pattern=pattern)
    output.metrics["tombstone_ages"] = age_histogram(records, ctx.now_ms)
    return output
