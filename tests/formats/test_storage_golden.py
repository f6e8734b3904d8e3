"""Every non-record file Kafka 4.0.0 wrote under fixtures/golden decodes to what
kafka-dump-log printed for it (dump.txt), to the facts in case.json / README,
and re-encodes to the identical bytes."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.storage.checkpoint import (
    CHECKPOINT_KINDS,
    OFFSET_CHECKPOINT_FILES,
    EpochEntry,
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    TopicPartitionOffset,
    format_checkpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
)
from lethe_formats.storage.clean_shutdown import format_clean_shutdown, read_clean_shutdown
from lethe_formats.storage.filenames import parse_partition_dir_name, parse_segment_file_name
from lethe_formats.storage.index import (
    check_offset_index,
    check_time_index,
    encode_offset_index,
    encode_time_index,
    read_offset_index,
    read_time_index,
)
from lethe_formats.storage.meta_properties import format_meta_properties, read_meta_properties
from lethe_formats.storage.partition_metadata import (
    format_partition_metadata,
    read_partition_metadata,
)
from lethe_formats.storage.producer_snapshot import (
    encode_producer_snapshot,
    kafka_dump_line,
    read_producer_snapshot,
)
from lethe_formats.storage.txn_index import check_txn_index, encode_txn_index, read_txn_index

GOLDEN = fixtures_root() / "golden"
DUMPS = sorted(GOLDEN.rglob("dump.txt"))


@cache
def dump_sections(dump: Path) -> dict[str, list[str]]:
    """kafka-dump-log stdout per dumped file (relative path), 'Dumping' line dropped."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    text = dump.read_bytes().decode("utf-8", "surrogateescape")
    for line in text.split("\n"):
        if line.startswith("### bin/kafka-dump-log.sh --files "):
            current = sections.setdefault(line.split()[3], [])
        elif line.startswith("### "):
            current = None
        elif current is not None and not line.startswith("Dumping "):
            current.append(line)
    return {name: [line for line in lines if line] for name, lines in sections.items()}


def golden_files(*suffixes: str) -> list[tuple[Path, str]]:
    """(file, its dump lines) for every golden file with one of ``suffixes``."""
    found = []
    for dump in DUMPS:
        for path in sorted(dump.parent.rglob("*")):
            if path.suffix in suffixes:
                rel = str(path.relative_to(dump.parent))
                found.append((path, rel))
    return found


def dump_lines(path: Path) -> list[str]:
    for dump in DUMPS:
        if dump.parent in path.parents:
            return dump_sections(dump)[str(path.relative_to(dump.parent))]
    raise AssertionError(f"no dump.txt covers {path}")


def ids(files: list[tuple[Path, str]]) -> list[str]:
    return [str(path.relative_to(GOLDEN)) for path, _ in files]


INDEXES = golden_files(".index")
TIME_INDEXES = golden_files(".timeindex")
TXN_INDEXES = golden_files(".txnindex")
SNAPSHOTS = golden_files(".snapshot")


def test_golden_set_has_every_kind_of_file() -> None:
    assert len(INDEXES) >= 20 and len(TIME_INDEXES) >= 20
    assert len(TXN_INDEXES) >= 2 and len(SNAPSHOTS) >= 20


@pytest.mark.parametrize(("path", "rel"), INDEXES, ids=ids(INDEXES))
def test_offset_index_matches_kafka_dump_log(path: Path, rel: str) -> None:
    data = path.read_bytes()
    base = parse_segment_file_name(path.name).base_offset
    lines = dump_lines(path)
    if lines == [f"{rel} is empty."]:
        expected = []
    else:
        parsed = [re.fullmatch(r"offset: (\d+) position: (\d+)", line) for line in lines]
        assert all(parsed), lines
        expected = [(int(m[1]), int(m[2])) for m in parsed if m]
    entries = read_offset_index(data, file=rel)
    assert [(base + e.relative_offset, e.position) for e in entries] == expected
    assert encode_offset_index(entries) == data
    assert check_offset_index(data, base_offset=base, file=rel) == []


@pytest.mark.parametrize(("path", "rel"), TIME_INDEXES, ids=ids(TIME_INDEXES))
def test_time_index_matches_kafka_dump_log(path: Path, rel: str) -> None:
    data = path.read_bytes()
    base = parse_segment_file_name(path.name).base_offset
    parsed = [re.fullmatch(r"timestamp: (-?\d+) offset: (\d+)", line) for line in dump_lines(path)]
    assert all(parsed)
    expected = [(int(m[1]), int(m[2])) for m in parsed if m]
    entries = read_time_index(data, file=rel)
    assert [(e.timestamp, base + e.relative_offset) for e in entries] == expected
    assert encode_time_index(entries) == data
    assert check_time_index(data, base_offset=base, file=rel) == []


