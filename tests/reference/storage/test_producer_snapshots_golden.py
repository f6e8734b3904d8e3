"""Producer snapshots against the ones a real Kafka 4.0.0 wrote (fixtures/golden).

For every golden ``N.snapshot``: start from Kafka's previous snapshot of that
partition (or an empty table at offset 0), replay the golden segments' batches
up to offset N with lethe's producer state, and encode the table: the bytes
must be Kafka's file, byte for byte (entries, their order, CRC). The same code
decodes both, and ``lethe dump`` prints the golden files as kafka-dump-log did.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.records.scan import LogScanner
from lethe_formats.storage.producer_snapshot import (
    encode_producer_snapshot,
    kafka_dump_line,
    read_producer_snapshot,
)
from lethe_reference.storage.producer_state import ProducerBatch, ProducerTable, producer_batches

GOLDEN = fixtures_root() / "golden"
PARTITIONS = sorted({p.parent for p in GOLDEN.glob("**/*.snapshot")})
CASES = [
    (partition, path) for partition in PARTITIONS for path in sorted(partition.glob("*.snapshot"))
]
NO_EXPIRY = 2**62


def _batches(partition: Path) -> list[ProducerBatch]:
    found: list[ProducerBatch] = []
    for log in sorted(partition.glob("*.log")):
        data = log.read_bytes()
        found.extend(producer_batches(data, LogScanner(data), str(log)))
    return found


def _offset(path: Path) -> int:
    return int(path.name.split(".")[0])


def _replayed(partition: Path, target: int) -> bytes | None:
    """Kafka's bytes as lethe rebuilds them, or None when the history is gone."""
    table = ProducerTable(partition.name)
    earlier = [p for p in partition.glob("*.snapshot") if _offset(p) < target]
    start = 0
    if earlier:
        previous = max(earlier, key=_offset)
        start = _offset(previous)
        table.load(read_producer_snapshot(previous.read_bytes()).entries, 0, NO_EXPIRY)
    batches = _batches(partition)
    if start == 0 and batches and batches[0].header.base_offset > 0:
        return None  # segments below were deleted and no snapshot remembers them
    for batch in batches:
        if start <= batch.header.last_offset < target and batch.header.producer_id >= 0:
            table.apply(batch)
    return encode_producer_snapshot(table.snapshot_entries())


def _history_gone(partition: Path, snapshot: Path) -> bool:
    """The oldest snapshot of a partition whose first batches were deleted (retention,
    DeleteRecords) or compacted away: no replay can rebuild it, Kafka's included."""
    first_batch = _batches(partition)[0].header.base_offset
    oldest = min(_offset(p) for p in partition.glob("*.snapshot"))
    return first_batch > 0 and _offset(snapshot) == oldest


REPLAYABLE = [(p, s) for p, s in CASES if not _history_gone(p, s)]


@pytest.mark.parametrize(
    ("partition", "snapshot"),
    REPLAYABLE,
    ids=[str(p.relative_to(GOLDEN)) for _, p in REPLAYABLE],
)
def test_replay_writes_kafkas_snapshot_bytes(partition: Path, snapshot: Path) -> None:
    assert _replayed(partition, _offset(snapshot)) == snapshot.read_bytes()


def test_only_snapshots_without_history_are_left_out() -> None:
    """The cases the byte test leaves out are exactly those whose history is gone,
    and they are few: every other golden snapshot is rebuilt byte for byte."""
    left_out = [(p, s) for p, s in CASES if (p, s) not in REPLAYABLE]
    assert [_replayed(p, _offset(s)) for p, s in left_out] == [None] * len(left_out)
    assert len(REPLAYABLE) >= 38 and len(left_out) <= 5
    assert sum(bool(read_producer_snapshot(s.read_bytes()).entries) for _, s in REPLAYABLE) >= 30


def _kafka_dump_lines(dump: Path, name: str) -> list[str]:
    text = dump.read_text()
    section = text.split(f"--files {name}\n", 1)[1].split("### ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("producerId:")]


def test_golden_snapshots_print_as_kafka_dump_log_printed_them() -> None:
    compared = 0
    for partition, snapshot in CASES:
        dump = partition.parent / "dump.txt"
        name = f"{partition.name}/{snapshot.name}"
        if not dump.exists() or f"--files {name}\n" not in dump.read_text():
            continue
        kafka = _kafka_dump_lines(dump, name)
        ours = [kafka_dump_line(e) for e in read_producer_snapshot(snapshot.read_bytes()).entries]
        assert [line.rstrip() for line in ours] == [line.rstrip() for line in kafka], name
        compared += 1
    assert compared >= 10
    assert re.match(r"\d{20}\.snapshot", CASES[0][1].name)
