""".txnindex: 34-byte AbortedTxn entries, Kafka's version rule and sanity check."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.errors import CorruptIndexError, TruncatedError
from lethe_formats.model import AbortedTxn
from lethe_formats.storage.txn_index import (
    ABORTED_TXN_ENTRY,
    TXN_INDEX_SCHEMA,
    check_txn_index,
    encode_txn_index,
    read_txn_index,
)


def entry(version: int, pid: int, first: int, last: int, lso: int) -> bytes:
    return struct.pack(">hqqqq", version, pid, first, last, lso)


def test_entry_layout_is_version_then_four_longs() -> None:
    assert ABORTED_TXN_ENTRY.size == 34
    data = bytes.fromhex("0000000000000000000700000000000000060000000000000009000000000000000a")
    assert read_txn_index(data) == (AbortedTxn(0, 7, 6, 9, 10),)


def test_a_version_above_zero_is_kafkas_unexpected_version_error() -> None:
    data = entry(0, 1, 2, 3, 4) + entry(1, 1, 5, 6, 7)
    with pytest.raises(CorruptIndexError) as info:
        read_txn_index(data, file="00000000000000000000.txnindex")
    assert info.value.message == (
        "Unexpected aborted transaction version 1 in transaction index "
        "00000000000000000000.txnindex, current version is 0"
    )
    assert (info.value.position, info.value.field) == (34, "version")
    (problem,) = check_txn_index(data, file="00000000000000000000.txnindex")
    assert problem.kafka_check and problem.position == 34


def test_a_negative_version_is_read_as_kafka_does_but_flagged() -> None:
    data = entry(-1, 1, 2, 3, 4)
    assert read_txn_index(data) == (AbortedTxn(-1, 1, 2, 3, 4),)
    (problem,) = check_txn_index(data)
    assert not problem.kafka_check and problem.field == "version"


def test_a_partial_trailing_entry_is_ignored_but_reported() -> None:
    data = entry(0, 1, 2, 3, 4) + b"\x00" * 20
    assert read_txn_index(data) == (AbortedTxn(0, 1, 2, 3, 4),)
    with pytest.raises(TruncatedError) as info:
        read_txn_index(data, strict=True)
    assert info.value.position == 34
    (problem,) = check_txn_index(data)
    assert problem.position == 34 and "20 trailing bytes" in problem.message


def test_last_offset_below_the_segment_base_is_kafkas_sanity_failure() -> None:
    (problem,) = check_txn_index(entry(0, 3, 1, 5, 6), base_offset=10, file="t")
    assert problem.kafka_check and problem.position == 18
    assert problem.message == (
        "Last offset of aborted transaction AbortedTxn(version=0, producerId=3, firstOffset=1, "
        "lastOffset=5, lastStableOffset=6) in index t is less than start offset 10"
    )


def test_last_offsets_must_increase_and_first_must_not_follow_last() -> None:
    problems = check_txn_index(entry(0, 1, 2, 9, 10) + entry(0, 1, 12, 9, 10))
    assert [(p.field, p.position) for p in problems] == [("first_offset", 44), ("last_offset", 52)]


@given(
    st.lists(
        st.builds(
            AbortedTxn,
            st.integers(-(2**15), 0),
            *[st.integers(-(2**63), 2**63 - 1)] * 4,
        ),
        max_size=20,
    )
)
def test_txn_index_round_trips_and_construct_agrees(entries: list[AbortedTxn]) -> None:
    data = encode_txn_index(entries)
    assert read_txn_index(data) == tuple(entries)
    parsed = TXN_INDEX_SCHEMA.parse(data)
    assert [
        AbortedTxn(*(p[name] for name in ABORTED_TXN_ENTRY.field_names)) for p in parsed
    ] == entries


@given(st.binary(max_size=120))
def test_any_bytes_give_entries_or_a_corrupt_index_error(data: bytes) -> None:
    try:
        read_txn_index(data)
    except CorruptIndexError as error:
        assert error.position is not None and error.position % 34 == 0
    check_txn_index(data)


def test_encoder_rejects_out_of_range_fields() -> None:
    with pytest.raises(ValueError):
        encode_txn_index([AbortedTxn(2**15, 0, 0, 0, 0)])
