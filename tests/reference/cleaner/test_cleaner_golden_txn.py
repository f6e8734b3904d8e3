"""Transaction markers and aborted data through Kafka 4.0's three cleanings, byte for byte.

fixtures/golden/transactions (README "transactions"): pass0 before cleaning;
pass1 after the first cleaning (aborted data and overwritten committed data
gone, markers kept without a horizon, the aborted transaction still in the
cleaned ``.txnindex``); pass2 after two more cleanings (markers of emptied
transactions get a horizon, the ``.txnindex`` entry is gone); pass3 after the
horizon (those markers removed). Times come from log-cleaner.log and the
horizon in pass2/dump.txt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.storage.txn_index import encode_txn_index, read_txn_index
from lethe_reference.cleaner.algorithm import (
    CleanedSegment,
    CleanParams,
    SourceSegment,
    clean_log,
)
from lethe_reference.cleaner.filter import LastRecord

GOLDEN = fixtures_root() / "golden" / "transactions"
CONFIGS = json.loads((GOLDEN / "case.json").read_text())["topics"][0]["configs_at_creation"]
RETENTION_MS = int(CONFIGS["delete.retention.ms"])  # 5000
#: pass2/dump.txt: markers at 5 and 9 carry deleteHorizonMs: OptionalLong[1795289418346]
HORIZON_MS = 1795289418346
#: pass0 .../00000000000000000017.snapshot: producer 0, epoch 0, lastOffset 13
PRODUCERS = {0: LastRecord(13, 0)}


def _dir(capture: str) -> Path:
    return GOLDEN / capture / "golden-txn-0"


def _segments(capture: str) -> list[SourceSegment]:
    found = []
    for path in sorted(_dir(capture).glob("*.log")):
        txn = path.with_suffix(".txnindex")
        aborted = read_txn_index(txn.read_bytes()) if txn.exists() else ()
        found.append(
            SourceSegment(
                int(path.stem),
                path.read_bytes(),
                0,
                path.with_suffix(".index").stat().st_size,
                path.with_suffix(".timeindex").stat().st_size,
                tuple(aborted),
                str(path),
            )
        )
    return found


def _slice(capture: str, name: str, base: int, position: int, size: int) -> SourceSegment:
    data = (_dir(capture) / name).read_bytes()[position : position + size]
    return SourceSegment(base, data, 0, 0, 12)


def _as_source(cleaned: CleanedSegment) -> SourceSegment:
    return SourceSegment(
        cleaned.base_offset,
        cleaned.log,
        cleaned.last_modified_ms,
        len(cleaned.offset_index),
        len(cleaned.time_index),
        cleaned.aborted,
    )


def _round(segments: list[SourceSegment], dirty: int, uncleanable: int, now: int) -> CleanedSegment:
    params = CleanParams(
        first_dirty_offset=dirty,
        first_uncleanable_offset=uncleanable,
        now_ms=now,
        delete_retention_ms=RETENTION_MS,
        segment_bytes=1073741824,
        max_index_bytes=10485760,
        index_interval_bytes=4096,
        max_message_bytes=1048588,
        active_producers=PRODUCERS,
    )
    result = clean_log(segments, params)
    assert result.end_offset == uncleanable
    (cleaned,) = result.segments
    return cleaned


def _pass1() -> CleanedSegment:
    # log-cleaner.log 19:29:51,389: [0, 16), 11 segments; segment 16 active
    return _round(_segments("pass0"), 0, 16, 1795289391389)


def _pass2() -> CleanedSegment:
    # two rounds (log-cleaner.log): [16, 17) at the horizon's start time, then [17, 18)
    # at 19:30:14,453; offset 17 is copied unchanged into pass2 (position 777, size 80)
    seventeen = _slice("pass2", "00000000000000000000.log", 17, 777, 80)
    first = _round([*_segments("pass1"), seventeen], 16, 17, HORIZON_MS - RETENTION_MS)
    eighteen = _slice("pass2", "00000000000000000018.log", 18, 0, 80)
    return _round([_as_source(first), seventeen, eighteen], 17, 18, 1795289414453)


def _pass3() -> CleanedSegment:
    # log-cleaner.log 19:30:36,870: [18, 20), segment 20 active; 19 copied at position 777
    pass2 = _segments("pass2")
    nineteen = _slice("pass3", "00000000000000000000.log", 19, 777, 80)
    twenty = _slice("pass3", "00000000000000000020.log", 20, 0, 80)
    return _round([*pass2, nineteen, twenty], 18, 20, 1795289436870)


CASES = {"pass1": _pass1, "pass2": _pass2, "pass3": _pass3}


@pytest.mark.parametrize("capture", sorted(CASES))
@pytest.mark.parametrize("suffix", [".log", ".index", ".timeindex"])
def test_cleaned_segment_is_kafkas(capture: str, suffix: str) -> None:
    cleaned = CASES[capture]()
    produced = {
        ".log": cleaned.log,
        ".index": cleaned.offset_index,
        ".timeindex": cleaned.time_index,
    }
    expected = (_dir(capture) / f"00000000000000000000{suffix}").read_bytes()
    assert produced[suffix] == expected


@pytest.mark.parametrize("capture", sorted(CASES))
def test_cleaned_txn_index_is_kafkas(capture: str) -> None:
    cleaned = CASES[capture]()
    path = _dir(capture) / "00000000000000000000.txnindex"
    expected = path.read_bytes() if path.exists() else b""
    assert (encode_txn_index(cleaned.aborted) if cleaned.aborted else b"") == expected
