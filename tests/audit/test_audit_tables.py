"""The audit tables equal Kafka's dump of the golden files and lethe's single-process decoders.

Expected values come from kafka-dump-log (``dump.txt``), ``case.json``, the
golden README, or lethe_formats' Construct decoders (``decode_log``, the
checkpoint and coordinator readers), never from the audit itself.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import xxhash
from audit_support import (
    batch_lines,
    dump_sections,
    golden_dumps,
    index_lines,
    record_lines,
    table_rows,
)
from conftest import GOLDEN, LOGS
from lethe_formats.coordinator import OffsetCommitKey, decode_record
from lethe_formats.model import LegacyMessage, RecordBatch
from lethe_formats.records import decode_log
from lethe_formats.storage.checkpoint import (
    OFFSET_CHECKPOINT_FILES,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
)
from lethe_tools.inspect.problems import Problems
from lethe_tools.inspect.verify_tree import VerifyOptions, verify_paths

Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def tables(audit_out: tuple[Path, Any]) -> dict[str, Rows]:
    out, _ = audit_out
    names = ("partitions", "segments", "batches", "records", "indexes", "checkpoints", "offsets")
    return {name: table_rows(out, name) for name in (*names, "problems")}


def _by_file(rows: Rows, key: str = "file") -> dict[str, Rows]:
    grouped: dict[str, Rows] = defaultdict(list)
    for row in rows:
        grouped[row[key]].append(row)
    return grouped


def _golden_sections(suffix: str) -> list[tuple[Path, list[str]]]:
    return [
        (path, lines)
        for dump in golden_dumps(GOLDEN)
        for path, lines in dump_sections(dump).items()
        if path.suffix == suffix
    ]


def test_batches_equal_kafka_dump_log_for_every_golden_segment(tables: dict[str, Rows]) -> None:
    batches = _by_file(tables["batches"])
    sections = _golden_sections(".log")
    assert len(sections) >= 20
    for path, lines in sections:
        rows = sorted(batches[str(path)], key=lambda row: row["position"])
        expected = [
            (
                int(b["baseOffset"]),
                int(b["lastOffset"]),
                int(b["count"]),
                int(b["position"]),
                int(b["size"]),
                int(b["magic"]),
                b["compresscodec"],
                int(b["crc"]),
                b["isvalid"] == "true",
                int(b["producerId"]),
                int(b["producerEpoch"]),
                int(b["baseSequence"]),
                int(b["partitionLeaderEpoch"]),
                b["isTransactional"] == "true",
                b["isControl"] == "true",
                None
                if b["deleteHorizonMs"] == "OptionalLong.empty"
                else int(b["deleteHorizonMs"].removeprefix("OptionalLong[").rstrip("]")),
                int(b.get("CreateTime", b.get("LogAppendTime", "-1"))),
            )
            for b in batch_lines(lines)
        ]
        actual = [
            (
                r["base_offset"],
                r["last_offset"],
                r["records_count"],
                r["position"],
                r["size"],
                r["magic"],
                r["compression"],
                r["crc"],
                r["crc_ok"],
                r["producer_id"],
                r["producer_epoch"],
                r["base_sequence"],
                r["partition_leader_epoch"],
                r["is_transactional"],
                r["is_control"],
                r["delete_horizon"],
                r["max_timestamp"],
            )
            for r in rows
        ]
        assert actual == expected, path


def test_records_equal_kafka_dump_log_for_every_golden_segment(tables: dict[str, Rows]) -> None:
    records = _by_file(tables["records"])
    control_names = {"ABORT": 0, "COMMIT": 1}
    for path, lines in _golden_sections(".log"):
        rows = sorted(records[str(path)], key=lambda row: row["offset"])
        expected = [
            (
                int(r["offset"]),
                int(r.get("CreateTime", r.get("LogAppendTime", "-1"))),
                int(r["keySize"]),
                int(r["valueSize"]),
                0 if r["headerKeys"] == "[]" else r["headerKeys"].count(",") + 1,
                control_names.get(r.get("endTxnMarker", "")),
            )
            for r in record_lines(lines)
        ]
        actual = [
            (
                r["offset"],
                r["timestamp"],
                r["key_size"],
                r["value_size"],
                r["headers_count"],
                r["control_type"],
            )
            for r in rows
        ]
        assert actual == expected, path


def _decoded(path: str) -> list[RecordBatch | LegacyMessage]:
    with open(path, "rb") as handle:
        return decode_log(handle.read(), file=path)


def _expected_records(entry: RecordBatch | LegacyMessage) -> list[tuple[Any, ...]]:
    """(offset, timestamp, key hash, key size, value size, tombstone, headers, attributes)."""

    def key_hash(key: bytes | None) -> int | None:
        """XXH64 (seed 0) from the reference library, as a signed 64-bit value."""
        if key is None:
            return None
        value = xxhash.xxh64_intdigest(key)
        return value - (1 << 64) if value >= 1 << 63 else value

    def size(data: bytes | None) -> int:
        return -1 if data is None else len(data)

    if isinstance(entry, RecordBatch):
        return [
            (
                entry.offset_of(r),
                entry.timestamp_of(r),
                key_hash(r.key),
                size(r.key),
                size(r.value),
                r.value is None,
                len(r.headers),
                r.attributes,
            )
            for r in entry.records
        ]
    messages = entry.inner or (entry,)
    append = entry.timestamp if entry.timestamp_type.name == "LOG_APPEND_TIME" else None
    return [
        (
            m.offset,
            append if append is not None else (-1 if m.timestamp is None else m.timestamp),
            key_hash(m.key),
            size(m.key),
            size(m.value),
            m.value is None,
            0,
            m.attributes,
        )
        for m in messages
    ]


def _all_logs() -> list[str]:
    return sorted(
        str(path)
        for root in (GOLDEN, LOGS)
        for path in root.rglob("*.log")
        if path.parent.name != root.name and path.name[:1].isdigit()
    )


def test_records_and_batches_equal_lethe_decode_log_for_every_fixture_segment(
    tables: dict[str, Rows],
) -> None:
    records, batches = _by_file(tables["records"]), _by_file(tables["batches"])
    logs = _all_logs()
    assert len(logs) == len(tables["segments"])
    for path in logs:
        entries = _decoded(path)
        expected = [row for entry in entries for row in _expected_records(entry)]
        actual = [
            (
                r["offset"],
                r["timestamp"],
                r["key_hash"],
                r["key_size"],
                r["value_size"],
                r["is_tombstone"],
                r["headers_count"],
                r["record_attributes"],
            )
            for r in sorted(records[path], key=lambda row: (row["batch_position"], row["offset"]))
        ]
        assert actual == expected, path
        heads = [
            (e.header.base_offset, e.header.last_offset, e.header.attributes, 2)
            if isinstance(e, RecordBatch)
            else ((e.inner or (e,))[0].offset, e.offset, e.attributes, e.magic)
            for e in entries
        ]
        rows = sorted(batches[path], key=lambda row: row["position"])
        assert [
            (r["base_offset"], r["last_offset"], r["attributes"], r["magic"]) for r in rows
        ] == heads, path


def test_segments_summarise_each_log_file(tables: dict[str, Rows]) -> None:
    segments = {row["file"]: row for row in tables["segments"]}
    for path in _all_logs():
        entries = _decoded(path)
        row = segments[path]
        counts = [
            e.header.records_count if isinstance(e, RecordBatch) else len(e.inner or (e,))
            for e in entries
        ]
        assert row["size"] == os.path.getsize(path) == row["valid_bytes"]
        assert row["batch_count"] == len(entries)
        assert row["record_count"] == sum(counts)
        assert row["base_offset"] == int(os.path.basename(path)[:20])
        assert row["crc_failures"] == 0 and row["scan_error"] is None
    by_dir = _by_file(list(segments.values()), "file")
    actives = defaultdict(list)
    for path in by_dir:
        actives[os.path.dirname(path)].append((int(os.path.basename(path)[:20]), path))
    for files in actives.values():
        newest = max(files)[1]
        assert [p for _, p in sorted(files) if segments[p]["is_active"]] == [newest]


def test_delete_records_segments_are_the_ones_kafka_left(tables: dict[str, Rows]) -> None:
    # README: "The segments left were p0 [16, 24, 32], p1 [24, 32], p2 [24]".
    left: dict[int, list[int]] = defaultdict(list)
    for row in tables["segments"]:
        if row["topic"] == "golden-delrec":
            left[row["partition"]].append(row["base_offset"])
    assert {p: sorted(v) for p, v in left.items()} == {0: [16, 24, 32], 1: [24, 32], 2: [24]}


def test_indexes_equal_kafka_dump_log(tables: dict[str, Rows]) -> None:
    indexes = _by_file(tables["indexes"])
    checked = 0
    for suffix, first in ((".index", "offset"), (".timeindex", "timestamp")):
        for path, lines in _golden_sections(suffix):
            rows = sorted(indexes.get(str(path), []), key=lambda row: row["entry"])
            if suffix == ".index":
                expected = [
                    (int(e["offset"]), int(e["position"])) for e in index_lines(lines, first)
                ]
                actual = [(r["offset"], r["log_position"]) for r in rows]
            else:
                expected = [
                    (int(e["timestamp"]), int(e["offset"])) for e in index_lines(lines, first)
                ]
                actual = [(r["timestamp"], r["offset"]) for r in rows]
            assert actual == expected, path
            checked += len(expected)
    assert checked > 20


def test_checkpoints_equal_lethe_checkpoint_readers(tables: dict[str, Rows]) -> None:
    actual = sorted(
        (
            r["file"],
            r["kind"],
            r["topic"],
            r["partition"],
            r["offset"],
            r["epoch"],
            r["start_offset"],
        )
        for r in tables["checkpoints"]
    )
    expected = []
    for root in (GOLDEN, LOGS):
        for name in OFFSET_CHECKPOINT_FILES:
            for path in root.rglob(name):
                for e in read_offset_checkpoint(path.read_bytes()).entries:
                    expected.append((str(path), name, e.topic, e.partition, e.offset, None, None))
        for path in root.rglob("leader-epoch-checkpoint"):
            topic, _, partition = path.parent.name.rpartition("-")
            for entry in read_leader_epoch_checkpoint(path.read_bytes()).entries:
                expected.append(
                    (
                        str(path),
                        "leader-epoch-checkpoint",
                        topic,
                        int(partition),
                        None,
                        entry.epoch,
                        entry.start_offset,
                    )
                )
    assert actual == sorted(expected)


def test_partitions_carry_topic_id_and_the_checkpointed_log_start_offset(
    tables: dict[str, Rows],
) -> None:
    case = json.loads((GOLDEN / "delete-records" / "case.json").read_text())
    topic_id = case["topics"][0]["topic_id"]
    rows = {r["partition"]: r for r in tables["partitions"] if r["topic"] == "golden-delrec"}
    # README: log-start-offset-checkpoint reads "golden-delrec 0 19 / golden-delrec 2 30";
    # p1's start offset equals its first segment's base, so Kafka leaves it out.
    assert {p: r["log_start_offset"] for p, r in rows.items()} == {0: 19, 1: None, 2: 30}
    assert {r["topic_id"] for r in rows.values()} == {topic_id}
    assert {p: (r["first_base_offset"], r["active_base_offset"]) for p, r in rows.items()} == {
        0: (16, 32),
        1: (24, 32),
        2: (24, 24),
    }
    assert all(r["dir_kind"] == "live" and r["high_watermark"] is not None for r in rows.values())


def test_latest_commit_per_group_equals_what_offset_fetch_returned(tables: dict[str, Rows]) -> None:
    case = json.loads((GOLDEN / "consumer-offsets" / "case.json").read_text())
    fetched = next(s for s in case["steps"] if s["op"] == "list_group_offsets (OffsetFetch)")
    expected = {
        (group, "golden-orders", e["partition"]): (e["offset"], e["metadata"], e["leader_epoch"])
        for group, entries in fetched["results"].items()
        for e in entries
    }
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for row in sorted(tables["offsets"], key=lambda r: (r["file"], r["log_offset"])):
        latest[(row["group"], row["topic"], row["partition"])] = row
    actual = {
        key: (r["committed_offset"], r["metadata"], r["leader_epoch"])
        for key, r in latest.items()
        if not r["is_tombstone"]
    }
    assert actual == expected


def test_offsets_rows_equal_coordinator_decoding(tables: dict[str, Rows]) -> None:
    expected = []
    for path in sorted((GOLDEN / "consumer-offsets").rglob("*.log")):
        partition = int(path.parent.name.rpartition("-")[2])
        for batch in _decoded(str(path)):
            assert isinstance(batch, RecordBatch)
            if batch.header.is_control:
                continue
            for record in batch.records:
                decoded = decode_record(record)
                if not isinstance(decoded.key, OffsetCommitKey):
                    continue
                value = decoded.value
                expected.append(
                    (
                        str(path),
                        partition,
                        batch.offset_of(record),
                        decoded.key.group,
                        decoded.key.topic,
                        decoded.key.partition,
                        value is None,
                        None if value is None else value.offset,
                        None if value is None else value.commit_timestamp,
                        None if value is None else value.version,
                    )
                )
    actual = sorted(
        (
            r["file"],
            r["coordinator_partition"],
            r["log_offset"],
            r["group"],
            r["topic"],
            r["partition"],
            r["is_tombstone"],
            r["committed_offset"],
            r["commit_timestamp"],
            r["value_version"],
        )
        for r in tables["offsets"]
    )
    assert actual == sorted(expected) and len(actual) == 9


def test_no_problems_where_lethe_verify_finds_none(
    tables: dict[str, Rows], audit_out: tuple[Path, Any]
) -> None:
    problems = Problems()
    verify_paths([str(GOLDEN), str(LOGS)], VerifyOptions(deep=True), problems)
    assert len(problems) == 0
    assert tables["problems"] == []
    assert audit_out[1].problems == 0
