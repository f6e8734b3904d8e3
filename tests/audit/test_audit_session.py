"""The audit's local SparkSession settings that the checks' speed depends on."""

from __future__ import annotations

from typing import Any


def test_a_small_shuffle_stays_split_over_every_local_core(spark: Any) -> None:
    # conftest starts local[2]: adaptive execution would coalesce this tiny
    # shuffle into one task; the audit keeps one partition per core.
    from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

    counted = spark.range(1000).groupBy((F.col("id") % 7).alias("k")).count()
    assert counted.rdd.getNumPartitions() == 2
    assert sorted(row["count"] for row in counted.collect()) == [142] + [143] * 6
