"""Valid record cases cut from the segments a real Kafka 4.0.0 broker wrote.

Theory of operation
-------------------
``fixtures/golden/`` holds log directories written by Apache Kafka 4.0.0 with
real clients, each with ``kafka-dump-log`` output (``dump.txt``) and what the
clients produced and read back (``case.json``). For each segment used here:

1. the bytes are read with the independent reader (:mod:`.authoring_read`);
2. every decoded batch and record is held to Kafka's dump lines
   (:func:`.authoring_dump.check_batches`) and, where the clients read the
   records back, to those records (key, value and header bytes, timestamp);
3. only then do the values become ``expected``.

Cases point into the golden files (path, sha256, byte range) instead of
inlining the bytes, so a reader can see they are Kafka's own bytes. Batches
cover every codec (librdkafka's raw snappy and the Java client's xerial
snappy), idempotent and transactional producers, COMMIT/ABORT control
batches, and the KIP-534 delete horizon set by the cleaner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lethe_conformance.formats.authoring_cases import Authored, file_input, valid
from lethe_conformance.formats.authoring_dump import check_batches, sections
from lethe_conformance.formats.authoring_read import read_batch, read_record
from lethe_conformance.formats.tagged import tag_bytes_to_bytes

__all__ = ["golden_batches", "golden_control_records", "golden_segments", "segment"]

CODECS = "golden/codecs/golden-codecs-0"
TXN0 = "golden/transactions/pass0/golden-txn-0"
TXN2 = "golden/transactions/pass2/golden-txn-0"
COMPACT1 = "golden/compaction/pass1/golden-compact-0"
DELREC = "golden/delete-records/golden-delrec-0"


def _log(base: int) -> str:
    return f"{base:020d}.log"


def segment(fixtures: Path, partition_dir: str, base: int) -> list[tuple[int, int, dict[str, Any]]]:
    """(position, end, tagged batch) for every batch of a golden segment, checked
    against the ``dump.txt`` lines Kafka printed for it."""
    data = (fixtures / partition_dir / _log(base)).read_bytes()
    out = []
    position = 0
    while position < len(data):
        batch, end = read_batch(data, position)
        out.append((position, end, batch))
        position = end
    case_dir, part = partition_dir.rsplit("/", 1)
    lines = sections(fixtures / case_dir / "dump.txt")[f"{part}/{_log(base)}"]
    check_batches([b for _, _, b in out], [p for p, _, _ in out], lines)
    return out


def _bytes(value: object) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return bytes.fromhex(value["hex"])
    assert isinstance(value, str)
    return value.encode("utf-8")


def _tag(tag: dict[str, str] | None) -> bytes | None:
    return None if tag is None else tag_bytes_to_bytes(tag)


def _check_read_back(fixtures: Path, batches: list[tuple[int, int, dict[str, Any]]]) -> None:
    """The codecs case: every record equals what kafka-python read back."""
    case = json.loads((fixtures / "golden/codecs/case.json").read_text())
    read_back = {r["offset"]: r for r in case["records_read_back"]["records"]}
    for _, _, batch in batches:
        for record in batch["records"]:
            got = read_back[int(batch["baseOffset"]) + record["offsetDelta"]]
            assert _tag(record["key"]) == _bytes(got["key"]), got
            assert _tag(record["value"]) == _bytes(got["value"]), got
            headers = [(_tag(h["key"]), _tag(h["value"])) for h in record["headers"]]
            assert headers == [(_bytes(k), _bytes(v)) for k, v in got["headers"]], got
            ts = int(batch["baseTimestamp"]) + int(record["timestampDelta"])
            assert ts == got["timestamp"], got


_BATCHES = [
    # (partition dir, segment base, batch index, name, description)
    (
        CODECS,
        0,
        0,
        "codec-none-headers-and-nulls",
        "uncompressed batch: null and empty keys and values, odd headers, non-UTF-8 value",
    ),
    (CODECS, 0, 1, "codec-gzip", "gzip batch from librdkafka"),
    (CODECS, 0, 2, "codec-snappy-raw", "snappy batch in librdkafka's raw framing"),
    (CODECS, 0, 3, "codec-lz4-idempotent", "lz4 batch from an idempotent librdkafka producer"),
    (CODECS, 22, 0, "codec-zstd", "zstd batch from librdkafka"),
    (CODECS, 22, 1, "codec-snappy-xerial", "snappy batch in the Java client's xerial framing"),
    (CODECS, 22, 2, "codec-gzip-java", "gzip batch from the Java console producer"),
    (
        COMPACT1,
        0,
        0,
        "delete-horizon-tombstone",
        "cleaned batch with the delete horizon as base timestamp and a negative timestamp delta",
    ),
    (
        COMPACT1,
        0,
        1,
        "delete-horizon-offset-gap",
        "cleaned idempotent batch with a delete horizon and a gap between offset deltas",
    ),
    (TXN0, 1, 0, "transactional-data", "transactional data batch"),
    (TXN0, 5, 0, "control-commit", "control batch holding a COMMIT marker"),
    (TXN0, 9, 0, "control-abort", "control batch holding an ABORT marker"),
    (
        TXN2,
        0,
        2,
        "control-commit-delete-horizon",
        "COMMIT marker batch that the cleaner gave a delete horizon",
    ),
    (
        DELREC,
        16,
        0,
        "idempotent-explicit-timestamps",
        "idempotent batch whose records carry explicit timestamps",
    ),
]


def golden_batches(fixtures: Path) -> list[Authored]:
    """``record-batch`` valid cases, one per interesting golden batch."""
    cases = []
    seen: dict[tuple[str, int], list[tuple[int, int, dict[str, Any]]]] = {}
    for part, base, index, name, description in _BATCHES:
        if (part, base) not in seen:
            seen[(part, base)] = segment(fixtures, part, base)
            if part == CODECS:
                _check_read_back(fixtures, seen[(part, base)])
        position, end, batch = seen[(part, base)][index]
        source, data = file_input(fixtures, f"{part}/{_log(base)}", position, end - position)
        cases.append(
            valid(
                f"record-batch/{name}",
                description,
                data,
                batch,
                provenance=f"Kafka 4.0.0 {part}/{_log(base)} at byte {position}; "
                "checked against its dump.txt lines",
                source=source,
            )
        )
    return cases


_SEGMENTS = [
    (CODECS, 0, "golden-codecs-0", "Kafka segment with none, gzip, raw snappy and lz4 batches"),
    (
        CODECS,
        22,
        "golden-codecs-22",
        "Kafka segment with zstd, xerial snappy and Java gzip batches",
    ),
    (
        COMPACT1,
        0,
        "golden-compaction-cleaned",
        "segment rewritten by the cleaner, delete horizons set",
    ),
    (TXN2, 0, "golden-transactions-cleaned", "cleaned segment with data and transaction markers"),
]


def golden_segments(fixtures: Path) -> list[Authored]:
    """``log-segment`` valid cases: whole golden ``.log`` files."""
    cases = []
    for part, base, name, description in _SEGMENTS:
        batches = segment(fixtures, part, base)
        source, data = file_input(fixtures, f"{part}/{_log(base)}")
        cases.append(
            valid(
                f"log-segment/{name}",
                description,
                data,
                {"entries": [b for _, _, b in batches]},
                provenance=f"Kafka 4.0.0 {part}/{_log(base)}; checked against its dump.txt",
                source=source,
            )
        )
    return cases


def _control_value(record: dict[str, Any]) -> dict[str, Any]:
    key = tag_bytes_to_bytes(record["key"])
    value = tag_bytes_to_bytes(record["value"])
    kind = int.from_bytes(key[2:4], "big", signed=True)
    return {
        "keyVersion": int.from_bytes(key[:2], "big", signed=True),
        "type": kind,
        "typeName": {0: "ABORT", 1: "COMMIT"}[kind],
        "endTxnMarker": {
            "version": int.from_bytes(value[:2], "big", signed=True),
            "coordinatorEpoch": int.from_bytes(value[2:6], "big", signed=True),
        },
    }


def golden_control_records(fixtures: Path) -> list[Authored]:
    """``control-record`` valid cases: the marker records of golden control batches."""
    cases = []
    for base, name, what in ((5, "commit", "COMMIT"), (9, "abort", "ABORT")):
        position, _, batch = segment(fixtures, TXN0, base)[0]
        data = (fixtures / TXN0 / _log(base)).read_bytes()
        record, end = read_record(data, position + 61)
        assert record == batch["records"][0]
        source, raw = file_input(
            fixtures, f"{TXN0}/{_log(base)}", position + 61, end - position - 61
        )
        cases.append(
            valid(
                f"control-record/{name}",
                f"{what} marker record written by Kafka",
                raw,
                _control_value(record),
                provenance=f"Kafka 4.0.0 {TXN0}/{_log(base)}, the record of its control batch; "
                "dump.txt prints its endTxnMarker line",
                source=source,
            )
        )
    return cases