TXN_LINE = re.compile(
    r"version: (-?\d+) producerId: (-?\d+) firstOffset: (-?\d+) "
    r"lastOffset: (-?\d+) lastStableOffset: (-?\d+)"
)


@pytest.mark.parametrize(("path", "rel"), TXN_INDEXES, ids=ids(TXN_INDEXES))
def test_txn_index_matches_kafka_dump_log(path: Path, rel: str) -> None:
    data = path.read_bytes()
    parsed = [TXN_LINE.fullmatch(line) for line in dump_lines(path)]
    assert parsed and all(parsed)
    expected = [tuple(int(g) for g in m.groups()) for m in parsed if m]
    entries = read_txn_index(data, file=rel)
    assert [
        (t.version, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
        for t in entries
    ] == expected
    assert encode_txn_index(entries) == data
    base = parse_segment_file_name(path.name).base_offset
    assert check_txn_index(data, base_offset=base, file=rel) == []


SNAPSHOT_LINE = re.compile(
    r"producerId: (-?\d+) producerEpoch: (-?\d+) coordinatorEpoch: (-?\d+) "
    r"currentTxnFirstOffset: (OptionalLong\.empty|OptionalLong\[\d+\]) lastTimestamp: (-?\d+) "
    r"(?:firstSequence: (-?\d+) lastSequence: (-?\d+) lastOffset: (-?\d+) "
    r"offsetDelta: (-?\d+) timestamp: (-?\d+))?"
)


@pytest.mark.parametrize(("path", "rel"), SNAPSHOTS, ids=ids(SNAPSHOTS))
def test_producer_snapshot_matches_kafka_dump_log(path: Path, rel: str) -> None:
    data = path.read_bytes()
    snapshot = read_producer_snapshot(data, file=rel)
    lines = dump_lines(path)
    assert len(snapshot.entries) == len(lines)
    for entry, line in zip(snapshot.entries, lines, strict=True):
        m = SNAPSHOT_LINE.fullmatch(line)
        assert m is not None, line
        txn = None if m[4] == "OptionalLong.empty" else int(m[4][13:-1])
        assert (entry.producer_id, entry.producer_epoch, entry.coordinator_epoch) == (
            int(m[1]),
            int(m[2]),
            int(m[3]),
        )
        assert entry.ongoing_txn_first_offset == txn
        assert entry.timestamp == int(m[5])
        assert m[6] is not None  # every golden producer has batch metadata
        assert entry.first_sequence == int(m[6])
        assert (entry.last_sequence, entry.last_offset, entry.offset_delta) == (
            int(m[7]),
            int(m[8]),
            int(m[9]),
        )
        assert entry.timestamp == int(m[10])
        assert kafka_dump_line(entry) == line
    assert encode_producer_snapshot(snapshot.entries) == data


def root_files(name: str) -> list[Path]:
    return sorted(GOLDEN.rglob(name))


CHECKPOINTS = [p for name in CHECKPOINT_KINDS for p in root_files(name)]


@pytest.mark.parametrize("path", CHECKPOINTS, ids=[str(p.relative_to(GOLDEN)) for p in CHECKPOINTS])
def test_checkpoint_reformats_to_the_identical_bytes(path: Path) -> None:
    checkpoint = CHECKPOINT_KINDS[path.name](path)
    data = path.read_bytes()
    if not data:  # created empty by CheckpointFile's constructor, never written
        assert checkpoint.version is None and checkpoint.entries == ()
    else:
        assert checkpoint.version == 0
        assert int(data.split(b"\n")[1]) == len(checkpoint.entries)
    assert format_checkpoint(checkpoint).encode() == data


def test_delete_records_log_start_offset_checkpoint_is_as_the_readme_says() -> None:
    checkpoint = read_offset_checkpoint(GOLDEN / "delete-records" / "log-start-offset-checkpoint")
    expected = (
        TopicPartitionOffset("golden-delrec", 0, 19),
        TopicPartitionOffset("golden-delrec", 2, 30),
    )
    assert checkpoint == OffsetCheckpoint(0, expected)
    assert checkpoint.as_dict() == {("golden-delrec", 0): 19, ("golden-delrec", 2): 30}


def test_delete_records_checkpoints_agree_with_case_json() -> None:
    case = json.loads((GOLDEN / "delete-records" / "case.json").read_text())
    hw = read_offset_checkpoint(GOLDEN / "delete-records" / "replication-offset-checkpoint")
    assert hw.as_dict() == {
        ("golden-delrec", int(p)): o for p, o in case["high_watermarks"].items()
    }
    # only partitions whose start offset is above their first segment's base are listed
    lso = read_offset_checkpoint(GOLDEN / "delete-records" / "log-start-offset-checkpoint")
    for (_, partition), offset in lso.as_dict().items():
        assert case["log_start_offsets_after_delete"][str(partition)] == offset
    assert ("golden-delrec", 1) not in lso.as_dict()  # p1 starts exactly at segment 24


def test_leader_epoch_checkpoint_moves_to_the_log_start_offset() -> None:
    case = json.loads((GOLDEN / "delete-records" / "case.json").read_text())
    for partition, start in case["log_start_offsets_after_delete"].items():
        path = GOLDEN / "delete-records" / f"golden-delrec-{partition}" / "leader-epoch-checkpoint"
        assert read_leader_epoch_checkpoint(path) == LeaderEpochCheckpoint(
            0, (EpochEntry(0, start),)
        )


def test_cleaner_offset_checkpoint_is_the_end_of_each_cleaned_dirty_section() -> None:
    log = (GOLDEN / "compaction" / "log-cleaner.log").read_text()
    ends = [int(end) for end in re.findall(r"dirty section = \[\d+, (\d+)\]", log)]
    assert len(ends) == 2
    for number, end in enumerate(ends, start=1):
        path = GOLDEN / "compaction" / f"pass{number}" / "cleaner-offset-checkpoint"
        assert read_offset_checkpoint(path).entries == (("golden-compact", 0, end),)
    before = read_offset_checkpoint(GOLDEN / "compaction" / "pass0" / "cleaner-offset-checkpoint")
    assert before == OffsetCheckpoint(None, ())  # never cleaned: the empty file Kafka creates


def test_offset_checkpoint_names_are_the_four_kafka_files() -> None:
    assert set(OFFSET_CHECKPOINT_FILES) <= {p.name for p in GOLDEN.glob("*/*")} | {
        p.name for p in GOLDEN.glob("*/*/*")
    }


PARTITION_METADATA = root_files("partition.metadata")


@pytest.mark.parametrize(
    "path", PARTITION_METADATA, ids=[str(p.relative_to(GOLDEN)) for p in PARTITION_METADATA]
)
def test_partition_metadata_has_the_topic_id_kafka_reported(path: Path) -> None:
    metadata = read_partition_metadata(path)
    topic = parse_partition_dir_name(path.parent.name).topic
    case = next(p for p in path.parents if (p / "case.json").exists())
    topics = json.loads((case / "case.json").read_text())["topics"]
    topic_ids = {t["name"]: t["topic_id"] for t in topics if "topic_id" in t}
    assert metadata.version == 0
    if topic in topic_ids:
        assert str(metadata.topic_id) == topic_ids[topic]
    assert len(metadata.topic_id_bytes) == 16
    assert format_partition_metadata(metadata.topic_id).encode() == path.read_bytes()


META = root_files("meta.properties")


@pytest.mark.parametrize("path", META, ids=[str(p.relative_to(GOLDEN)) for p in META])
def test_meta_properties_is_a_v1_kraft_node_1_file_and_reformats(path: Path) -> None:
    meta = read_meta_properties(path)
    assert (meta.version, meta.node_id) == (1, 1)  # node.id=1 in every case's broker settings
    assert meta.cluster_id is not None and len(meta.cluster_id) == 22
    assert meta.directory_id is not None
    assert meta.comments[0] == "#"
    text = format_meta_properties(meta, date_comment=meta.comments[1][1:])
    assert text.encode() == path.read_bytes()


SHUTDOWN = root_files(".kafka_cleanshutdown")


@pytest.mark.parametrize("path", SHUTDOWN, ids=[str(p.relative_to(GOLDEN)) for p in SHUTDOWN])
def test_clean_shutdown_marker_reformats(path: Path) -> None:
    marker = read_clean_shutdown(path)
    assert marker.version == 0 and marker.broker_epoch > 0
    assert format_clean_shutdown(marker.broker_epoch).encode() == path.read_bytes()


def test_delete_records_clean_shutdown_epoch() -> None:
    assert read_clean_shutdown(GOLDEN / "delete-records" / ".kafka_cleanshutdown").broker_epoch == 9
