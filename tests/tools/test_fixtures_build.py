"""``lethe fixtures build``: Kafka's segment layout, reproducibility, spec fidelity, errors.

Where the expected values come from:

* segment/index layout: the golden segments Kafka 4.0 wrote. Their raw batch
  bytes go through the writer, which must give back Kafka's ``.log``,
  ``.index``, ``.timeindex`` and ``.txnindex`` byte for byte;
* derived checkpoints: the golden checkpoint files of the same layouts;
* record content: the spec files themselves (the generator's input), read
  here independently of the generator, following fixtures/logs/README.md.
"""

from __future__ import annotations

import copy
import itertools
import json
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.model import LegacyMessage, RecordBatch, TimestampType
from lethe_formats.records.log import decode_log
from lethe_formats.storage.checkpoint import read_offset_checkpoint
from lethe_formats.storage.index import encode_offset_index, encode_time_index
from lethe_formats.storage.txn_index import encode_txn_index
from lethe_tools.fixturegen import (
    PartitionLogWriter,
    SpecError,
    build_log_dir,
    build_specs,
    check_all,
    default_logs_root,
    find_spec_files,
    load_spec,
    parse_spec,
)
from tools_support import Run

SPEC_FILES = find_spec_files([])
SPEC_IDS = [path.stem for path in SPEC_FILES]
KAFKA_DEFAULT_SEGMENT_BYTES = 1073741824
KAFKA_DEFAULT_INDEX_INTERVAL = 4096


# --- the writer reproduces Kafka's own segments --------------------------------------


def _batches(log: bytes) -> Iterator[bytes]:
    """Raw entries of a segment: offset(8) | length(4) | length bytes."""
    position = 0
    while position < len(log):
        (length,) = struct.unpack_from(">i", log, position + 8)
        yield log[position : position + 12 + length]
        position += 12 + length


def _topic_settings(case_dir: Path) -> tuple[int, int]:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    configs = case["topics"][0]["configs_at_creation"]
    return (
        int(configs.get("segment.bytes", KAFKA_DEFAULT_SEGMENT_BYTES)),
        int(configs.get("index.interval.bytes", KAFKA_DEFAULT_INDEX_INTERVAL)),
    )


GOLDEN_PARTITIONS = [
    # (case, partition dir, rolls by segment.ms: forced at each golden segment start)
    ("codecs", "golden-codecs-0", False),
    ("delete-records", "golden-delrec-0", False),
    ("delete-records", "golden-delrec-1", False),
    ("delete-records", "golden-delrec-2", False),
    ("compaction", "pass0/golden-compact-0", True),
    ("transactions", "pass0/golden-txn-0", True),
    ("transactions", "pass0/__transaction_state-24", True),
]


@pytest.mark.parametrize(("case", "partition", "time_rolls"), GOLDEN_PARTITIONS)
def test_writer_lays_out_golden_batches_exactly_as_kafka_did(
    golden: Path, case: str, partition: str, time_rolls: bool
) -> None:
    """Size rolls, offset index, time index and txn index all match Kafka's bytes.

    Where the topic rolled by ``segment.ms`` (compaction, transactions) the
    test forces a roll at each golden segment start; everything else, including
    every size roll of codecs/delete-records, is the writer's own decision.
    """
    segment_bytes, interval = _topic_settings(golden / case)
    if partition.startswith("pass0/__"):
        segment_bytes, interval = KAFKA_DEFAULT_SEGMENT_BYTES, KAFKA_DEFAULT_INDEX_INTERVAL
    directory = golden / case / partition
    writer = PartitionLogWriter(segment_bytes=segment_bytes, index_interval_bytes=interval)
    for number, log_file in enumerate(sorted(directory.glob("*.log"))):
        for index, batch in enumerate(_batches(log_file.read_bytes())):
            writer.append(batch, roll=time_rolls and number > 0 and index == 0)
    segments = writer.close()

    assert [f"{s.base_offset:020d}.log" for s in segments] == sorted(
        p.name for p in directory.glob("*.log")
    )
    for segment in segments:
        stem = directory / f"{segment.base_offset:020d}"
        assert segment.log == stem.with_suffix(".log").read_bytes()
        assert encode_offset_index(segment.offset_index) == stem.with_suffix(".index").read_bytes()
        expected_time = stem.with_suffix(".timeindex").read_bytes()
        assert encode_time_index(segment.time_index) == expected_time
        txn_file = stem.with_suffix(".txnindex")
        expected_txn = txn_file.read_bytes() if txn_file.exists() else b""
        assert encode_txn_index(segment.aborted_txns) == expected_txn


