"""The cleaner's retention rules one at a time (kafka-facts 4.2-4.4; catalog KIP534-*).

Each test builds a tiny log with lethe_formats' builders, runs one pure round
and decodes what came out. Expected values are Kafka's rules as kafka-facts
states them, not lethe output.
"""

from __future__ import annotations

from lethe_formats.model import RecordBatch
from lethe_formats.records.builder import RecordSpec, build_batch, build_legacy_message_set
from lethe_formats.records.scan import read_log
from lethe_reference.cleaner.algorithm import (
    CleanParams,
    CleanResult,
    SourceSegment,
    clean_log,
    group_segments,
)
from lethe_reference.cleaner.filter import LastRecord

T0 = 1_800_000_000_000
RETENTION = 1000


def _seg(base: int, *entries: bytes, mtime: int = 0) -> SourceSegment:
    return SourceSegment(base, b"".join(entries), mtime, 0, 0, file=f"{base:020d}.log")


def _one(offset: int, key: bytes | None, value: bytes | None, **kw: object) -> bytes:
    return build_batch([RecordSpec(key, value, timestamp=T0 + offset)], base_offset=offset, **kw)  # type: ignore[arg-type]


def _clean(
    segments: list[SourceSegment],
    dirty: int,
    uncleanable: int,
    now: int,
    producers: dict[int, LastRecord] | None = None,
    **kw: object,
) -> CleanResult:
    params = CleanParams(
        first_dirty_offset=dirty,
        first_uncleanable_offset=uncleanable,
        now_ms=now,
        delete_retention_ms=RETENTION,
        segment_bytes=1 << 30,
        max_index_bytes=10 << 20,
        index_interval_bytes=4096,
        max_message_bytes=1048588,
        active_producers=producers or {},
        **kw,  # type: ignore[arg-type]
    )
    return clean_log(segments, params)


def _batches(result: CleanResult) -> list[RecordBatch]:
    out = []
    for cleaned in result.segments:
        out += [b for b in read_log(cleaned.log) if isinstance(b, RecordBatch)]
    return out


def _offsets(result: CleanResult) -> list[int]:
    return [b.header.base_offset + r.offset_delta for b in _batches(result) for r in b.records]


# --- compaction and tombstones ----------------------------------------------------------------


def _tombstone_log() -> list[SourceSegment]:
    # k1=v @0, k1 tombstone @1, k2=v @2 | active segment at 3
    return [_seg(0, _one(0, b"k1", b"v"), _one(1, b"k1", None), _one(2, b"k2", b"v")), _seg(3)]


def test_only_the_latest_record_of_each_key_is_kept() -> None:
    assert _offsets(_clean(_tombstone_log(), 0, 3, T0)) == [1, 2]


def test_first_cleaning_sets_horizon_now_plus_delete_retention() -> None:
    batches = _batches(_clean(_tombstone_log(), 0, 3, T0 + 50))
    tomb = next(b for b in batches if b.header.base_offset == 1)
    assert tomb.header.attributes & 0x40
    assert tomb.header.delete_horizon_ms == T0 + 50 + RETENTION
    # the record's timestamp is unchanged: horizon + (negative) delta
    (record,) = tomb.records
    assert tomb.header.base_timestamp + record.timestamp_delta == T0 + 1
    assert record.timestamp_delta < 0


def test_batch_without_tombstones_gets_no_horizon_and_is_copied() -> None:
    log = _tombstone_log()
    batches = _batches(_clean(log, 0, 3, T0))
    plain = next(b for b in batches if b.header.base_offset == 2)
    assert plain.header.delete_horizon_ms is None
    original = _one(2, b"k2", b"v")
    cleaned = _clean(log, 0, 3, T0).segments[0].log
    assert original in cleaned  # byte for byte (KIP534-HZN-9)


def _after_first_pass(now: int) -> list[SourceSegment]:
    first = _clean(_tombstone_log(), 0, 3, T0).segments[0]
    # new dirty data so the log is chosen again: k3 @3, active segment at 4
    return [_seg(0, first.log), _seg(3, _one(3, b"k3", b"v")), _seg(4)]


def test_horizon_is_kept_unchanged_by_later_cleanings() -> None:
    later = T0 + 500
    batches = _batches(_clean(_after_first_pass(later), 3, 4, later))
    tomb = next(b for b in batches if b.header.base_offset == 1)
    assert tomb.header.delete_horizon_ms == T0 + RETENTION


def test_tombstone_kept_one_ms_before_the_horizon() -> None:
    now = T0 + RETENTION - 1
    assert 1 in _offsets(_clean(_after_first_pass(now), 3, 4, now))


def test_tombstone_dropped_at_the_horizon() -> None:
    now = T0 + RETENTION
    assert _offsets(_clean(_after_first_pass(now), 3, 4, now)) == [2, 3]


