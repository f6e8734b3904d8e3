"""Arrow forms of the audit tables: their schemas, and the conversion of a row buffer.

Theory of operation
-------------------
A :class:`~lethe_tools.audit.rows.Columns` buffer holds Arrow chunks (rows the
C walker produced as columns already) followed by listed rows (one Python
list per column, batch-constant columns as runs). :func:`listed_batch` turns
the listed rows into one Arrow batch: one ``pa.array`` call per column, runs
expanded with a numpy ``repeat`` index. :func:`to_table` (Parquet writers)
and :func:`to_record_batch` (the ``kafka-log`` data source) join the chunks
and the listed rows in that order. The schemas are spelled out from
``schemas.TABLES`` with Spark's type mapping.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa

from lethe_tools.audit.rows import Columns
from lethe_tools.audit.schemas import TABLES

__all__ = ["arrow_schema", "listed_batch", "to_record_batch", "to_table"]

_ARROW_TYPES = {
    "string": pa.string(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "boolean": pa.bool_(),
}


@functools.cache
def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of an audit table: schemas.TABLES with Spark's type mapping.

    Spelled out for the four types the tables use (pyspark's own converter
    imports pandas, a second of a task's time)."""
    fields = [
        pa.field(field.name, _ARROW_TYPES[field.dataType.simpleString()], field.nullable)
        for field in TABLES[table].fields
    ]
    return pa.schema(fields)


def to_table(columns: Columns) -> pa.Table:
    """The buffered rows of ``columns`` (chunks, then listed rows); the buffer starts empty."""
    schema = arrow_schema(columns.table)
    chunks = columns.take_chunks()
    if columns.listed or not chunks:
        chunks.append(listed_batch(columns))
    return pa.Table.from_batches(chunks, schema=schema)


def to_record_batch(columns: Columns) -> pa.RecordBatch:
    """The buffered rows of ``columns`` as one Arrow batch; the buffer starts empty again."""
    chunks = columns.take_chunks()
    if not chunks:
        return listed_batch(columns)
    if columns.listed:
        chunks.append(listed_batch(columns))
    table = pa.Table.from_batches(chunks, schema=arrow_schema(columns.table)).combine_chunks()
    return table.to_batches(max_chunksize=table.num_rows)[0]


def listed_batch(columns: Columns) -> pa.RecordBatch:
    """The listed (Python) rows of ``columns`` as one Arrow batch; they leave the buffer."""
    schema = arrow_schema(columns.table)
    data, runs = columns.take()
    arrays = []
    for field in schema:
        values = pa.array(data[field.name], type=field.type)
        lengths = runs.get(field.name)
        if lengths is not None:  # one value per run: repeat each by its run length
            values = values.take(np.repeat(np.arange(len(lengths)), lengths))
        arrays.append(values)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
