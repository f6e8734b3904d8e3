"""The ``kafka-log`` Spark data source: Kafka log directories as DataFrames.

Usage::

    from lethe_tools.audit.datasource import register
    register(spark)
    records = spark.read.format("kafka-log").option("level", "records").load("/var/kafka-logs")
    batches = spark.read.format("kafka-log").option("level", "batches").load(path)

Options
-------
``path`` / ``load(path)``   a log dir, a folder of log dirs, or one partition dir
``paths``                    a JSON list of such paths (several LOGDIRs at once)
``level``                    ``records`` (default) | ``batches`` | any audit table name
                             (``segments``, ``indexes``, ``checkpoints``, ``offsets``,
                             ``partitions``, ``problems``) | ``audit`` (all tables at once)
                             | ``write`` (the job's: tasks write Parquet, see below)
``out``                      level ``write``: the folder (or URI) the tables go to
``partitionBytes``           bytes of files per input partition (default 128 MiB)
``minPartitions``            at least this many input partitions when there are enough files,
                             and a multiple of it (pass a multiple of the cores)
``rowsPerBatch``             rows per Arrow batch a task yields (default 65536)

Theory of operation
-------------------
Planning (``partitions()``, on the driver side) runs :func:`discover`, which
lists directories and stats files but never reads one, and packs the items
into input partitions: a file is never split, larger files are placed first,
each into the partition with the fewest bytes so far (so a log dir of 64 MiB
segments gives one task per segment, and the tiny index and checkpoint files
fill in). Each task (``read()``) decodes its items with
:func:`lethe_tools.audit.decode.decode_item` and yields Arrow record batches
built column-wise from the row buffers; nothing is converted row by row.

The ``write`` level is what ``lethe audit`` runs: each task decodes its items
once and writes every table's rows to ``OUT/<table>/part-<task>.parquet``
itself (:mod:`lethe_tools.audit.sink`); the DataFrame holds only what was
written, a row ``(table, file, rows)`` per Parquet file, so no bulk row
crosses into the JVM. Reading it twice writes the same files again.

The ``audit`` level returns one DataFrame whose columns are the tables but
``records``, each a nullable struct with that table's schema; a row has
exactly one non-null column (segments decoded to the last record for their
problems and offsets, without records rows). Any single table level returns
that table's schema directly; faults met there are dropped except at
``problems`` and ``audit`` (they never fail the read).
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import LongType, StringType, StructField, StructType

from lethe_tools.audit.arrow import to_record_batch
from lethe_tools.audit.decode import decode_item
from lethe_tools.audit.discover import Item, discover
from lethe_tools.audit.rows import Columns, Tables
from lethe_tools.audit.schemas import TABLES
from lethe_tools.audit.sink import write_items

__all__ = [
    "AUDIT_SCHEMA",
    "AUDIT_TABLES",
    "LEVELS",
    "WRITTEN",
    "KafkaLogDataSource",
    "plan",
    "register",
]

FORMAT = "kafka-log"
#: Tables the ``audit`` level returns (records rows have their own level, ``records``).
AUDIT_TABLES = tuple(name for name in TABLES if name != "records")
#: The ``audit`` level's schema: one nullable struct column per table but records.
AUDIT_SCHEMA = StructType([StructField(name, TABLES[name], True) for name in AUDIT_TABLES])
#: The ``write`` level's schema: one row per Parquet file a task wrote.
WRITTEN = StructType(
    [
        StructField("table", StringType(), False),
        StructField("file", StringType(), False),
        StructField("rows", LongType(), False),
    ]
)
LEVELS = ("audit", "write", *TABLES)
_SMALL_FILE_COST = 64 * 1024  # planning weight of an index/checkpoint: opening costs too
_DEFAULT_PARTITION_BYTES = 128 * 1024 * 1024
_DEFAULT_ROWS = 65536

#: level -> (item kinds it decodes, decode level)
_ITEMS: dict[str, tuple[frozenset[str] | None, str]] = {
    "records": (frozenset({"log"}), "records"),
    "batches": (frozenset({"log"}), "batches"),
    "segments": (frozenset({"log"}), "batches"),
    "offsets": (frozenset({"log"}), "validate"),
    "indexes": (frozenset({"index", "timeindex", "txnindex"}), "batches"),
    "checkpoints": (frozenset({"checkpoint", "leader-epoch"}), "batches"),
    "partitions": (frozenset({"partition"}), "batches"),
    "problems": (None, "validate"),
    "audit": (None, "validate"),
    "write": (None, "all"),
}


class FilesPartition(InputPartition):
    """An input partition: the items one task decodes."""

    def __init__(self, items: list[Item], index: int = 0) -> None:
        super().__init__(len(items))
        self.items = items
        self.index = index


def _level(options: Any) -> str:
    level = str(options.get("level", "records")).lower()
    if level not in LEVELS:
        raise ValueError(f"kafka-log: unknown level {level!r}; levels: {', '.join(LEVELS)}")
    return level


def _paths(options: Any) -> list[str]:
    if "paths" in options:
        paths = json.loads(options["paths"])
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ValueError("kafka-log: option paths must be a JSON list of strings")
        return paths
    if "path" not in options:
        raise ValueError("kafka-log: give a path: load(PATH) or option('paths', JSON list)")
    return [str(options["path"])]


def _cost(item: Item) -> int:
    return max(item.size, _SMALL_FILE_COST) if item.kind == "log" else _SMALL_FILE_COST


def plan(items: list[Item], partition_bytes: int, min_partitions: int) -> list[list[Item]]:
    """Pack items into lists: whole files, largest first, onto the lightest list so far.

    The count is a multiple of ``min_partitions`` (the job passes a multiple of
    the cores), so no core is left to run a last task alone while the others wait."""
    if not items:
        return []
    total = sum(_cost(item) for item in items)
    wanted = max(min_partitions, -(-total // max(partition_bytes, 1)))
    step = max(min_partitions, 1)
    count = max(1, min(-(-wanted // step) * step, len(items)))  # a multiple, if enough items
    heap = [(0, index) for index in range(count)]
    bins: list[list[tuple[int, Item]]] = [[] for _ in range(count)]
    ranked = sorted(enumerate(items), key=lambda pair: -_cost(pair[1]))
    for order, item in ranked:
        load, index = heapq.heappop(heap)
        bins[index].append((order, item))
        heapq.heappush(heap, (load + _cost(item), index))
    return [[item for _, item in sorted(chosen)] for chosen in bins if chosen]


class KafkaLogReader(DataSourceReader):
    """Plans input partitions from a listing and decodes them in tasks."""

    def __init__(self, options: Any) -> None:
        self.level = _level(options)
        self.paths = _paths(options)
        self.partition_bytes = int(options.get("partitionBytes", _DEFAULT_PARTITION_BYTES))
        self.min_partitions = int(options.get("minPartitions", 1))
        self.rows_per_batch = int(options.get("rowsPerBatch", _DEFAULT_ROWS))
        self.out = str(options.get("out", ""))
        if self.level == "write" and not self.out:
            raise ValueError("kafka-log: level write needs option out (the tables' folder)")

    def partitions(self) -> list[InputPartition]:
        kinds, _ = _ITEMS[self.level]
        items = [
            item
            for item in discover(self.paths).items
            if (kinds is None or item.kind in kinds)
            and (self.level != "offsets" or item.topic == "__consumer_offsets")
        ]
        packed = plan(items, self.partition_bytes, self.min_partitions)
        parts: list[InputPartition] = [
            FilesPartition(chosen, index) for index, chosen in enumerate(packed)
        ]
        return parts or [FilesPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FilesPartition), "partitions() made every partition"
        _, decode_level = _ITEMS[self.level]
        if self.level == "write":
            yield _written(write_items(partition.items, self.out, partition.index))
            return
        out = Tables()
        for item in partition.items:
            for _ in decode_item(item, decode_level, out):
                if out.count >= self.rows_per_batch:
                    yield from self._flush(out)
            if out.count >= self.rows_per_batch:
                yield from self._flush(out)
        yield from self._flush(out)

    def _flush(self, out: Tables) -> Iterator[pa.RecordBatch]:
        if self.level == "audit":
            for columns in out.all():
                if columns.table not in AUDIT_TABLES:
                    columns.discard()
                elif columns.count:
                    yield _union_batch(columns)
            return
        for columns in out.all():
            if columns.table == self.level and columns.count:
                yield to_record_batch(columns)
            else:
                columns.discard()  # rows of other tables are not part of this level


def _written(files: list[tuple[str, str, int]]) -> pa.RecordBatch:
    """The ``write`` level's rows: (table, file, rows) per Parquet file a task wrote."""
    arrays = [
        pa.array([table for table, _, _ in files], type=pa.string()),
        pa.array([file for _, file, _ in files], type=pa.string()),
        pa.array([rows for _, _, rows in files], type=pa.int64()),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=to_arrow_schema(WRITTEN))


def _union_batch(columns: Columns) -> pa.RecordBatch:
    """A batch of the audit schema whose only non-null column is ``columns.table``."""
    count = columns.count
    table = to_record_batch(columns)
    schema = to_arrow_schema(AUDIT_SCHEMA)
    arrays = []
    for field in schema:
        if field.name == columns.table:
            arrays.append(pa.StructArray.from_arrays(table.columns, fields=list(table.schema)))
        else:
            arrays.append(pa.nulls(count, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafka-log")``: see the module docstring for options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        level = _level(self.options)
        if level == "write":
            return WRITTEN
        return AUDIT_SCHEMA if level == "audit" else TABLES[level]

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaLogReader(self.options)


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kafka-log")`` available on this session."""
    spark.dataSource.register(KafkaLogDataSource)


def absolute(paths: list[str]) -> str:
    """The ``paths`` option value for ``paths`` (absolute, so executors resolve them alike)."""
    return json.dumps([os.path.abspath(path) for path in paths])
