"""A live :class:`PartitionLog` seen as the pure cleaner's inputs.

Theory of operation
-------------------
The algorithm (:mod:`.algorithm`) works on plain data; this module reads it
off a live log, under the caller's partition lock:

* :func:`source_segments`: every segment's ``.log`` bytes, mtime, index sizes
  (as Kafka's ``sizeInBytes``: entries x entry size) and ``.txnindex`` entries;
* :func:`batch_headers`: every v2 batch header, oldest first (a shallow scan;
  legacy entries carry no producer state and are skipped);
* :func:`producer_scan`: the producer facts of
  :mod:`.producers` for that log.
"""

from __future__ import annotations

from collections.abc import Iterator

from lethe_formats.model import BatchHeader

from lethe_reference.cleaner.algorithm import SourceSegment
from lethe_reference.cleaner.producers import ProducerScan, scan_producers
from lethe_reference.storage.log import PartitionLog

__all__ = ["batch_headers", "producer_scan", "source_segments"]

_OFFSET_ENTRY, _TIME_ENTRY = 8, 12


def source_segments(log: PartitionLog) -> list[SourceSegment]:
    found = []
    for segment in log.segments:
        state = segment.state
        found.append(
            SourceSegment(
                base_offset=segment.base_offset,
                data=segment.log.read(0, segment.size),
                last_modified_ms=segment.last_modified_ms(),
                offset_index_bytes=len(state.offset_index) * _OFFSET_ENTRY,
                time_index_bytes=len(state.time_index) * _TIME_ENTRY,
                aborted=tuple(segment.aborted_txns),
                file=str(segment.log.path),
            )
        )
    return found


def batch_headers(log: PartitionLog) -> Iterator[BatchHeader]:
    for segment in log.segments:
        with segment.log.scan(0) as (entries, _scanner, _data):
            for entry in entries:
                if isinstance(entry.header, BatchHeader):
                    yield entry.header


def producer_scan(log: PartitionLog, *, now_ms: int, expiration_ms: int) -> ProducerScan:
    return scan_producers(
        batch_headers(log),
        now_ms=now_ms,
        expiration_ms=expiration_ms,
        log_start_offset=log.log_start_offset,
    )
