"""The Kaitai specs read every golden file the way Kafka 4.0.0 describes it.

Expected values come from Kafka itself: ``kafka-dump-log`` output (dump.txt),
what kafka-python read back from the broker (case.json), the topic ids the
broker reported, and the checkpoint contents stated in golden/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest_ksy import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_ARGS,
    OFFSET_CHECKPOINTS,
    PARTITION_METADATA,
    RECORD_LINE,
    dump_sections,
    fields,
    files_under,
    golden_dir,
    kaitai_specs,
    named_files_under,
    relative_id,
)
from lethe_formats.crc import crc32c
from lethe_formats.ksy import KaitaiSpecs
from lethe_formats.ksy.adapter import decode_end_txn_marker, decode_log
from lethe_formats.ksy.adapter_files import (
    decode_leader_epoch_checkpoint,
    decode_offset_checkpoint,
    decode_offset_index,
    decode_partition_metadata,
    decode_time_index,
    decode_txn_index,
)
from lethe_formats.model import Record, RecordBatch

__all__ = ["kaitai_specs"]
pytestmark = pytest.mark.kaitai

GOLDEN = golden_dir()
SECTIONS = dump_sections()
LOGS = files_under(GOLDEN, "log")
INDEXES = files_under(GOLDEN, "index")
TIME_INDEXES = files_under(GOLDEN, "timeindex")
TXN_INDEXES = files_under(GOLDEN, "txnindex")
INT32_MAX = 2**31 - 1


def _dump(path: Path, args: str = "") -> tuple[str, ...]:
    return SECTIONS[(path.resolve(), args)].lines


def _base_offset(path: Path) -> int:
    return int(path.name.split(".")[0])


def test_every_golden_segment_file_has_a_dump_section() -> None:
    files = LOGS + INDEXES + TIME_INDEXES + TXN_INDEXES
    assert len(LOGS) == 41 and len(TXN_INDEXES) == 2
    for path in files:
        args = LOG_ARGS if path.suffix == ".log" else ""
        assert (path.resolve(), args) in SECTIONS, path


# --- .log: batch lines ---------------------------------------------------------------

_TIMESTAMP_TYPE = {"create_time": "CreateTime", "log_append_time": "LogAppendTime"}


def _batch_line_fields(entry: Any, position: int) -> dict[str, str]:
    """What kafka-dump-log prints for a v2 batch, from the spec's own fields/instances."""
    b = entry.body.content
    horizon = f"OptionalLong[{b.delete_horizon_ms}]" if b.has_delete_horizon else None
    return {
        "baseOffset": str(b.base_offset),
        "lastOffset": str(b.last_offset),
        "count": str(b.records_count),
        "baseSequence": str(b.base_sequence),
        "lastSequence": str(b.last_sequence),
        "producerId": str(b.producer_id),
        "producerEpoch": str(b.producer_epoch),
        "partitionLeaderEpoch": str(b.partition_leader_epoch),
        "isTransactional": str(b.is_transactional).lower(),
        "isControl": str(b.is_control).lower(),
        "deleteHorizonMs": horizon or "OptionalLong.empty",
        "position": str(position),
        _TIMESTAMP_TYPE[b.timestamp_type.name]: str(b.max_timestamp),
        "size": str(b.size_in_bytes),
        "magic": str(b.magic),
        "compresscodec": b.codec.name,
        "crc": str(b.crc),
        "isvalid": str(crc32c(entry._raw_body[9:]) == b.crc).lower(),
    }


@pytest.mark.parametrize("path", LOGS, ids=relative_id)
def test_segment_spec_reproduces_kafka_dump_log_batch_lines(
    kaitai_specs: KaitaiSpecs, path: Path
) -> None:
    segment = kaitai_specs.log_segment.from_bytes(path.read_bytes())
    expected = [fields(line) for line in _dump(path, LOG_ARGS) if line.startswith("baseOffset:")]
    actual = []
    position = 0
    for entry in segment.entries:
        actual.append(_batch_line_fields(entry, position))
        position += entry.length + 12
    assert actual == expected
    assert position == path.stat().st_size


# --- .log: record lines ----------------------------------------------------------------


