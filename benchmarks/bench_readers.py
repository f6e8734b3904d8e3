"""Record readers under comparison, each driven by the same consumer loop.

Theory of operation
-------------------
Every reader gets the segment's bytes and must hand each record to the same
consumer, which touches what an application reads: absolute offset,
absolute timestamp, key, value and headers::

    last = (offset, timestamp, key, value, headers); count += 1

and returns the record count, which the harness compares across readers.

* ``lethe_c`` / ``lethe_python``: ``scan.read_log`` (LogScanner + deep
  decode, C extension or pure Python). lethe's records hold deltas, so the
  loop adds the batch's base offset/timestamp, as any lethe consumer would.
  ``read_log`` also checks every batch CRC (CRC-32C, GB/s); the others do not.
* ``construct``: the normative Construct decoder ``records.decode_log``
  (also checks CRCs). It is slow, so the harness runs it on a slice.
* ``kafka_python``: ``kafka.record.MemoryRecords`` batches, iterated.
* ``aiokafka``: ``aiokafka.record.memory_records.MemoryRecords``, which is
  the Cython ``_crecords`` build unless ``AIOKAFKA_NO_EXTENSIONS`` is set
  (:func:`aiokafka_is_c` says which one ran).

Third-party readers are imported lazily and typed as ``Any``: they ship no
type information the harness needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from lethe_formats.model import RecordBatch
from lethe_formats.records import decode_log
from lethe_formats.records import scan as lethe_scan

__all__ = [
    "READERS",
    "Reader",
    "aiokafka_is_c",
    "read_aiokafka",
    "read_construct",
    "read_kafka_python",
    "read_lethe",
]

Reader = Callable[[bytes], int]


def _consume_lethe(entries: Any) -> int:
    count = 0
    last: tuple[Any, ...] = ()
    for batch in entries:
        if not isinstance(batch, RecordBatch):
            raise TypeError("the benchmark segment holds magic-2 batches only")
        base_offset = batch.header.base_offset
        base_timestamp = batch.header.base_timestamp
        for record in batch.records:
            last = (
                base_offset + record.offset_delta,
                base_timestamp + record.timestamp_delta,
                record.key,
                record.value,
                record.headers,
            )
            count += 1
    del last
    return count


def read_lethe(data: bytes) -> int:
    """lethe's fast path, whichever implementation ``scan`` currently selects."""
    return _consume_lethe(lethe_scan.read_log(data))


def read_construct(data: bytes) -> int:
    """The normative Construct decoder (whole list, then the same loop)."""
    return _consume_lethe(decode_log(data))


def _consume_batches(batches: Any) -> int:
    count = 0
    last: tuple[Any, ...] = ()
    for batch in batches:
        for record in batch:
            last = (record.offset, record.timestamp, record.key, record.value, record.headers)
            count += 1
    del last
    return count


def _next_batches(records: Any) -> Any:
    """Iterate a MemoryRecords through ``has_next``/``next_batch`` (both libraries have them)."""
    while records.has_next():
        yield records.next_batch()


def read_kafka_python(data: bytes) -> int:
    """kafka-python's pure-Python record reader."""
    memory_records = importlib.import_module("kafka.record").MemoryRecords
    return _consume_batches(_next_batches(memory_records(data)))


def read_aiokafka(data: bytes) -> int:
    """aiokafka's record reader (Cython ``_crecords`` when built)."""
    memory_records = importlib.import_module("aiokafka.record.memory_records").MemoryRecords
    return _consume_batches(_next_batches(memory_records(data)))


def aiokafka_is_c() -> bool:
    """True when aiokafka's MemoryRecords is the compiled ``_crecords`` class."""
    memory_records = importlib.import_module("aiokafka.record.memory_records").MemoryRecords
    return "_crecords" in str(memory_records.__module__)


#: name -> reader, in the order the report lists them.
READERS: dict[str, Reader] = {
    "lethe": read_lethe,
    "construct": read_construct,
    "kafka_python": read_kafka_python,
    "aiokafka": read_aiokafka,
}
