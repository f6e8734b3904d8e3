"""Task side of the job: decode a task's files once and write every table's Parquet part directly.

Theory of operation
-------------------
Routing millions of records rows from the Python workers through the JVM
(Arrow -> Spark rows -> a cached union -> eight Parquet writes, each scanning
the cache) cost more than decoding them. A task of the job instead decodes
its items once at level ``all`` (:func:`lethe_tools.audit.decode.decode_item`)
and appends the buffered rows, whenever ``rows_per_group`` of them are
waiting, to one Parquet file per table with pyarrow::

    task i:  items --decode_item(level all)--> Tables (column lists)
                   --to_table--> ParquetWriter(OUT/<table>/part-<i>.parquet)
             returns [(table, file, rows)]          (a few small rows to the driver)

Only the counts travel back. The file name depends on the input partition
alone, so a retried task overwrites its own earlier attempt instead of
adding rows twice. Every table, partitions included, is complete when the
tasks end (a partitions row carries its checkpoint columns, read in the task:
:mod:`lethe_tools.audit.files`). The output may be a local folder or any
URI pyarrow has a file system for (``hdfs://``, ``s3://``), as long as every
executor can reach it.

The conversion of a :class:`Columns` buffer to Arrow lives in
:mod:`lethe_tools.audit.arrow`, shared with the ``kafka-log`` data source.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from lethe_tools.audit.arrow import arrow_schema, to_table
from lethe_tools.audit.decode import decode_item
from lethe_tools.audit.discover import Item
from lethe_tools.audit.rows import Columns, Tables

__all__ = [
    "arrow_schema",
    "clear",
    "filesystem",
    "table_dir",
    "write_empty",
    "write_items",
]

_ROWS_PER_GROUP = 65536


def _dictionary_columns(table: str) -> list[str]:
    """The string columns: dictionary-encoded (a topic or file name repeats per row).

    Numbers stay plain: a dictionary of offsets, timestamps or key hashes grows
    until the writer abandons it, after hashing every value for nothing; this
    halves the records table's write time."""
    return [field.name for field in arrow_schema(table) if pa.types.is_string(field.type)]


def filesystem(out: str) -> tuple[pafs.FileSystem, str]:
    """(pyarrow file system, path in it) for a local folder or a URI such as ``hdfs://``."""
    if "://" in out:
        fs, path = pafs.FileSystem.from_uri(out)
        return fs, path
    return pafs.LocalFileSystem(), os.path.abspath(out)


def table_dir(base: str, table: str) -> str:
    """Folder of ``table``'s Parquet files."""
    return f"{base}/{table}"


class _Writers:
    """One ParquetWriter per table, opened at the table's first rows."""

    def __init__(self, out: str, part: int) -> None:
        self.fs, self.base = filesystem(out)
        self.name = f"part-{part:05d}.parquet"
        self.open: dict[str, pq.ParquetWriter] = {}
        self.rows: dict[str, int] = {}

    def write(self, columns: Columns) -> None:
        if not columns.count:
            return
        table = columns.table
        writer = self.open.get(table)
        if writer is None:
            folder = table_dir(self.base, table)
            self.fs.create_dir(folder, recursive=True)
            writer = pq.ParquetWriter(
                f"{folder}/{self.name}",
                arrow_schema(table),
                filesystem=self.fs,
                use_dictionary=_dictionary_columns(table),
            )
            self.open[table] = writer
        self.rows[table] = self.rows.get(table, 0) + columns.count
        writer.write_table(to_table(columns))

    def close(self) -> list[tuple[str, str, int]]:
        for writer in self.open.values():
            writer.close()
        return [
            (table, f"{table_dir(self.base, table)}/{self.name}", self.rows[table])
            for table in self.open
        ]


def write_items(
    items: Iterable[Item], out: str, part: int, rows_per_group: int = _ROWS_PER_GROUP
) -> list[tuple[str, str, int]]:
    """Decode ``items`` and write their rows under ``out``; returns (table, file, rows) per file."""
    writers = _Writers(out, part)
    buffered = Tables()
    try:
        for item in items:
            for _ in decode_item(item, "all", buffered):
                if buffered.count >= rows_per_group:
                    _flush(buffered, writers, rows_per_group)
        _flush(buffered, writers, 0)
    finally:
        written = writers.close()
    return written


def _flush(buffered: Tables, writers: _Writers, full: int) -> None:
    """Write the tables holding an eighth of ``full`` rows or more (``full`` 0: every one).

    Small tables wait, so their row groups are not a few rows each; the
    buffers stay bounded by about ``full`` rows in all."""
    for columns in buffered.all():
        if columns.count and columns.count >= full // 8:
            writers.write(columns)


def write_empty(out: str, tables: Iterable[str]) -> None:
    """An empty Parquet file with the schema for each of ``tables`` (no task wrote rows)."""
    fs, base = filesystem(out)
    for table in tables:
        folder = table_dir(base, table)
        fs.create_dir(folder, recursive=True)
        pq.write_table(
            arrow_schema(table).empty_table(), f"{folder}/part-empty.parquet", filesystem=fs
        )


def clear(out: str, tables: Iterable[str]) -> None:
    """Remove an earlier run's files of ``tables`` under ``out``."""
    fs, base = filesystem(out)
    for folder in [table_dir(base, table) for table in tables]:
        if fs.get_file_info(folder).type != pafs.FileType.NotFound:
            fs.delete_dir(folder)