def _golden_codecs_batches(golden: Path) -> list[bytes]:
    directory = golden / "codecs" / "golden-codecs-0"
    return [b for f in sorted(directory.glob("*.log")) for b in _batches(f.read_bytes())]


def _segment_count(batches: list[bytes], segment_bytes: int, interval: int = 4096) -> int:
    writer = PartitionLogWriter(segment_bytes=segment_bytes, index_interval_bytes=interval)
    for batch in batches:
        writer.append(batch)
    return len(writer.close())


def test_segment_rolls_only_when_size_plus_batch_exceeds_segment_bytes(golden: Path) -> None:
    """kafka-facts 3.6: roll when size > segment.bytes - incoming; an exact fit stays."""
    first, second = _golden_codecs_batches(golden)[:2]
    exact = len(first) + len(second)
    assert _segment_count([first, second], exact) == 1
    assert _segment_count([first, second], exact - 1) == 2


def test_index_entry_needs_more_than_interval_bytes_since_the_last(golden: Path) -> None:
    """kafka-facts 3.5: an entry only when *more than* index.interval.bytes were appended."""
    first, second = _golden_codecs_batches(golden)[:2]
    for interval, entries in ((len(first), 0), (len(first) - 1, 1)):
        writer = PartitionLogWriter(segment_bytes=1 << 30, index_interval_bytes=interval)
        writer.append(first)
        writer.append(second)
        (segment,) = writer.close()
        assert len(segment.offset_index) == entries


# --- the committed fixtures --------------------------------------------------------


def test_committed_fixtures_equal_a_fresh_build() -> None:
    report = check_all(build_specs(SPEC_FILES), default_logs_root(), complete=True)
    problems = {name: diff.lines() for name, diff in report.diffs.items() if diff}
    assert not problems
    assert report.stale == ()


def test_building_twice_gives_identical_bytes() -> None:
    """No clock, no dict order, deterministic codecs: two builds are equal."""
    first = {b.name: dict(b.tree) for b in build_specs(SPEC_FILES)}
    second = {b.name: dict(b.tree) for b in build_specs(SPEC_FILES)}
    assert first == second


def test_every_required_fixture_has_a_spec() -> None:
    assert set(SPEC_IDS) >= {
        "codecs-v2",
        "legacy-v0",
        "legacy-v1",
        "transactions",
        "tombstones",
        "delete-horizon",
        "log-start-offset",
        "kip87",
        "multi-partition",
    }


# --- spec -> records, read independently of the generator ----------------------------


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return bytes.fromhex(value["hex"])
    return str(value).encode("utf-8")


