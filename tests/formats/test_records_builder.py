"""The builders rebuild Kafka's own batches byte for byte from what they hold.

Inputs are the record values and batch properties (timestamps absolute,
offset deltas, producer fields, delete horizon); expected bytes are those
Kafka 4.0 wrote, including batches its log cleaner rebuilt with a delete
horizon (kafka-facts 4.3) and batches with offset gaps left by compaction.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import Compression, RecordBatch, TimestampType
from lethe_formats.records import decode_log
from lethe_formats.records.builder import RecordSpec, build_batch

GOLDEN = fixtures_root() / "golden"
SEGMENTS = sorted(p for p in GOLDEN.rglob("*.log") if re.match(r"^\d{20}\.log$", p.name))


def _rebuild(batch: RecordBatch) -> bytes:
    h = batch.header
    specs = [RecordSpec(r.key, r.value, r.headers, batch.timestamp_of(r)) for r in batch.records]
    append_time = h.timestamp_type is TimestampType.LOG_APPEND_TIME
    return build_batch(
        specs,
        base_offset=h.base_offset,
        compression=h.compression,
        timestamp_type=h.timestamp_type,
        log_append_time=h.max_timestamp if append_time else None,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        partition_leader_epoch=h.partition_leader_epoch,
        is_transactional=h.is_transactional,
        is_control=h.is_control,
        delete_horizon_ms=h.delete_horizon_ms,
        offset_deltas=[r.offset_delta for r in batch.records],
        last_offset_delta=h.last_offset_delta,
    )


@pytest.mark.parametrize("segment", SEGMENTS, ids=[str(p.relative_to(GOLDEN)) for p in SEGMENTS])
def test_builder_reproduces_kafkas_uncompressed_batches(segment: Path) -> None:
    data = segment.read_bytes()
    position = 0
    for batch in decode_log(data):
        assert isinstance(batch, RecordBatch)
        end = position + batch.header.size_in_bytes
        if batch.header.compression is Compression.NONE:
            assert _rebuild(batch) == data[position:end]
        position = end


def test_golden_data_holds_cleaner_rebuilt_horizon_batches_with_gaps() -> None:
    pass1 = GOLDEN / "compaction" / "pass1" / "golden-compact-0" / "00000000000000000000.log"
    batches = [b for b in decode_log(pass1.read_bytes()) if isinstance(b, RecordBatch)]
    first = batches[0]
    assert first.header.delete_horizon_ms == 1795289305712  # dump: OptionalLong[1795289305712]
    assert first.records[0].timestamp_delta < 0
    assert (first.header.base_offset, first.header.last_offset) == (4, 6)  # dump line
    assert first.records[0].offset_delta == 2