def test_keyless_records_are_dropped() -> None:
    log = [_seg(0, _one(0, None, b"v"), _one(1, b"k", b"v")), _seg(2)]
    assert _offsets(_clean(log, 0, 2, T0)) == [1]


def test_offsets_of_kept_records_do_not_change() -> None:
    log = [_seg(0, _one(0, b"a", b"1"), _one(1, b"b", b"1"), _one(2, b"a", b"2")), _seg(3)]
    assert _offsets(_clean(log, 0, 3, T0)) == [1, 2]


# --- producers and empty batches --------------------------------------------------------------


def _idempotent(offset: int, key: bytes, value: bytes) -> bytes:
    return _one(offset, key, value, producer_id=7, producer_epoch=0, base_sequence=offset)


def _producer_log() -> list[SourceSegment]:
    # producer 7 writes k @0; a plain batch overwrites k @1; k2 @2 | active at 3
    return [
        _seg(0, _idempotent(0, b"k", b"old"), _one(1, b"k", b"new"), _one(2, b"k2", b"v")),
        _seg(3),
    ]


def test_last_batch_of_active_producer_stays_as_empty_header() -> None:
    batches = _batches(_clean(_producer_log(), 0, 3, T0, {7: LastRecord(0, 0)}))
    empty = batches[0].header
    assert (empty.base_offset, empty.records_count, empty.producer_id) == (0, 0, 7)
    assert empty.base_timestamp == -1 and not empty.has_delete_horizon
    assert empty.max_timestamp == T0 and empty.batch_length == 61 - 12


def test_batch_of_inactive_producer_goes_when_emptied() -> None:
    batches = _batches(_clean(_producer_log(), 0, 3, T0, {}))
    assert [b.header.base_offset for b in batches] == [1, 2]


# --- map capacity, legacy rule, grouping ------------------------------------------------------


def test_full_offset_map_ends_the_round_early() -> None:
    log = [_seg(0, _one(0, b"a", b"1"), _one(1, b"b", b"1"), _one(2, b"c", b"1")), _seg(3)]
    result = _clean(log, 0, 3, T0, map_slots=2, map_load_factor=1.0)
    assert result.end_offset == 2


def _legacy(offset: int, key: bytes, value: bytes | None) -> bytes:
    spec = RecordSpec(key, value, timestamp=T0)
    return build_legacy_message_set([spec], magic=1, base_offset=offset)


def _legacy_log(head_mtime: int, tomb_mtime: int) -> list[SourceSegment]:
    # a v1 tombstone @0, the last clean segment @1 (its mtime sets the legacy horizon),
    # dirty k @2, active segment at 3
    return [
        _seg(0, _legacy(0, b"t", None), mtime=tomb_mtime),
        _seg(1, _legacy(1, b"h", b"v"), mtime=head_mtime),
        _seg(2, _legacy(2, b"k", b"v"), mtime=head_mtime),
        _seg(3),
    ]


def _legacy_offsets(result: CleanResult) -> list[int]:
    """Offsets kept; Kafka 4.0 writes what a legacy entry keeps as a magic 2 batch."""
    offsets = []
    for cleaned in result.segments:
        for entry in read_log(cleaned.log):
            assert isinstance(entry, RecordBatch) and entry.header.magic == 2
            offsets += [entry.header.base_offset + r.offset_delta for r in entry.records]
    return offsets


def test_legacy_tombstone_kept_while_segment_newer_than_legacy_horizon() -> None:
    # legacy horizon = head mtime - delete.retention.ms = 5000 - 1000; 4001 > 4000 keeps
    result = _clean(_legacy_log(5000, 4001), 2, 3, T0)
    assert _legacy_offsets(result) == [0, 1, 2]


def test_legacy_tombstone_dropped_once_segment_is_older_than_legacy_horizon() -> None:
    result = _clean(_legacy_log(5000, 4000), 2, 3, T0)
    assert _legacy_offsets(result) == [1, 2]


def test_groups_stay_within_segment_bytes() -> None:
    segs = [SourceSegment(b, b"x" * 40, 0) for b in (0, 10, 20, 30)]
    groups = group_segments(segs, 100, 1 << 20, 40)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 10], [20, 30]]


def test_groups_stay_within_index_bytes() -> None:
    segs = [SourceSegment(b, b"x", 0, offset_index_bytes=8) for b in (0, 10, 20)]
    groups = group_segments(segs, 1 << 30, 16, 30)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 10], [20]]


def test_groups_keep_offsets_relative_to_int_max() -> None:
    segs = [SourceSegment(0, b"x", 0), SourceSegment(2**31, b"x", 0)]
    groups = group_segments(segs, 1 << 30, 1 << 20, 2**31 + 5)
    assert len(groups) == 2
