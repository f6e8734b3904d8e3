"""The cleaner rewrites legacy (magic 0/1) entries as Kafka 4.0's does (KIP534-TMB-4).

Inputs are the fixture logs fixtures/logs/legacy-v0 and legacy-v1; expected
outputs are the segment files a real Kafka 4.0.0 broker's cleaner wrote for
those very segments (fixtures/kafka-cleaner-legacy, its README says how they
were made, with the times below taken from its log-cleaner.log and dump.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import RecordBatch
from lethe_formats.records.scan import read_log
from lethe_reference.cleaner.algorithm import (
    CleanedSegment,
    CleanParams,
    CleanResult,
    SourceSegment,
    clean_log,
)

EVIDENCE = fixtures_root() / "kafka-cleaner-legacy"
LOGS = fixtures_root() / "logs"
DAY_MS = 86_400_000
# log-cleaner.log: the segments' lastModifiedTime after seeding
V0_MTIMES = {0: 1795799052404, 8: 1795799052405}
V1_MTIMES = {0: 1795799105307, 8: 1795799105308}
# dump.txt: the tombstone's deleteHorizonMs 1795885457604 = the first pass's time + 1 day
V0_PASS1_NOW = 1795885457604 - DAY_MS
V0_PASS2_NOW = 1795799073833  # "Beginning cleaning of log t-0" of the second pass
V1_NOW = 1795799110816


def _segment(folder: Path, base: int, mtime: int) -> SourceSegment:
    name = f"{base:020d}.log"
    return SourceSegment(base, (folder / name).read_bytes(), mtime, file=name)


def _params(
    dirty: int, uncleanable: int, now: int, segment_bytes: int, retention_ms: int = DAY_MS
) -> CleanParams:
    return CleanParams(
        first_dirty_offset=dirty,
        first_uncleanable_offset=uncleanable,
        now_ms=now,
        delete_retention_ms=retention_ms,
        segment_bytes=segment_bytes,
        max_index_bytes=10485760,
        index_interval_bytes=4096,
        max_message_bytes=1048588,
    )


def _v0_pass1() -> CleanResult:
    # log-cleaner.log: offset range [0, 8) while segment 8 was still active
    seed = LOGS / "legacy-v0" / "legacy-v0-0"
    segments = [_segment(seed, base, mtime) for base, mtime in V0_MTIMES.items()]
    return clean_log(segments, _params(0, 8, V0_PASS1_NOW, 400))


def _v0_pass2() -> CleanResult:
    # after d1 rolled segment 8: offset range [8, 14), segment 0 already cleaned
    seed = LOGS / "legacy-v0" / "legacy-v0-0"
    first = _v0_pass1().segments[0]
    segments = [
        SourceSegment(0, first.log, first.last_modified_ms, file="00000000000000000000.log"),
        _segment(seed, 8, V0_MTIMES[8]),
        SourceSegment(14, b"", V0_PASS2_NOW, file="00000000000000000014.log"),
    ]
    return clean_log(segments, _params(8, 14, V0_PASS2_NOW, 400))


def _v1() -> CleanResult:
    # log-cleaner.log: offset range [0, 15); segment 15 active
    seed = LOGS / "legacy-v1" / "legacy-v1-0"
    segments = [_segment(seed, base, mtime) for base, mtime in V1_MTIMES.items()]
    segments.append(_segment(seed, 15, V1_NOW))
    return clean_log(segments, _params(0, 15, V1_NOW, 450))


def _files(cleaned: CleanedSegment) -> dict[str, bytes]:
    name = f"{cleaned.base_offset:020d}"
    return {
        f"{name}.log": cleaned.log,
        f"{name}.index": cleaned.offset_index,
        f"{name}.timeindex": cleaned.time_index,
    }


def _expected(folder: str, cleaned: CleanedSegment) -> dict[str, bytes]:
    return {name: (EVIDENCE / folder / name).read_bytes() for name in _files(cleaned)}


def test_v0_first_pass_writes_kafkas_segment_0() -> None:
    result = _v0_pass1()
    assert [s.base_offset for s in result.segments] == [0]
    assert _files(result.segments[0]) == _expected("v0", result.segments[0])


def test_v0_second_pass_writes_kafkas_segments_0_and_8() -> None:
    result = _v0_pass2()
    assert result.end_offset == 14
    assert [s.base_offset for s in result.segments] == [0, 8]
    for cleaned in result.segments:
        assert _files(cleaned) == _expected("v0", cleaned)


def test_v1_writes_kafkas_segments_0_and_8() -> None:
    result = _v1()
    assert result.end_offset == 15
    assert [s.base_offset for s in result.segments] == [0, 8]
    for cleaned in result.segments:
        assert _files(cleaned) == _expected("v1", cleaned)


def _batches(result: CleanResult) -> list[RecordBatch]:
    found = []
    for cleaned in result.segments:
        for entry in read_log(cleaned.log):
            assert isinstance(entry, RecordBatch), "a legacy entry was written back"
            found.append(entry)
    return found


def test_every_kept_legacy_entry_becomes_a_magic_2_batch() -> None:
    # dump.txt: base offsets of the v2 batches, each legacy entry's kept messages
    batches = _batches(_v0_pass2())
    assert [(b.header.base_offset, b.header.last_offset) for b in batches] == [
        (0, 0),
        (2, 2),
        (3, 5),
        (6, 7),
        (8, 9),
        (10, 12),
        (13, 13),
    ]
    assert {
        (b.header.magic, b.header.producer_id, b.header.partition_leader_epoch) for b in batches
    } == {(2, -1, -1)}


def test_v0_tombstone_gets_a_kip534_horizon_from_its_first_cleaning() -> None:
    tombstone = _batches(_v0_pass1())[1]
    assert tombstone.header.delete_horizon_ms == V0_PASS1_NOW + DAY_MS == 1795885457604
    assert tombstone.header.base_timestamp == 1795885457604
    assert [(r.key, r.value) for r in tombstone.records] == [(b"c", None)]


def _later_round(now: int, retention_ms: int) -> list[int]:
    """Clean segment 0 again (legacy horizon irrelevant now) with a new retention."""
    first = _v0_pass1().segments[0]
    segments = [
        SourceSegment(0, first.log, first.last_modified_ms),
        SourceSegment(8, (LOGS / "legacy-v0" / "legacy-v0-0" / f"{8:020d}.log").read_bytes(), 1),
        SourceSegment(14, b"", 1),
    ]
    result = clean_log(segments, _params(8, 14, now, 400, retention_ms))
    return [b.header.base_offset + r.offset_delta for b in _batches(result) for r in b.records]


@pytest.mark.parametrize(
    ("now", "kept"),
    [(1795885457604 - 1, True), (1795885457604, False)],
    ids=["before-horizon", "at-horizon"],
)
def test_converted_tombstone_follows_its_horizon_not_segment_times(now: int, kept: bool) -> None:
    # delete.retention.ms 0 and segment mtimes far in the past: the legacy rule would drop
    # it; the horizon set at the first cleaning keeps it until now >= horizon
    assert (2 in _later_round(now, 0)) is kept