def _sequence(batch: RecordBatch, record: Record) -> int:
    base = batch.header.base_sequence
    if base == -1:
        return -1
    total = base + record.offset_delta
    return total - INT32_MAX - 1 if total > INT32_MAX else total


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _record_line(specs: KaitaiSpecs, batch: RecordBatch, record: Record) -> dict[str, str]:
    h = batch.header
    log_append = bool(h.attributes & 0x08)
    timestamp = h.max_timestamp if log_append else h.base_timestamp + record.timestamp_delta
    if h.attributes & 0x20:
        marker = decode_end_txn_marker(specs, record)
        kind, epoch = marker.control_type.name, marker.coordinator_epoch
        rest = f" endTxnMarker: {kind} coordinatorEpoch: {epoch}"
    else:
        rest = "" if record.key is None else f" key: {_text(record.key)}"
        rest += "" if record.value is None else f" payload: {_text(record.value)}"
    return {
        "offset": str(h.base_offset + record.offset_delta),
        "tstype": "LogAppendTime" if log_append else "CreateTime",
        "timestamp": str(timestamp),
        "keySize": str(-1 if record.key is None else len(record.key)),
        "valueSize": str(-1 if record.value is None else len(record.value)),
        "sequence": str(_sequence(batch, record)),
        "headerKeys": ",".join(_text(header.key) for header in record.headers),
        "rest": rest,
    }


@pytest.mark.parametrize("path", LOGS, ids=relative_id)
def test_adapter_records_reproduce_kafka_dump_log_record_lines(
    kaitai_specs: KaitaiSpecs, path: Path
) -> None:
    lines = [line for line in _dump(path, LOG_ARGS) if line.startswith("| offset:")]
    expected = []
    for line in lines:
        match = RECORD_LINE.match(line)
        assert match is not None, line
        expected.append(match.groupdict())
    batches = decode_log(kaitai_specs, path.read_bytes(), file=str(path))
    actual: list[dict[str, str]] = []
    for batch in batches:
        assert isinstance(batch, RecordBatch)
        actual.extend(_record_line(kaitai_specs, batch, record) for record in batch.records)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        if "\n" in got["rest"]:  # a payload with a newline spans dump lines
            got["rest"] = want["rest"] = ""
        assert got == want


# --- .log: what the broker served back ----------------------------------------------


def _json_bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return bytes.fromhex(value["hex"])
    return str(value).encode("utf-8")


def _served(case: str) -> list[dict[str, Any]]:
    data = json.loads((GOLDEN / case / "case.json").read_text(encoding="utf-8"))
    return list(data["records_read_back"]["records"])


def _kaitai_records(specs: KaitaiSpecs, folder: Path) -> dict[int, tuple[Any, ...]]:
    out: dict[int, tuple[Any, ...]] = {}
    for path in files_under(folder, "log"):
        for batch in decode_log(specs, path.read_bytes()):
            assert isinstance(batch, RecordBatch)
            for r in batch.records:
                headers = [(h.key, h.value) for h in r.headers]
                out[batch.offset_of(r)] = (batch.timestamp_of(r), r.key, r.value, headers)
    return out


@pytest.mark.parametrize("case", ["codecs", "delete-records"])
def test_adapter_records_match_what_kafka_served_to_a_consumer(
    kaitai_specs: KaitaiSpecs, case: str
) -> None:
    served = _served(case)
    assert served
    for partition in sorted({r["partition"] for r in served}):
        folder = next((GOLDEN / case).glob(f"*-{partition}"))
        stored = _kaitai_records(kaitai_specs, folder)
        for r in (r for r in served if r["partition"] == partition):
            headers = [(k.encode("utf-8"), _json_bytes(v)) for k, v in r["headers"]]
            want = (r["timestamp"], _json_bytes(r["key"]), _json_bytes(r["value"]), headers)
            assert stored[r["offset"]] == want, r["offset"]


# --- indexes -----------------------------------------------------------------------------


def _index_lines(path: Path) -> list[dict[str, str]]:
    lines = [line for line in _dump(path) if line and not line.startswith("Dumping ")]
    return (
        [] if lines == [f"{path.parent.name}/{path.name} is empty."] else list(map(fields, lines))
    )


