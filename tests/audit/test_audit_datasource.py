"""``spark.read.format("kafka-log")``: records and batches of a log dir as DataFrames.

Expected values: golden/codecs per its README and case.json (7 batches of
6/5/7/4/6/4/5 records with codecs none, gzip, snappy, lz4, zstd, snappy,
gzip; 37 records at offsets 0-36), and the planner's packing rules.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import GOLDEN, LOGS
from lethe_tools.audit.datasource import plan
from lethe_tools.audit.discover import Item
from lethe_tools.audit.schemas import BATCHES, RECORDS

CODECS = str(GOLDEN / "codecs")


def test_records_level_gives_every_record_with_the_records_schema(spark: Any) -> None:
    frame = spark.read.format("kafka-log").option("level", "records").load(CODECS)
    assert frame.schema.fieldNames() == RECORDS.fieldNames()
    offsets = sorted(row.offset for row in frame.select("offset").collect())
    assert offsets == list(range(37))


def test_records_is_the_default_level(spark: Any) -> None:
    frame = spark.read.format("kafka-log").load(CODECS)
    assert frame.schema == RECORDS
    assert frame.count() == 37


def test_batches_level_gives_one_row_per_batch_with_its_codec(spark: Any) -> None:
    frame = spark.read.format("kafka-log").option("level", "batches").load(CODECS)
    assert frame.schema.fieldNames() == BATCHES.fieldNames()
    rows = frame.orderBy("base_offset").collect()
    assert [row.compression for row in rows] == [
        "none",
        "gzip",
        "snappy",
        "lz4",
        "zstd",
        "snappy",
        "gzip",
    ]
    assert [row.records_count for row in rows] == [6, 5, 7, 4, 6, 4, 5]
    assert all(row.crc_ok for row in rows)
    assert [row.is_transactional or row.is_control for row in rows] == [False] * 7


def test_paths_option_reads_several_log_dirs_at_once(spark: Any) -> None:
    paths = json.dumps([CODECS, str(GOLDEN / "delete-records")])
    frame = spark.read.format("kafka-log").option("paths", paths).load()
    counts = frame.groupBy("topic").count().collect()
    topics = {row["topic"]: row["count"] for row in counts}
    # delete-records: p0 keeps offsets 16-39, p1 24-35, p2 24-29 in its segments (README).
    assert topics == {"golden-codecs": 37, "golden-delrec": 24 + 12 + 6}


def test_a_partition_dir_alone_can_be_read(spark: Any) -> None:
    frame = spark.read.format("kafka-log").load(str(GOLDEN / "delete-records" / "golden-delrec-2"))
    assert sorted(row.offset for row in frame.collect()) == list(range(24, 30))


def test_table_levels_give_the_other_tables(spark: Any) -> None:
    reader = spark.read.format("kafka-log")
    assert reader.option("level", "segments").load(CODECS).count() == 2
    assert reader.option("level", "problems").load(str(LOGS)).count() == 0
    offsets = reader.option("level", "offsets").load(str(GOLDEN / "consumer-offsets"))
    assert offsets.count() == 9


def test_an_unknown_level_is_refused(spark: Any) -> None:
    with pytest.raises(Exception, match="unknown level 'messages'"):
        spark.read.format("kafka-log").option("level", "messages").load(CODECS).collect()


def _item(size: int, name: str) -> Item:
    return Item("log", name, "/logdir", size=size)


def test_plan_never_splits_a_file_and_balances_bytes() -> None:
    mib = 1 << 20
    items = [_item(size * mib, f"f{size}") for size in (100, 90, 60, 50, 40, 10)]
    bins = plan(items, partition_bytes=150 * mib, min_partitions=1)
    assert sorted(item.path for chosen in bins for item in chosen) == sorted(i.path for i in items)
    assert len(bins) == 3  # 350 MiB in partitions of 150 MiB
    assert max(sum(item.size for item in chosen) for chosen in bins) <= 150 * mib


def test_plan_gives_at_least_min_partitions_when_there_are_enough_files() -> None:
    items = [_item(1 << 30, f"f{n}") for n in range(4)]
    assert len(plan(items, partition_bytes=1 << 40, min_partitions=4)) == 4
    assert len(plan(items[:1], partition_bytes=1 << 40, min_partitions=4)) == 1
    assert plan([], partition_bytes=1, min_partitions=2) == []


def test_plan_rounds_the_count_up_to_a_multiple_of_min_partitions() -> None:
    # 20 files of 100 MiB in partitions of 150 MiB would be 14 tasks; with 8 asked for
    # (4 per core on 2 cores) it is 16, so both cores run 8 tasks and none runs a last
    # task alone; never more tasks than files.
    mib = 1 << 20
    items = [_item(100 * mib, f"f{n:02d}") for n in range(20)]
    bins = plan(items, partition_bytes=150 * mib, min_partitions=8)
    assert len(bins) == 16
    assert sorted(item.path for chosen in bins for item in chosen) == sorted(i.path for i in items)
    assert len(plan(items[:13], partition_bytes=150 * mib, min_partitions=8)) == 13
    assert len(plan(items, partition_bytes=150 * mib, min_partitions=1)) == 14
