"""The cleaner with KIP-87's tombstone flag (catalog KIP87-BIT-4/5, CLN-1, 2, 4-8).

The pure round (``clean_log``) takes the log's tombstone rule and the record
attribute bits a rebuild keeps from ``storage.tombstones``, built from the
log's settings as the manager builds them. Expected values follow Kafka's
cleaner (kafka-facts 4.2, 4.3: dedupe by key, a tombstone's batch gets the
horizon now + delete.retention.ms on the first pass and the tombstone goes on
a pass at or after it, unchanged batches copied, rebuilt records' attributes
written 0) with the catalog's decisions for flagged records.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.model import ControlType, Header, RecordBatch
from lethe_formats.records.batch import encode_batch
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.control import encode_control_key, encode_end_txn_marker_value
from lethe_formats.records.scan import read_log
from lethe_reference.cleaner.algorithm import CleanParams, SourceSegment, clean_log
from lethe_reference.storage.settings import StorageSettings
from lethe_reference.storage.tombstones import record_attribute_mask, tombstone_predicate

NOW = 1_800_000_000_000
RETENTION = 60_000
FLAG_ON = StorageSettings(cleanup_policy=("compact",), tombstone_flag_enable=True)
FLAG_OFF = StorageSettings(cleanup_policy=("compact",))


def _spec(key: str, value: str | None, attributes: int = 0, **kw: object) -> RecordSpec:
    encoded = None if value is None else value.encode()
    headers = kw.get("headers", ())
    assert isinstance(headers, tuple)
    return RecordSpec(key.encode(), encoded, headers, NOW - 1000, attributes=attributes)


def _log(batches: Sequence[Sequence[RecordSpec]]) -> tuple[list[SourceSegment], int]:
    """One segment holding ``batches`` and an active segment after it; returns its base."""
    data, offset = b"", 0
    for specs in batches:
        data += build_batch(list(specs), base_offset=offset)
        offset += len(specs)
    active = build_batch([_spec("active", "x")], base_offset=offset)
    return [SourceSegment(0, data, NOW - 500), SourceSegment(offset, active, NOW)], offset


def _clean(
    segments: list[SourceSegment], uncleanable: int, settings: StorageSettings, now: int
) -> list[RecordBatch]:
    params = CleanParams(
        first_dirty_offset=0,
        first_uncleanable_offset=uncleanable,
        now_ms=now,
        delete_retention_ms=RETENTION,
        segment_bytes=1 << 20,
        max_index_bytes=1 << 20,
        index_interval_bytes=4096,
        max_message_bytes=1048588,
        is_tombstone=tombstone_predicate(settings),
        record_attribute_mask=record_attribute_mask(settings),
    )
    result = clean_log(segments, params)
    batches = [b for s in result.segments for b in read_log(s.log)]
    assert all(isinstance(b, RecordBatch) for b in batches)
    return [b for b in batches if isinstance(b, RecordBatch)]


def _again(
    batches: list[RecordBatch], uncleanable: int, settings: StorageSettings, now: int
) -> list[RecordBatch]:
    """A later round over the cleaned output (plus the same active segment)."""
    data = b"".join(encode_batch(b) for b in batches)
    active = build_batch([_spec("active", "x")], base_offset=uncleanable)
    return _clean(
        [SourceSegment(0, data, NOW), SourceSegment(uncleanable, active, NOW)],
        uncleanable,
        settings,
        now,
    )


def _view(batches: list[RecordBatch]) -> list[tuple[int, bytes | None, bytes | None, int]]:
    """(offset, key, value, attributes byte) of every kept record."""
    return [
        (b.offset_of(r), r.key, r.value, r.attributes & 0xFF) for b in batches for r in b.records
    ]


MIXED = [
    [_spec("a", "a-1")],  # 0
    [_spec("b", "b-1")],  # 1
    [_spec("a", "deleted a", 1)],  # 2 flagged, with a value
    [_spec("c", "c-1"), _spec("b", "deleted b", 1), _spec("d", "d-1")],  # 3-5 mixed
    [_spec("s", None)],  # 6 stock tombstone
    [_spec("z", "z-1")],  # 7
]


def test_a_flagged_record_is_a_tombstone_kept_with_its_value_until_the_horizon() -> None:
    segments, end = _log(MIXED)
    first = _clean(segments, end, FLAG_ON, NOW)
    assert _view(first) == [
        (2, b"a", b"deleted a", 1),
        (3, b"c", b"c-1", 0),
        (4, b"b", b"deleted b", 1),
        (5, b"d", b"d-1", 0),
        (6, b"s", None, 0),
        (7, b"z", b"z-1", 0),
    ]
    horizons = {b.header.base_offset: b.header.delete_horizon_ms for b in first}
    assert horizons == {2: NOW + RETENTION, 3: NOW + RETENTION, 6: NOW + RETENTION, 7: None}


def test_flagged_tombstones_go_at_the_horizon_not_before() -> None:
    segments, end = _log(MIXED)
    first = _clean(segments, end, FLAG_ON, NOW)
    before = _again(first, end, FLAG_ON, NOW + RETENTION - 1)
    assert _view(before) == _view(first)
    at = _again(first, end, FLAG_ON, NOW + RETENTION)
    assert _view(at) == [(3, b"c", b"c-1", 0), (5, b"d", b"d-1", 0), (7, b"z", b"z-1", 0)]


def test_with_the_flag_off_a_flagged_record_is_a_value_and_rebuilt_with_attributes_0() -> None:
    segments, end = _log(MIXED)
    first = _clean(segments, end, FLAG_OFF, NOW)
    # batch 2 is copied unchanged (no horizon, nothing removed): its byte stays as sent;
    # batch 3-5 loses nothing either; only the stock tombstone's batch gets a horizon
    assert _view(first)[:3] == [
        (2, b"a", b"deleted a", 1),
        (3, b"c", b"c-1", 0),
        (4, b"b", b"deleted b", 1),
    ]
    horizons = {b.header.base_offset: b.header.delete_horizon_ms for b in first}
    assert horizons == {2: None, 3: None, 6: NOW + RETENTION, 7: None}
    later = _again(first, end, FLAG_OFF, NOW + RETENTION)
    assert [(o, k) for o, k, _, _ in _view(later)] == [
        (2, b"a"),
        (3, b"c"),
        (4, b"b"),
        (5, b"d"),
        (7, b"z"),
    ]


def test_a_rebuilt_batch_writes_attributes_0_without_the_flag_and_keeps_bit_0_with_it() -> None:
    log = [[_spec("a", "flagged", 0xFF), _spec("b", "b-1")], [_spec("b", "b-2")], [_spec("z", "z")]]
    for settings, expected in ((FLAG_OFF, 0x00), (FLAG_ON, 0x01)):
        segments, end = _log(log)
        first = _clean(segments, end, settings, NOW)
        assert _view(first)[0] == (0, b"a", b"flagged", expected)
        assert [b.header.records_count for b in first][:1] == [1]  # b-1 left: rebuilt


def test_headers_never_make_a_tombstone() -> None:
    tagged = (Header(b"tombstone", b"true"), Header(b"isTombstone", b"\x01"))
    log = [[_spec("h", "h-1")], [_spec("h", "h-2", headers=tagged)], [_spec("z", "z")]]
    for settings in (FLAG_ON, FLAG_OFF):
        segments, end = _log(log)
        first = _clean(segments, end, settings, NOW)
        assert [b.header.delete_horizon_ms for b in first] == [None, None]
        later = _again(first, end, settings, NOW + 10 * RETENTION)
        assert _view(later) == [(1, b"h", b"h-2", 0), (2, b"z", b"z", 0)]


def test_a_control_record_is_never_taken_for_a_flagged_tombstone() -> None:
    """KIP87-BIT-2: a COMMIT marker whose record has bit 0 set still gets no horizon while its
    transaction keeps data (kafka-facts 4.3/4.4): the flag is read from data records only."""
    data = build_batch(
        [_spec("t", "in a transaction")],
        base_offset=0,
        producer_id=7,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
    )
    marker = RecordSpec(
        encode_control_key(ControlType.COMMIT),
        encode_end_txn_marker_value(0),
        (),
        NOW - 900,
        attributes=1,
    )
    data += build_batch(
        [marker],
        base_offset=1,
        producer_id=7,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )
    active = build_batch([_spec("active", "x")], base_offset=2)
    segments = [SourceSegment(0, data, NOW - 500), SourceSegment(2, active, NOW)]
    cleaned = _clean(segments, 2, FLAG_ON, NOW)
    assert [(b.header.base_offset, b.header.is_control) for b in cleaned] == [(0, False), (1, True)]
    assert [b.header.delete_horizon_ms for b in cleaned] == [None, None]
