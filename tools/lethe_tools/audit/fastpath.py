"""The C walker's rows of plain magic-2 batches as Arrow chunks of the batches and records tables.

Theory of operation
-------------------
:func:`lethe_formats.records.columns.walk_rows` writes one packed row per
batch and per record. Here those bytes are viewed as numpy structured
arrays (the dtype is built from the compiled struct layout) and every table
column is one vectorised expression over them, so no Python object is made
per record::

    walk -> batch rows (B) + record rows (R, each naming its batch b)
    batches chunk: B rows; last_offset = base_offset + last_offset_delta,
                   compression / timestamp_type from the attribute bits
    records chunk: R rows; batch-constant columns (position, producer id,
                   transactional bit, delete horizon) gathered by b

Only batches the walker took arrive here: plain magic-2, not control, CRC
correct, records decoded, so ``crc_ok`` is true, ``is_control`` false and
``control_type`` null. Everything else keeps the record-by-record path of
:mod:`lethe_tools.audit.decode`, with the same columns.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa
from crc32c import crc32c as raw_crc32c
from lethe_formats.compression import decompress as _decompress
from lethe_formats.lz4frame import read_frame
from lethe_formats.model import Compression
from lethe_formats.records.columns import BATCH_FIELDS, RECORD_FIELDS, row_layout, walk_rows

from lethe_tools.audit.arrow import arrow_schema
from lethe_tools.audit.discover import Item

__all__ = ["Walked", "batch_chunk", "record_chunk", "walk"]

#: Record rows per walker call: one flush's worth at most.
CHUNK_RECORDS = 65536
_CODECS = np.array(["none", "gzip", "snappy", "lz4", "zstd"], dtype=object)


@functools.cache
def _dtype(kind: str) -> np.dtype[Any]:
    fields = BATCH_FIELDS if kind == "batch" else RECORD_FIELDS
    offsets, size = row_layout(kind)
    return np.dtype(
        {
            "names": [name for name, _ in fields],
            "formats": [np.dtype("=" + code) for _, code in fields],
            "offsets": [offsets[name] for name, _ in fields],
            "itemsize": size,
        }
    )


def _section(codec: int, section: memoryview) -> Any:
    """A compressed batch's records section (the walker's decompress callback).

    LZ4 goes to Kafka's frame reader directly (``lz4frame.read_frame``, what
    ``compression.decompress`` calls for magic 2), minus the copy of the
    input; other codecs take the full function (snappy's two framings, gzip,
    zstd)."""
    if codec == Compression.LZ4:
        return read_frame(section)
    return _decompress(Compression(codec), section, magic=2)


class Walked:
    """One walker call's result: where it stopped, and its rows as structured arrays."""

    __slots__ = ("batches", "next", "records")

    def __init__(self, next_position: int, batches: bytes, records: bytes) -> None:
        self.next = next_position
        self.batches = np.frombuffer(batches, dtype=_dtype("batch"))
        self.records = np.frombuffer(records, dtype=_dtype("record"))


def walk(data: Any, position: int) -> Walked:
    """The plain batches of ``data`` from ``position`` (at most CHUNK_RECORDS records)."""
    next_position, batches, records = walk_rows(
        data, position, crc32c=raw_crc32c, decompress=_section, max_records=CHUNK_RECORDS
    )
    return Walked(next_position, batches, records)


def _const(value: Any, count: int, kind: pa.DataType) -> Any:
    """``count`` copies of ``value``: a string column from its buffers, else a numpy array.

    (``pa.repeat`` would do, but its first call imports pandas: half a second
    of every fresh task.)"""
    if pa.types.is_string(kind):
        encoded = str(value).encode("utf-8")
        offsets = np.arange(count + 1, dtype=np.int32) * len(encoded)
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(encoded * count)]
        return pa.Array.from_buffers(pa.string(), count, buffers)
    return np.full(count, value, dtype=kind.to_pandas_dtype())


