"""Valid cases from Kafka's other files: indexes, snapshots, checkpoints, topic ids.

Theory of operation
-------------------
Same rule as :mod:`.authoring_golden`: each golden file is decoded here with
``struct`` (layouts in kafka-facts §1.4 and §3.5) and the result is held to
what Kafka printed for it in ``dump.txt``, or to what ``case.json`` recorded:

* ``.index``     ``offset: <base + relative> position: <pos>`` lines;
* ``.timeindex`` ``timestamp: T offset: <base + relative>`` lines;
* ``.txnindex``  ``version: producerId: firstOffset: lastOffset: lastStableOffset:``;
* ``.snapshot``  one line per producer (fields of ``dumpProducerIdSnapshot``);
* checkpoints    the low watermarks / high watermarks in ``case.json``
  (delete-records case), otherwise the file's own lines;
* ``partition.metadata``  the topic id ``case.json`` lists for the topic.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from lethe_conformance.formats.authoring_cases import Authored, file_input, valid
from lethe_conformance.formats.authoring_dump import index_lines, sections
from lethe_conformance.formats.authoring_wire import crc32c
from lethe_conformance.formats.tagged import int64

__all__ = ["golden_checkpoints", "golden_indexes", "golden_snapshots"]

_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")


def _dump(fixtures: Path, relative: str) -> list[dict[str, str]]:
    case_dir, part, name = relative.rsplit("/", 2)
    return index_lines(sections(fixtures / case_dir / "dump.txt")[f"{part}/{name}"])


def _base(relative: str) -> int:
    return int(relative.rsplit("/", 1)[1].split(".", maxsplit=1)[0])


def _offset_index(fixtures: Path, relative: str) -> dict[str, Any]:
    data = (fixtures / relative).read_bytes()
    rows = list(struct.iter_unpack(">ii", data))
    printed = [line for line in _dump(fixtures, relative) if line]
    assert [(int(p["offset"]), int(p["position"])) for p in printed] == [
        (_base(relative) + rel, pos) for rel, pos in rows
    ], relative
    return {"entries": [{"relativeOffset": rel, "position": pos} for rel, pos in rows]}


def _time_index(fixtures: Path, relative: str) -> dict[str, Any]:
    data = (fixtures / relative).read_bytes()
    rows = list(struct.iter_unpack(">qi", data))
    printed = [line for line in _dump(fixtures, relative) if line]
    assert [(int(p["timestamp"]), int(p["offset"])) for p in printed] == [
        (ts, _base(relative) + rel) for ts, rel in rows
    ], relative
    return {"entries": [{"timestamp": int64(ts), "relativeOffset": rel} for ts, rel in rows]}


def _txn_index(fixtures: Path, relative: str) -> dict[str, Any]:
    names = ("version", "producerId", "firstOffset", "lastOffset", "lastStableOffset")
    rows = list(struct.iter_unpack(">hqqqq", (fixtures / relative).read_bytes()))
    printed = [tuple(int(p[n]) for n in names) for p in _dump(fixtures, relative)]
    assert printed == rows, relative
    return {
        "entries": [
            {n: v if n == "version" else int64(v) for n, v in zip(names, row, strict=True)}
            for row in rows
        ]
    }


_INDEXES = [
    (
        "offset-index",
        "golden/codecs/golden-codecs-0/00000000000000000000.index",
        "golden-codecs",
        "offset index Kafka wrote for a segment of mixed codecs",
        _offset_index,
    ),
    (
        "offset-index",
        "golden/compaction/pass2/golden-compact-0/00000000000000000000.index",
        "golden-cleaned",
        "offset index of a segment rewritten by the cleaner",
        _offset_index,
    ),
    (
        "offset-index",
        "golden/compaction/pass1/golden-compact-0/00000000000000000015.index",
        "golden-empty",
        "empty offset index of a segment with one small batch",
        _offset_index,
    ),
    (
        "time-index",
        "golden/codecs/golden-codecs-0/00000000000000000000.timeindex",
        "golden-codecs",
        "time index Kafka wrote for a segment of mixed codecs",
        _time_index,
    ),
    (
        "time-index",
        "golden/compaction/pass1/golden-compact-0/00000000000000000015.timeindex",
        "golden-one-entry",
        "time index with the single entry written when the segment rolled",
        _time_index,
    ),
    (
        "txn-index",
        "golden/transactions/pass0/golden-txn-0/00000000000000000009.txnindex",
        "golden-aborted",
        "aborted-transaction index holding one aborted transaction",
        _txn_index,
    ),
]


def golden_indexes(fixtures: Path) -> list[Authored]:
    """``offset-index``, ``time-index`` and ``txn-index`` valid cases."""
    cases = []
    for kind, relative, name, description, reader in _INDEXES:
        source, data = file_input(fixtures, relative)
        cases.append(
            valid(
                f"{kind}/{name}",
                description,
                data,
                reader(fixtures, relative),
                provenance=f"Kafka 4.0.0 {relative}; checked against its dump.txt lines",
                source=source,
            )
        )
    return cases


def _optional_long(value: int) -> str:
    return f"OptionalLong[{value}]" if value >= 0 else "OptionalLong.empty"


def _check_snapshot_line(row: tuple[int, ...], printed: dict[str, str]) -> None:
    pid, epoch, last_seq, last_offset, delta, ts, coordinator, txn_first = row
    want = {
        "producerId": pid,
        "producerEpoch": epoch,
        "coordinatorEpoch": coordinator,
        "currentTxnFirstOffset": _optional_long(txn_first),
        "lastTimestamp": ts,
    }
    if last_offset >= 0:
        want |= {
            "firstSequence": last_seq - delta,
            "lastSequence": last_seq,
            "lastOffset": last_offset,
            "offsetDelta": delta,
            "timestamp": ts,
        }
    assert printed == {k: str(v) for k, v in want.items()}, (printed, want)


def _snapshot(fixtures: Path, relative: str) -> dict[str, Any]:
    data = (fixtures / relative).read_bytes()
    version, crc, count = struct.unpack_from(">hIi", data)
    assert version == 1 and crc32c(data[6:]) == crc
    rows = [_SNAPSHOT_ENTRY.unpack_from(data, 10 + 46 * i) for i in range(count)]
    assert 10 + 46 * count == len(data)
    printed = _dump(fixtures, relative)
    assert len(printed) == len(rows)
    for row, line in zip(rows, printed, strict=True):
        _check_snapshot_line(row, line)
    names = (
        "producerId",
        "producerEpoch",
        "lastSequence",
        "lastOffset",
        "offsetDelta",
        "timestamp",
        "coordinatorEpoch",
        "currentTxnFirstOffset",
    )
    int64s = {"producerId", "lastOffset", "timestamp", "currentTxnFirstOffset"}
    entries = [
        {n: int64(v) if n in int64s else v for n, v in zip(names, row, strict=True)} for row in rows
    ]
    return {"version": version, "crc": crc, "entries": entries}


_SNAPSHOTS = [
    (
        "golden/compaction/pass2/golden-compact-0/00000000000000000018.snapshot",
        "golden-two-producers",
        "producer snapshot with two idempotent producers",
    ),
    (
        "golden/transactions/pass0/golden-txn-0/00000000000000000003.snapshot",
        "golden-ongoing-transaction",
        "producer snapshot of a producer with an open transaction",
    ),
    (
        "golden/transactions/pass0/golden-txn-0/00000000000000000001.snapshot",
        "golden-empty",
        "producer snapshot with no producers",
    ),
]


def golden_snapshots(fixtures: Path) -> list[Authored]:
    """``producer-snapshot`` valid cases."""
    cases = []
    for relative, name, description in _SNAPSHOTS:
        source, data = file_input(fixtures, relative)
        cases.append(
            valid(
                f"producer-snapshot/{name}",
                description,
                data,
                _snapshot(fixtures, relative),
                provenance=f"Kafka 4.0.0 {relative}; checked against its dump.txt lines",
                source=source,
            )
        )
    return cases


def _offset_entries(text: str) -> list[dict[str, Any]]:
    rows = [line.split(" ") for line in text.splitlines()[2:]]
    return [{"topic": t, "partition": int(p), "offset": int64(int(o))} for t, p, o in rows]


def _checkpoint_values(fixtures: Path) -> dict[str, dict[str, int]]:
    case = json.loads((fixtures / "golden/delete-records/case.json").read_text())
    return {
        "log-start-offset-checkpoint": case["log_start_offsets_after_delete"],
        "replication-offset-checkpoint": case["high_watermarks"],
    }


def _check_delrec(fixtures: Path, name: str, entries: list[dict[str, Any]]) -> None:
    values = _checkpoint_values(fixtures)[name]
    for entry in entries:
        assert values[str(entry["partition"])] == int(entry["offset"]), entry
    if name == "replication-offset-checkpoint":
        assert len(entries) == len(values)


def _golden_checkpoint(
    fixtures: Path, relative: str, name: str, description: str, fmt: str
) -> Authored:
    source, data = file_input(fixtures, relative)
    text = data.decode("utf-8")
    lines = text.splitlines()
    if not lines:
        expected: dict[str, Any] = {"version": None, "entries": []}
    elif fmt == "offset":
        expected = {"version": int(lines[0]), "entries": _offset_entries(text)}
        assert int(lines[1]) == len(expected["entries"])
    else:
        rows = [line.split(" ") for line in lines[2:]]
        entries = [{"epoch": int(e), "startOffset": int64(int(s))} for e, s in rows]
        expected = {"version": int(lines[0]), "entries": entries}
    if relative.startswith("golden/delete-records/") and fmt == "offset":
        _check_delrec(fixtures, relative.rsplit("/", 1)[1], expected["entries"])
    return valid(
        f"checkpoint/{name}",
        description,
        data,
        expected,
        provenance=f"Kafka 4.0.0 {relative}",
        source=source,
        context={"format": fmt},
    )


_CHECKPOINTS = [
    (
        "golden/delete-records/log-start-offset-checkpoint",
        "golden-log-start-offsets",
        "log-start-offset-checkpoint after DeleteRecords on two partitions",
        "offset",
    ),
    (
        "golden/delete-records/replication-offset-checkpoint",
        "golden-high-watermarks",
        "replication-offset-checkpoint with three partitions",
        "offset",
    ),
    (
        "golden/consumer-offsets/recovery-point-offset-checkpoint",
        "golden-53-entries",
        "recovery-point-offset-checkpoint with 53 entries in HashMap order",
        "offset",
    ),
    (
        "golden/codecs/log-start-offset-checkpoint",
        "golden-zero-entries",
        "log-start-offset-checkpoint with a count of zero",
        "offset",
    ),
    (
        "golden/codecs/cleaner-offset-checkpoint",
        "golden-empty-file",
        "cleaner-offset-checkpoint created but never written (0 bytes)",
        "offset",
    ),
    (
        "golden/compaction/pass2/golden-compact-0/leader-epoch-checkpoint",
        "golden-leader-epochs",
        "leader-epoch-checkpoint with two epochs",
        "leader-epoch",
    ),
    (
        "golden/delete-records/golden-delrec-0/leader-epoch-checkpoint",
        "golden-leader-epoch-moved",
        "leader-epoch-checkpoint whose start offset moved to the log start offset",
        "leader-epoch",
    ),
]


def golden_checkpoints(fixtures: Path) -> list[Authored]:
    """``checkpoint`` and ``partition-metadata`` valid cases from golden files."""
    cases = [_golden_checkpoint(fixtures, *spec) for spec in _CHECKPOINTS]
    relative = "golden/codecs/golden-codecs-0/partition.metadata"
    source, data = file_input(fixtures, relative)
    topics = json.loads((fixtures / "golden/codecs/case.json").read_text())["topics"]
    topic_id = topics[0]["topic_id"]
    assert data == f"version: 0\ntopic_id: {topic_id}".encode()
    cases.append(
        valid(
            "partition-metadata/golden",
            "partition.metadata Kafka wrote, without a trailing newline",
            data,
            {"version": 0, "topicId": topic_id},
            provenance=f"Kafka 4.0.0 {relative}; topic id from case.json",
            source=source,
        )
    )
    return cases