def _expected_partition(partition: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(offset, key, value, headers, timestamp, kip87) per data record, per README's contract."""
    expected: list[tuple[Any, ...]] = []
    next_offset = int(partition["batches"][0].get("base_offset", partition.get("start_offset", 0)))
    for batch in partition["batches"]:
        base = int(batch.get("base_offset", next_offset))
        records = batch.get("records", [])
        deltas = batch.get("offset_deltas", list(range(len(records))))
        for delta, record in zip(deltas, records, strict=True):
            if batch.get("timestamp_type") == "LogAppendTime":
                timestamp: int | None = int(batch["log_append_time"])
            else:
                timestamp = int(record["timestamp"]) if "timestamp" in record else None
            headers = tuple(
                (h["key"].encode("utf-8"), _bytes(h.get("value")))
                for h in record.get("headers", [])
            )
            expected.append(
                (
                    base + delta,
                    _bytes(record.get("key")),
                    _bytes(record.get("value")),
                    headers,
                    timestamp,
                    bool(record.get("kip87_tombstone", False)),
                )
            )
        last_delta = batch.get("last_offset_delta", deltas[-1] if deltas else 0)
        next_offset = base + last_delta + 1
    return expected


def _decoded_partition(directory: Path) -> tuple[list[tuple[Any, ...]], list[Any]]:
    """Data records as the same tuples, plus every decoded entry (for batch-level checks)."""
    records: list[tuple[Any, ...]] = []
    entries: list[Any] = []
    for log_file in sorted(directory.glob("*.log")):
        for entry in decode_log(log_file.read_bytes(), file=str(log_file)):
            entries.append(entry)
            if isinstance(entry, RecordBatch):
                if not entry.header.is_control:
                    records.extend(_batch_rows(entry))
            else:
                records.extend(_legacy_rows(entry))
    return records, entries


def _batch_rows(batch: RecordBatch) -> Iterator[tuple[Any, ...]]:
    for record in batch.records:
        headers = tuple((h.key, h.value) for h in record.headers)
        yield (
            batch.offset_of(record),
            record.key,
            record.value,
            headers,
            batch.timestamp_of(record),
            record.has_kip87_tombstone_flag,
        )


def _legacy_rows(message: LegacyMessage) -> Iterator[tuple[Any, ...]]:
    inner = message.inner or (message,)
    for item in inner:
        timestamp = item.timestamp
        if message.timestamp_type is TimestampType.LOG_APPEND_TIME:
            timestamp = message.timestamp
        yield (item.offset, item.key, item.value, (), timestamp, False)


def _spec_partitions(spec_file: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    document = json.loads(spec_file.read_text(encoding="utf-8"))
    for topic in document["topics"]:
        for partition in topic["partitions"]:
            yield f"{topic['name']}-{partition['partition']}", partition


@pytest.mark.parametrize("spec_file", SPEC_FILES, ids=SPEC_IDS)
def test_generated_log_dir_decodes_to_the_records_of_its_spec(spec_file: Path) -> None:
    root = default_logs_root() / spec_file.stem
    for directory, partition in _spec_partitions(spec_file):
        decoded, _ = _decoded_partition(root / directory)
        assert decoded == _expected_partition(partition), directory


@pytest.mark.parametrize("spec_file", SPEC_FILES, ids=SPEC_IDS)
def test_generated_batches_carry_the_spec_batch_attributes(spec_file: Path) -> None:
    """Markers, delete horizons, empty batches and producer fields as the spec says."""
    root = default_logs_root() / spec_file.stem
    for directory, partition in _spec_partitions(spec_file):
        _, entries = _decoded_partition(root / directory)
        v2 = [e for e in entries if isinstance(e, RecordBatch)]
        spec_v2 = [b for b in partition["batches"] if b.get("magic", 2) == 2]
        assert len(v2) == len(spec_v2), directory
        for batch, spec in zip(v2, spec_v2, strict=True):
            header = batch.header
            horizon = spec.get("delete_horizon_ms")
            assert header.delete_horizon_ms == (int(horizon) if horizon else None)
            assert header.producer_id == int(spec.get("producer_id", -1))
            assert header.partition_leader_epoch == spec.get("partition_leader_epoch", 0)
            if "control" in spec:
                kind = {"ABORT": 0, "COMMIT": 1}[spec["control"]["type"]]
                assert header.is_control and header.is_transactional
                assert batch.records[0].key == struct.pack(">hh", 0, kind)
            elif not spec.get("records"):
                assert header.records_count == 0
                assert header.base_timestamp == -1
                assert header.max_timestamp == int(spec["max_timestamp"])


def test_transactions_txnindex_holds_both_aborts_with_kafkas_last_stable_offsets() -> None:
    """From the spec: txn B (pid 2000, first 3) aborts at 10 while C (first 6) is open -> LSO 6;
    C (pid 3000) aborts at 11 with nothing else open -> LSO 12; both in the segment holding 10."""
    partition = default_logs_root() / "transactions" / "transactions-0"
    (txn_file,) = partition.glob("*.txnindex")
    expected = struct.pack(">hqqqq", 0, 2000, 3, 10, 6) + struct.pack(">hqqqq", 0, 3000, 6, 11, 12)
    assert txn_file.read_bytes() == expected
    holder = decode_log(txn_file.with_suffix(".log").read_bytes())
    assert {e.header.last_offset for e in holder if isinstance(e, RecordBatch)} >= {10, 11}


# --- derived checkpoints follow Kafka ----------------------------------------------------


def _records(first: int, count: int) -> list[dict[str, Any]]:
    return [
        {"key": f"k{o}", "value": "v", "timestamp": str(1767225600000 + o)}
        for o in range(first, first + count)
    ]


def _delrec_like_spec() -> dict[str, Any]:
    """The offsets of golden delete-records after DeleteRecords (p0 19, p1 24, p2 -1 = 30)."""

    def partition(number: int, batches: list[int], end: int, lso: int) -> dict[str, Any]:
        bounds = [*batches, end]
        return {
            "partition": number,
            "log_start_offset": str(lso),
            "batches": [
                {"base_offset": str(a), "records": _records(a, b - a)}
                for a, b in itertools.pairwise(bounds)
            ],
        }

    return {
        "name": "delrec-like",
        "description": "golden delete-records offsets",
        "checkpoints": {
            "log-start-offset-checkpoint": {"derive": True},
            "recovery-point-offset-checkpoint": {"derive": True},
        },
        "topics": [
            {
                "name": "golden-delrec",
                "partitions": [
                    partition(0, [16, 20, 24, 28, 32, 36], 40, 19),
                    partition(1, [24, 28, 32], 36, 24),
                    partition(2, [24, 28], 30, 30),
                ],
            }
        ],
    }


def test_derived_log_start_and_leader_epoch_checkpoints_match_golden_delete_records(
    golden: Path,
) -> None:
    tree = build_log_dir(parse_spec(_delrec_like_spec(), file="delrec-like.json"))
    case = golden / "delete-records"
    assert (
        tree["log-start-offset-checkpoint"] == (case / "log-start-offset-checkpoint").read_bytes()
    )
    for number in range(3):
        name = f"golden-delrec-{number}/leader-epoch-checkpoint"
        assert tree[name] == (case / name).read_bytes()
    recovery = read_offset_checkpoint(tree["recovery-point-offset-checkpoint"])
    golden_recovery = read_offset_checkpoint(case / "recovery-point-offset-checkpoint")
    assert recovery.as_dict() == golden_recovery.as_dict()


def test_derived_cleaner_checkpoint_is_the_active_segment_base_as_in_golden_compaction(
    golden: Path,
) -> None:
    """golden compaction pass1: segments 0 and 15 after cleaning; checkpoint says 15."""
    spec = {
        "name": "compact-like",
        "description": "golden compaction pass1 segment bases",
        "checkpoints": {"cleaner-offset-checkpoint": {"derive": True}},
        "topics": [
            {
                "name": "golden-compact",
                "cleanup_policy": "compact",
                "partitions": [
                    {
                        "partition": 0,
                        "batches": [
                            {"base_offset": "0", "records": _records(0, 3)},
                            {"base_offset": "15", "roll": True, "records": _records(15, 1)},
                        ],
                    }
                ],
            }
        ],
    }
    tree = build_log_dir(parse_spec(spec, file="compact-like.json"))
    expected = (golden / "compaction" / "pass1" / "cleaner-offset-checkpoint").read_bytes()
    assert tree["cleaner-offset-checkpoint"] == expected


# --- errors ------------------------------------------------------------------------------


def _broken_spec(tmp_path: Path, mutate: Callable[[dict[str, Any]], None]) -> Path:
    document = json.loads((default_logs_root() / "specs" / "codecs-v2.json").read_text("utf-8"))
    document = copy.deepcopy(document)
    document["name"] = "broken"
    mutate(document)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _first_batch(document: dict[str, Any]) -> dict[str, Any]:
    batch: dict[str, Any] = document["topics"][0]["partitions"][0]["batches"][0]
    return batch


def test_schema_error_names_the_file_and_the_json_path(tmp_path: Path) -> None:
    path = _broken_spec(tmp_path, lambda d: _first_batch(d).update(codec="brotli"))
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    message = str(raised.value)
    assert str(path) in message
    assert "$.topics[0].partitions[0].batches[0].codec" in message
    assert "brotli" in message


def test_rule_error_names_the_file_and_the_json_path(tmp_path: Path) -> None:
    """Headers in a magic-0 batch pass the schema but not the magic rules."""
    path = _broken_spec(
        tmp_path, lambda d: d["topics"][0]["partitions"][0]["batches"][1].update(magic=0)
    )
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    assert raised.value.path == "$.topics[0].partitions[0].batches[1].records[0].headers"
    assert str(path) in str(raised.value)


def test_int64_strings_out_of_range_are_rejected(tmp_path: Path) -> None:
    path = _broken_spec(
        tmp_path, lambda d: _first_batch(d)["records"][0].update(timestamp="9223372036854775808")
    )
    with pytest.raises(SpecError, match=r"records\[0\]\.timestamp"):
        load_spec(path)


def test_cli_reports_a_spec_error_in_one_line_and_exits_2(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    path = _broken_spec(tmp_path, lambda d: _first_batch(d).update(base_offset="x"))
    run = lethe("fixtures", "build", "--out", str(tmp_path / "out"), str(path))
    assert run.status == 2
    assert "Traceback" not in run.err
    assert str(path) in run.err and "$.topics[0].partitions[0].batches[0].base_offset" in run.err
    assert not (tmp_path / "out").exists()


def test_cli_check_lists_differing_missing_and_extra_files_and_exits_1(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    out = tmp_path / "logs"
    assert lethe("fixtures", "build", "--out", str(out), "tombstones").status == 0
    assert lethe("fixtures", "build", "--check", "--out", str(out), "tombstones").status == 0
    segment = out / "tombstones" / "tombstones-0" / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF
    segment.write_bytes(bytes(data))
    (out / "tombstones" / "tombstones-0" / "partition.metadata").unlink()
    (out / "tombstones" / "stray.txt").write_text("x")

    run = lethe("fixtures", "build", "--check", "--out", str(out), "tombstones")
    assert run.status == 1
    assert f"differs: {segment}" in run.out
    assert "missing: " in run.out and "tombstones-0/partition.metadata" in run.out
    assert "extra: " in run.out and "tombstones/stray.txt" in run.out


def test_cli_reports_every_schema_fault_of_a_spec(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    def two_faults(document: dict[str, Any]) -> None:
        _first_batch(document).update(codec="brotli")
        document["topics"][0]["segment_bytes"] = "big"

    path = _broken_spec(tmp_path, two_faults)
    run = lethe("fixtures", "build", "--out", str(tmp_path / "out"), str(path))
    assert run.status == 2
    lines = run.err.splitlines()
    assert len(lines) == 2
    assert any("batches[0].codec" in line for line in lines)
    assert any("$.topics[0].segment_bytes" in line for line in lines)


def test_compacted_topic_spec_rejects_a_record_without_key(tmp_path: Path) -> None:
    """Kafka refuses key-less records on a compacted topic (INVALID_RECORD), so specs do too."""

    def compact(document: dict[str, Any]) -> None:
        document["topics"][0]["cleanup_policy"] = "compact"

    with pytest.raises(SpecError) as raised:
        load_spec(_broken_spec(tmp_path, compact))
    assert raised.value.path == "$.topics[0].partitions[0].batches[0].records[0].key"
