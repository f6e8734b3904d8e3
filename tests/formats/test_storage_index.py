""".index / .timeindex decoding, Kafka's sanity checks, zero-filled tails, parity."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.errors import CorruptIndexError, TruncatedError
from lethe_formats.model import OffsetIndexEntry, TimeIndexEntry
from lethe_formats.storage.index import (
    OFFSET_INDEX_ENTRY,
    OFFSET_INDEX_SCHEMA,
    TIME_INDEX_ENTRY,
    TIME_INDEX_SCHEMA,
    check_offset_index,
    check_time_index,
    encode_offset_index,
    encode_time_index,
    read_offset_index,
    read_time_index,
)


def offsets(*pairs: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">ii", rel, pos) for rel, pos in pairs)


def times(*pairs: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">qi", ts, rel) for ts, rel in pairs)


def test_offset_index_entries_are_int32_relative_offset_then_int32_position() -> None:
    data = bytes.fromhex("00000007 00000117 0000000f 00000230")
    assert read_offset_index(data) == (OffsetIndexEntry(7, 279), OffsetIndexEntry(15, 560))


def test_time_index_entries_are_int64_timestamp_then_int32_relative_offset() -> None:
    data = bytes.fromhex("000001a1ff6a6ad8 00000003")
    assert read_time_index(data) == (TimeIndexEntry(1795286526680, 3),)


def test_empty_index_has_no_entries_and_no_problems() -> None:
    assert read_offset_index(b"") == () and read_time_index(b"") == ()
    assert check_offset_index(b"") == [] and check_time_index(b"") == []


def test_reading_stops_at_the_preallocated_zero_tail_like_kafka_dump_log() -> None:
    data = offsets((3, 0), (9, 400)) + bytes(8 * 5)
    assert read_offset_index(data) == (OffsetIndexEntry(3, 0), OffsetIndexEntry(9, 400))
    assert len(read_offset_index(data, stop_at_zero_entry=False)) == 7  # the broker's mmap view
    tdata = times((100, 3), (200, 9)) + bytes(12 * 4)
    assert read_time_index(tdata) == (TimeIndexEntry(100, 3), TimeIndexEntry(200, 9))


def test_entry_zero_may_have_relative_offset_zero() -> None:
    data = offsets((0, 0), (4, 90))
    assert read_offset_index(data) == (OffsetIndexEntry(0, 0), OffsetIndexEntry(4, 90))
    assert check_offset_index(data) == []


def test_zero_tail_is_reported_but_passes_kafkas_offset_index_sanity_check() -> None:
    data = offsets((3, 0), (9, 400)) + bytes(16)
    problems = check_offset_index(data, base_offset=50, file="x.index")
    assert [(p.kafka_check, p.position) for p in problems] == [(False, 16)]
    assert "zero-filled" in problems[0].message


def test_zero_tail_fails_kafkas_time_index_check_since_last_timestamp_is_zero() -> None:
    data = times((100, 3)) + bytes(24)
    problems = check_time_index(data, base_offset=0, file="t")
    kafka = [p for p in problems if p.kafka_check]
    assert [p.message for p in kafka] == [
        "Corrupt time index found, time index file (t) has non-zero size but the last "
        "timestamp is 0 which is less than the first timestamp 100"
    ]
    assert kafka[0].position == 24
    assert any("zero-filled" in p.message and p.position == 12 for p in problems)


def test_partial_trailing_entry_is_ignored_by_readers_and_reported_by_checks() -> None:
    data = offsets((1, 0), (2, 10)) + b"\x00\x00\x00\x05"
    assert read_offset_index(data) == (OffsetIndexEntry(1, 0), OffsetIndexEntry(2, 10))
    with pytest.raises(TruncatedError) as info:
        read_offset_index(data, strict=True, file="f.index")
    assert (info.value.position, info.value.file) == (16, "f.index")
    (problem,) = check_offset_index(data, file="f.index")
    assert problem.kafka_check and problem.position == 16
    assert problem.message.startswith(
        "Index file f.index is corrupt, found 20 bytes which is neither positive nor a "
        "multiple of 8"
    )
    error = problem.as_error()
    assert isinstance(error, CorruptIndexError) and error.position == 16


def test_time_index_partial_entry_uses_kafkas_time_index_wording() -> None:
    data = times((5, 1)) + b"\x01"
    (problem,) = check_time_index(data, file="f.timeindex")
    assert problem.message.startswith(
        "Time index file f.timeindex is corrupt, found 13 bytes which is neither positive "
        "nor a multiple of 12"
    )
    assert problem.position == 12
    with pytest.raises(TruncatedError):
        read_time_index(data, strict=True)


def test_last_offset_below_the_base_offset_is_kafkas_corrupt_index() -> None:
    problems = check_offset_index(offsets((2, 0), (-1, 50)), base_offset=100, file="i")
    kafka = [p for p in problems if p.kafka_check]
    assert [p.message for p in kafka] == [
        "Corrupt index found, index file i has non-zero size but the last offset is 99 "
        "which is less than the base offset 100"
    ]
    assert kafka[0].position == 8


def test_time_index_last_offset_below_base_is_kafkas_corrupt_index() -> None:
    problems = check_time_index(times((5, 1), (9, -3)), base_offset=10, file="t")
    assert [p.message for p in problems if p.kafka_check] == [
        "Corrupt time index found, time index file (t) has non-zero size but the last offset "
        "is 7 which is less than the first offset 10"
    ]


def test_offsets_must_strictly_increase() -> None:
    problems = check_offset_index(offsets((5, 0), (5, 100), (4, 200)), base_offset=10)
    assert [(p.position, p.kafka_check) for p in problems] == [(8, False), (16, False)]
    assert problems[0].message == "entry 1: offset 15 is not greater than the previous offset 15"


def test_negative_position_is_reported() -> None:
    (problem,) = check_offset_index(offsets((1, -5)))
    assert (problem.field, problem.position) == ("position", 4)


def test_time_index_timestamps_and_offsets_must_not_go_backwards() -> None:
    problems = check_time_index(times((100, 1), (90, 2), (90, 3), (150, 2)))
    messages = [p.message for p in problems]
    assert "entry 1: timestamp 90 is less than the previous timestamp 100" in messages
    assert any(m.startswith("entry 2: timestamp 90 repeats") for m in messages)
    assert "entry 3: offset 2 is less than the previous offset 3" in messages
    assert not any(p.kafka_check for p in problems)  # last 150 >= first 100: Kafka passes it


def test_time_index_last_timestamp_below_first_is_a_kafka_check() -> None:
    problems = check_time_index(times((100, 1), (95, 2)))
    assert any(p.kafka_check and p.field == "timestamp" for p in problems)


def test_encoders_reject_values_that_do_not_fit() -> None:
    with pytest.raises(ValueError):
        encode_offset_index([OffsetIndexEntry(2**31, 0)])
    with pytest.raises(ValueError):
        encode_time_index([TimeIndexEntry(2**63, 0)])


offset_entries = st.lists(
    st.builds(OffsetIndexEntry, st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1)),
    max_size=40,
)
time_entries = st.lists(
    st.builds(TimeIndexEntry, st.integers(-(2**63), 2**63 - 1), st.integers(-(2**31), 2**31 - 1)),
    max_size=40,
)


@given(offset_entries)
def test_offset_index_round_trips(entries: list[OffsetIndexEntry]) -> None:
    data = encode_offset_index(entries)
    assert read_offset_index(data, stop_at_zero_entry=False) == tuple(entries)
    assert (
        OFFSET_INDEX_ENTRY.build_construct([(e.relative_offset, e.position) for e in entries])
        == data
    )


@given(time_entries)
def test_time_index_round_trips(entries: list[TimeIndexEntry]) -> None:
    data = encode_time_index(entries)
    assert read_time_index(data, stop_at_zero_entry=False) == tuple(entries)
    assert (
        TIME_INDEX_ENTRY.build_construct([(e.timestamp, e.relative_offset) for e in entries])
        == data
    )


@given(st.binary(max_size=100))
def test_construct_schema_and_fast_path_agree_on_any_bytes(data: bytes) -> None:
    fast = read_offset_index(data, stop_at_zero_entry=False)
    parsed = OFFSET_INDEX_SCHEMA.parse(data)
    assert [(p.relative_offset, p.position) for p in parsed] == [
        (e.relative_offset, e.position) for e in fast
    ]
    tfast = read_time_index(data, stop_at_zero_entry=False)
    tparsed = TIME_INDEX_SCHEMA.parse(data)
    assert [(p.timestamp, p.relative_offset) for p in tparsed] == [
        (e.timestamp, e.relative_offset) for e in tfast
    ]
    check_offset_index(data)
    check_time_index(data)