@pytest.mark.parametrize("path", INDEXES, ids=relative_id)
def test_offset_index_spec_matches_kafka_dump_log(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    base = _base_offset(path)
    entries = decode_offset_index(kaitai_specs, path.read_bytes())
    actual = [
        {"offset": str(base + e.relative_offset), "position": str(e.position)} for e in entries
    ]
    assert actual == _index_lines(path)


@pytest.mark.parametrize("path", TIME_INDEXES, ids=relative_id)
def test_time_index_spec_matches_kafka_dump_log(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    base = _base_offset(path)
    entries = decode_time_index(kaitai_specs, path.read_bytes())
    actual = [
        {"timestamp": str(e.timestamp), "offset": str(base + e.relative_offset)} for e in entries
    ]
    assert actual == _index_lines(path)


@pytest.mark.parametrize("path", TXN_INDEXES, ids=relative_id)
def test_txn_index_spec_matches_kafka_dump_log(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    entries = decode_txn_index(kaitai_specs, path.read_bytes())
    actual = [
        {
            "version": str(e.version),
            "producerId": str(e.producer_id),
            "firstOffset": str(e.first_offset),
            "lastOffset": str(e.last_offset),
            "lastStableOffset": str(e.last_stable_offset),
        }
        for e in entries
    ]
    assert actual == _index_lines(path)


# --- checkpoint files (golden/README.md) ---------------------------------------------


def test_delete_records_log_start_checkpoint_lists_only_advanced_partitions(
    kaitai_specs: KaitaiSpecs,
) -> None:
    data = (GOLDEN / "delete-records" / "log-start-offset-checkpoint").read_bytes()
    assert decode_offset_checkpoint(kaitai_specs, data) == [
        ("golden-delrec", 0, 19),
        ("golden-delrec", 2, 30),
    ]


@pytest.mark.parametrize(("partition", "start"), [(0, 19), (1, 24), (2, 30)])
def test_delete_records_moves_epoch_zero_to_the_log_start_offset(
    kaitai_specs: KaitaiSpecs, partition: int, start: int
) -> None:
    path = GOLDEN / "delete-records" / f"golden-delrec-{partition}" / LEADER_EPOCH_CHECKPOINT
    assert decode_leader_epoch_checkpoint(kaitai_specs, path.read_bytes()) == [(0, start)]


def test_delete_records_high_watermarks_are_the_records_written(
    kaitai_specs: KaitaiSpecs,
) -> None:
    data = (GOLDEN / "delete-records" / "replication-offset-checkpoint").read_bytes()
    entries = decode_offset_checkpoint(kaitai_specs, data)
    assert sorted(entries) == [
        ("golden-delrec", 0, 40),
        ("golden-delrec", 1, 36),
        ("golden-delrec", 2, 30),
    ]


@pytest.mark.parametrize(
    "path",
    named_files_under(GOLDEN, (*OFFSET_CHECKPOINTS, LEADER_EPOCH_CHECKPOINT)),
    ids=relative_id,
)
def test_every_golden_checkpoint_has_version_zero_and_its_declared_count(
    kaitai_specs: KaitaiSpecs, path: Path
) -> None:
    data = path.read_bytes()
    lines = data.decode("utf-8").split("\n")
    if path.name == LEADER_EPOCH_CHECKPOINT:
        entries: list[Any] = decode_leader_epoch_checkpoint(kaitai_specs, data)
    else:
        entries = decode_offset_checkpoint(kaitai_specs, data)
    if data:
        assert lines[0] == "0" and int(lines[1]) == len(entries)
    else:
        assert entries == []


def _topic_ids() -> dict[str, str]:
    ids = {}
    for case in GOLDEN.glob("*/case.json"):
        for topic in json.loads(case.read_text(encoding="utf-8")).get("topics", []):
            if isinstance(topic, dict) and "topic_id" in topic:
                ids[topic["name"]] = topic["topic_id"]
    return ids


@pytest.mark.parametrize("path", named_files_under(GOLDEN, (PARTITION_METADATA,)), ids=relative_id)
def test_partition_metadata_holds_the_topic_id_kafka_reported(
    kaitai_specs: KaitaiSpecs, path: Path
) -> None:
    version, topic_id = decode_partition_metadata(kaitai_specs, path.read_bytes())
    assert version == 0
    topic = path.parent.name.rsplit("-", 1)[0]
    expected = _topic_ids().get(topic)
    if expected is not None:
        assert topic_id == expected
    else:  # internal topics, and golden-orders whose id case.json does not record
        assert topic.startswith("__") or topic == "golden-orders"