def _horizon(attributes: np.ndarray, base_timestamps: np.ndarray) -> pa.Array:
    """KIP-534's delete horizon: the base timestamp where attribute bit 6 is set, else null."""
    unset = (attributes & 0x40) == 0
    return pa.array(base_timestamps, type=pa.int64(), mask=unset)


def batch_chunk(item: Item, rows: np.ndarray) -> pa.RecordBatch:
    """The batches table's rows for the walked batch ``rows``."""
    count = len(rows)
    attributes = rows["attributes"].astype(np.int32)
    codec = attributes & 0x07
    columns = {
        "topic": _const(item.topic, count, pa.string()),
        "partition": _const(item.partition, count, pa.int32()),
        "file": _const(item.path, count, pa.string()),
        "segment_base_offset": _const(item.base_offset, count, pa.int64()),
        "position": rows["position"],
        "size": rows["size"],
        "base_offset": rows["base_offset"],
        "last_offset": rows["base_offset"] + rows["last_offset_delta"],
        "magic": _const(2, count, pa.int32()),
        "attributes": attributes,
        "compression": pa.array(_CODECS[codec], type=pa.string()),
        "timestamp_type": pa.array(
            np.where(attributes & 0x08, "LogAppendTime", "CreateTime"), type=pa.string()
        ),
        "is_control": (attributes & 0x20) != 0,
        "is_transactional": (attributes & 0x10) != 0,
        "delete_horizon": _horizon(attributes, rows["base_timestamp"]),
        "base_timestamp": rows["base_timestamp"],
        "max_timestamp": rows["max_timestamp"],
        "producer_id": rows["producer_id"],
        "producer_epoch": rows["producer_epoch"].astype(np.int32),
        "base_sequence": rows["base_sequence"],
        "partition_leader_epoch": rows["partition_leader_epoch"],
        "records_count": rows["records_count"],
        "crc": rows["crc"],
        "crc_ok": _const(True, count, pa.bool_()),
    }
    return _chunk("batches", columns)


def record_chunk(item: Item, batches: np.ndarray, rows: np.ndarray) -> pa.RecordBatch:
    """The records table's rows for the walked record ``rows`` of ``batches``."""
    count = len(rows)
    of_batch = rows["batch"]
    attributes = batches["attributes"].astype(np.int32)[of_batch]
    key_size = rows["key_size"]
    value_size = rows["value_size"]
    columns = {
        "topic": _const(item.topic, count, pa.string()),
        "partition": _const(item.partition, count, pa.int32()),
        "file": _const(item.path, count, pa.string()),
        "segment_base_offset": _const(item.base_offset, count, pa.int64()),
        "batch_position": batches["position"][of_batch],
        "offset": rows["offset"],
        "timestamp": rows["timestamp"],
        "key_hash": pa.array(rows["key_hash"], type=pa.int64(), mask=key_size < 0),
        "key_size": key_size,
        "value_size": value_size,
        "is_tombstone": value_size < 0,
        "is_control": (attributes & 0x20) != 0,
        "control_type": pa.nulls(count, type=pa.int32()),
        "headers_count": rows["headers_count"],
        "record_attributes": rows["attributes"],
        "magic": _const(2, count, pa.int32()),
        "is_transactional": (attributes & 0x10) != 0,
        "producer_id": batches["producer_id"][of_batch],
        "delete_horizon": _horizon(attributes, batches["base_timestamp"][of_batch]),
    }
    return _chunk("records", columns)


def _chunk(table: str, columns: dict[str, Any]) -> pa.RecordBatch:
    """``columns`` (Arrow arrays or numpy arrays) as a batch of ``table``'s Arrow schema."""
    schema = arrow_schema(table)
    arrays = [
        value if isinstance(value, pa.Array) else pa.array(np.ascontiguousarray(value), field.type)
        for field, value in zip(schema, (columns[field.name] for field in schema), strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
