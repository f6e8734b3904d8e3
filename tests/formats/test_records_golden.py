"""Every golden .log segment written by Kafka 4.0 decodes to what kafka-dump-log printed.

The expected values are the dump.txt lines Kafka's own DumpLogSegments wrote
for the same files (--deep-iteration --print-data-log); the re-encoding tests
compare with the bytes Kafka wrote.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from golden_dump import fields, parse_dump, record_lines
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import Compression, RecordBatch
from lethe_formats.records import decode_batch, decode_log, encode_batch
from lethe_formats.records.control import decode_end_txn_marker

GOLDEN = fixtures_root() / "golden"
SEGMENT = re.compile(r"^\d{20}\.log$")


def _segments() -> list[Path]:
    return sorted(p for p in GOLDEN.rglob("*.log") if SEGMENT.match(p.name))


def _dump_lines(segment: Path) -> list[str]:
    """The dump of ``segment`` from the dump.txt of its case folder."""
    dump = segment.parent.parent / "dump.txt"
    relative = f"{segment.parent.name}/{segment.name}"
    return parse_dump(dump)[relative]


SEGMENTS = _segments()
IDS = [str(p.relative_to(GOLDEN)) for p in SEGMENTS]


def test_golden_set_has_every_kind_of_segment() -> None:
    names = {p.parent.name for p in SEGMENTS}
    assert {"golden-codecs-0", "__consumer_offsets-14", "__transaction_state-24"} <= names
    assert any("pass3" in str(p) for p in SEGMENTS)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _batch_fields(batch: RecordBatch, position: int) -> dict[str, str]:
    h = batch.header
    horizon = h.delete_horizon_ms
    return {
        "baseOffset": str(h.base_offset),
        "lastOffset": str(h.last_offset),
        "count": str(h.records_count),
        "baseSequence": str(h.base_sequence),
        "lastSequence": str(h.last_sequence),
        "producerId": str(h.producer_id),
        "producerEpoch": str(h.producer_epoch),
        "partitionLeaderEpoch": str(h.partition_leader_epoch),
        "isTransactional": _bool(h.is_transactional),
        "isControl": _bool(h.is_control),
        "deleteHorizonMs": "OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]",
        "position": str(position),
        h.timestamp_type.dump_name: str(h.max_timestamp),
        "size": str(h.size_in_bytes),
        "magic": str(h.magic),
        "compresscodec": h.compression.dump_name,
        "crc": str(h.crc),
        "isvalid": "true",
    }


def _record_fields(batch: RecordBatch, index: int) -> dict[str, str]:
    record = batch.records[index]
    out = {
        "offset": str(batch.offset_of(record)),
        batch.header.timestamp_type.dump_name: str(batch.timestamp_of(record)),
        "keySize": str(-1 if record.key is None else len(record.key)),
        "valueSize": str(-1 if record.value is None else len(record.value)),
        "sequence": str(batch.sequence_of(record)),
        "headerKeys": "[" + ",".join(h.key.decode() for h in record.headers) + "]",
    }
    if batch.header.is_control:
        marker = decode_end_txn_marker(record)
        out["endTxnMarker"] = marker.control_type.name
        out["coordinatorEpoch"] = str(marker.coordinator_epoch)
    return out


@pytest.mark.parametrize("segment", SEGMENTS, ids=IDS)
def test_segment_decodes_to_the_kafka_dump(segment: Path) -> None:
    data = segment.read_bytes()
    entries = decode_log(data, file=str(segment))
    groups = record_lines(_dump_lines(segment))
    assert len(entries) == len(groups)
    position = 0
    for batch, group in zip(entries, groups, strict=True):
        assert isinstance(batch, RecordBatch)
        expected = fields(group[0])
        actual = _batch_fields(batch, position)
        assert {k: expected[k] for k in actual} == actual
        assert len(group) - 1 == len(batch.records)
        for index, line in enumerate(group[1:]):
            expected = fields(line)
            actual = _record_fields(batch, index)
            assert {k: expected.get(k) for k in actual} == actual
        position += batch.header.size_in_bytes
    assert position == len(data)


@pytest.mark.parametrize("segment", SEGMENTS, ids=IDS)
def test_batches_re_encode_to_kafkas_bytes_or_to_equal_values(segment: Path) -> None:
    data = segment.read_bytes()
    position = 0
    while position < len(data):
        batch = decode_batch(data, position)
        end = position + batch.header.size_in_bytes
        if batch.header.compression is Compression.NONE:
            assert encode_batch(batch) == data[position:end]
        else:
            again = decode_batch(encode_batch(batch))
            assert again.records == batch.records
            assert _without_size_and_crc(again) == _without_size_and_crc(batch)
        position = end


def _without_size_and_crc(batch: RecordBatch) -> RecordBatch:
    header = dataclasses.replace(batch.header, batch_length=0, crc=0)
    return RecordBatch(header, batch.records)


def test_java_snappy_batch_uses_xerial_framing_and_re_encodes_with_it(codecs_log_22: Path) -> None:
    data = codecs_log_22.read_bytes()
    first = decode_batch(data, 0)
    position = first.header.size_in_bytes
    java = decode_batch(data, position)
    assert java.header.compression is Compression.SNAPPY
    assert data[position + 61 : position + 69] == b"\x82SNAPPY\x00"
    rebuilt = encode_batch(java, snappy_framing="xerial")
    assert rebuilt[61:69] == b"\x82SNAPPY\x00"
    assert decode_batch(rebuilt).records == java.records


def test_librdkafka_raw_snappy_batch_re_encodes_byte_for_byte(codecs_log: Path) -> None:
    data = codecs_log.read_bytes()
    batches = decode_log(data)
    snappy = batches[2]
    assert isinstance(snappy, RecordBatch)
    assert snappy.header.compression is Compression.SNAPPY
    position = 675  # from the dump: "position: 675 ... compresscodec: snappy"
    end = position + snappy.header.size_in_bytes
    assert encode_batch(snappy, snappy_framing="raw") == data[position:end]
