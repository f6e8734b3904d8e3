"""The fast path reads Kafka's own segments exactly as kafka-dump-log reports them."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_scan_support as support
from lethe_formats.model import BatchHeader, RecordBatch
from lethe_formats.records import scan
from test_scan_support import dump_batches, golden_id, golden_logs, small_segment

impl = support.impl

LOGS = golden_logs()


def test_golden_segments_exist() -> None:
    assert len(LOGS) >= 30


@pytest.mark.parametrize("log", LOGS, ids=golden_id)
def test_shallow_scan_matches_dump_batch_lines(log: Path, impl: str) -> None:
    data = log.read_bytes()
    scanner = scan.LogScanner(data, file=str(log))
    entries = list(scanner)
    expected = dump_batches(log)
    assert scanner.stop_error is None
    assert scanner.end_position == len(data)
    assert len(entries) == len(expected)
    for entry, (fields, _records) in zip(entries, expected, strict=True):
        header = entry.header
        assert isinstance(header, BatchHeader)
        assert entry.position == int(fields["position"])
        assert header.size_in_bytes == int(fields["size"])
        assert header.crc == int(fields["crc"])
        assert entry.crc_valid is (fields["isvalid"] == "true")
        assert header.base_offset == int(fields["baseOffset"])
        assert header.last_offset == int(fields["lastOffset"])
        assert header.records_count == int(fields["count"])
        assert header.compression.dump_name == fields["compresscodec"]
        assert header.partition_leader_epoch == int(fields["partitionLeaderEpoch"])
        assert header.producer_id == int(fields["producerId"])
        assert header.last_sequence == int(fields["lastSequence"])
        assert str(header.is_control).lower() == fields["isControl"]
        horizon = header.delete_horizon_ms
        shown = "OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]"
        assert fields["deleteHorizonMs"] == shown
        assert int(fields[header.timestamp_type.dump_name]) == header.max_timestamp


def test_shallow_scan_without_crc_reports_none(impl: str) -> None:
    entries = list(scan.LogScanner(LOGS[0].read_bytes(), verify_crc=False))
    assert entries
    assert all(entry.crc_valid is None for entry in entries)


@pytest.mark.parametrize("log", LOGS, ids=golden_id)
def test_deep_decode_matches_dump_record_lines(log: Path, impl: str) -> None:
    data = log.read_bytes()
    batches = list(scan.read_log(data, file=str(log)))
    expected = dump_batches(log)
    assert len(batches) == len(expected)
    for batch, (_fields, lines) in zip(batches, expected, strict=True):
        assert isinstance(batch, RecordBatch)
        assert len(batch.records) == len(lines)
        for record, line in zip(batch.records, lines, strict=True):
            assert batch.offset_of(record) == int(line["offset"])
            ts_type = batch.header.timestamp_type.dump_name
            assert batch.timestamp_of(record) == int(line[ts_type])
            assert (-1 if record.key is None else len(record.key)) == int(line["keySize"])
            assert (-1 if record.value is None else len(record.value)) == int(line["valueSize"])
            assert batch.sequence_of(record) == int(line["sequence"])
            keys = ",".join(h.key.decode("utf-8", "replace") for h in record.headers)
            assert line["headerKeys"] == f"[{keys}]"


@pytest.mark.parametrize("log", LOGS, ids=golden_id)
def test_decode_records_agrees_with_read_log(log: Path, impl: str) -> None:
    data = memoryview(log.read_bytes())
    deep = [b for b in scan.read_log(data) if isinstance(b, RecordBatch)]
    shallow = list(scan.LogScanner(data))
    assert [b.header for b in deep] == [e.header for e in shallow]
    assert [scan.decode_records(data, e) for e in shallow] == [b.records for b in deep]


def test_small_segment_decodes_every_field(impl: str) -> None:
    batches = [b for b in scan.read_log(small_segment()) if isinstance(b, RecordBatch)]
    assert [len(b.records) for b in batches] == [1, 2, 1]
    second = batches[1]
    assert isinstance(second, RecordBatch)
    first, other = second.records
    assert first.key is None
    assert first.value == b"22"
    assert [(h.key, h.value) for h in first.headers] == [(b"h", b"x"), (b"n", None)]
    assert (other.offset_delta, other.timestamp_delta, other.key) == (1, -5, b"k")
    last = batches[2]
    assert isinstance(last, RecordBatch)
    assert last.records[0].value is None


def test_scanner_accepts_mmap_and_bytearray(tmp_path: Path, impl: str) -> None:
    import mmap

    path = tmp_path / "seg.log"
    path.write_bytes(small_segment())
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        from_mmap = list(scan.read_log(mm))
    assert from_mmap == list(scan.read_log(bytearray(small_segment())))


def test_start_position_skips_earlier_entries(impl: str) -> None:
    data = small_segment()
    all_entries = list(scan.LogScanner(data))
    later = list(scan.LogScanner(data, start=all_entries[1].position))
    assert later == all_entries[1:]


def test_implementation_switch_round_trips() -> None:
    previous = scan.set_implementation("python")
    try:
        assert scan.implementation() == "python"
    finally:
        scan.set_implementation(previous)
    with pytest.raises(ValueError, match="unknown implementation"):
        scan.set_implementation("rust")
