""".snapshot files: layout, readSnapshot's checks in Kafka's order, CRC-32C, dump lines."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.crc import crc32c
from lethe_formats.errors import ChecksumError, FormatError
from lethe_formats.fixtures import fixtures_root
from lethe_formats.storage.producer_snapshot import (
    PRODUCER_SNAPSHOT_SCHEMA,
    SNAPSHOT_ENTRY,
    CorruptSnapshotError,
    ProducerSnapshotEntry,
    SnapshotChecksumError,
    encode_producer_snapshot,
    kafka_dump_line,
    read_producer_snapshot,
)

GOLDEN = fixtures_root() / "golden"
# producerId 0, epoch 0, lastSequence 15, lastOffset 15, offsetDelta 3 (kafka-dump-log line)
DELREC_16 = GOLDEN / "delete-records" / "golden-delrec-0" / "00000000000000000016.snapshot"


def entry(**changes: int) -> ProducerSnapshotEntry:
    values = dict(
        producer_id=7,
        producer_epoch=2,
        last_sequence=15,
        last_offset=15,
        offset_delta=3,
        timestamp=1795286526680,
        coordinator_epoch=-1,
        current_txn_first_offset=-1,
    )
    values.update(changes)
    return ProducerSnapshotEntry(**values)


def test_header_is_version_crc_count_and_entries_are_46_bytes() -> None:
    data = DELREC_16.read_bytes()
    assert SNAPSHOT_ENTRY.size == 46 and len(data) == 10 + 46
    version, crc, count = struct.unpack_from(">hIi", data)
    assert (version, count) == (1, 1)
    assert crc == crc32c(data[6:])  # CRC-32C over everything after the crc field
    snapshot = read_producer_snapshot(data)
    assert snapshot.crc == crc
    assert snapshot.entries[0].last_sequence == 15 and snapshot.entries[0].offset_delta == 3


def test_construct_schema_parses_the_same_entries() -> None:
    data = DELREC_16.read_bytes()
    parsed = PRODUCER_SNAPSHOT_SCHEMA.parse(data)
    row = tuple(parsed.producer_entries[0][name] for name in SNAPSHOT_ENTRY.field_names)
    assert row == read_producer_snapshot(data).entries[0].as_row()
    assert parsed.version == 1


def test_an_empty_table_is_ten_bytes() -> None:
    data = encode_producer_snapshot([])
    assert len(data) == 10
    assert read_producer_snapshot(data).entries == ()
    empty = GOLDEN / "consumer-offsets" / "__consumer_offsets-14" / "00000000000000000013.snapshot"
    assert empty.read_bytes() == data


def test_a_flipped_bit_is_kafkas_crc_error() -> None:
    data = bytearray(DELREC_16.read_bytes())
    data[30] ^= 0x01
    with pytest.raises(SnapshotChecksumError) as info:
        read_producer_snapshot(bytes(data), file="s")
    error = info.value
    assert isinstance(error, ChecksumError) and isinstance(error, CorruptSnapshotError)
    assert error.message == (
        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {error.stored}. "
        f"Computed crc: {error.computed}"
    )
    assert error.stored == struct.unpack_from(">I", data, 2)[0]
    assert error.computed == crc32c(bytes(data[6:]))
    assert (error.position, error.field, error.file) == (2, "crc", "s")


def test_trailing_bytes_are_covered_by_the_crc() -> None:
    with pytest.raises(SnapshotChecksumError):
        read_producer_snapshot(DELREC_16.read_bytes() + b"\x00")


def test_an_unknown_version_is_rejected_first() -> None:
    """kafka-dump-log 4.0.0 prints exactly this message for such a file, and the same
    for one cut after 8 bytes (the version is read before anything else)."""
    data = bytearray(encode_producer_snapshot([entry()], version=2))
    expected = "Snapshot failed schema validation: Snapshot contained an unknown file version 2"
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(bytes(data))
    assert info.value.message == expected
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(bytes(data[:8]))
    assert info.value.message == expected
    data[2] ^= 0xFF  # bad CRC too: the version is still what Kafka reports first
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(bytes(data))
    assert not isinstance(info.value, SnapshotChecksumError)


def test_version_zero_is_also_unknown() -> None:
    with pytest.raises(CorruptSnapshotError, match="unknown file version 0"):
        read_producer_snapshot(encode_producer_snapshot([], version=0))


def test_a_negative_count_fails_schema_validation() -> None:
    data = struct.pack(">hIi", 1, 0, -1)
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(data)
    assert info.value.message == (  # kafka-dump-log 4.0.0's line for this file
        "Snapshot failed schema validation: non-nullable field producerEntries was "
        "serialized as null"
    )
    assert info.value.position == 6


def test_a_count_larger_than_the_file_fails_without_allocating() -> None:
    data = struct.pack(">hIi", 1, 0, 2**31 - 1) + bytes(46)
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(data)
    assert info.value.message == (  # as kafka-dump-log 4.0.0 words it
        "Snapshot failed schema validation: Tried to allocate a collection of size "
        "2147483647, but there are only 46 bytes remaining."
    )


def test_a_truncated_entry_names_the_field_and_position() -> None:
    data = DELREC_16.read_bytes()[: 10 + 20]
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(data)
    # 8 producer_id + 2 epoch + 4 last_sequence = 14: last_offset starts at 24 and needs 8
    assert info.value.position == 24
    assert info.value.field == "producer_entries[0].last_offset"
    # Java's BufferUnderflowException has no message: kafka-dump-log 4.0.0 prints "null".
    assert info.value.message == "Snapshot failed schema validation: null"


@given(st.integers(0, 55))
def test_every_truncation_of_a_golden_snapshot_is_a_typed_error(cut: int) -> None:
    with pytest.raises(CorruptSnapshotError) as info:
        read_producer_snapshot(DELREC_16.read_bytes()[:cut])
    assert info.value.position is not None and info.value.position <= cut


@given(st.binary(max_size=120))
def test_arbitrary_bytes_never_escape_as_untyped_errors(data: bytes) -> None:
    try:
        read_producer_snapshot(data)
    except FormatError as error:
        assert error.position is not None


def test_first_sequence_wraps_like_decrement_sequence() -> None:
    assert entry(last_sequence=15, offset_delta=3).first_sequence == 12
    assert entry(last_sequence=1, offset_delta=3).first_sequence == 2**31 - 2


def test_dump_line_for_an_ongoing_transaction_and_no_batch_metadata() -> None:
    line = kafka_dump_line(entry(last_offset=-1, current_txn_first_offset=42, coordinator_epoch=5))
    assert line == (
        "producerId: 7 producerEpoch: 2 coordinatorEpoch: 5 "
        "currentTxnFirstOffset: OptionalLong[42] lastTimestamp: 1795286526680 "
    )


int64 = st.integers(-(2**63), 2**63 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
entries = st.lists(
    st.builds(
        ProducerSnapshotEntry,
        int64,
        st.integers(-(2**15), 2**15 - 1),
        int32,
        int64,
        int32,
        int64,
        int32,
        int64,
    ),
    max_size=10,
)


@given(entries)
def test_snapshot_round_trips(table: list[ProducerSnapshotEntry]) -> None:
    data = encode_producer_snapshot(table)
    assert read_producer_snapshot(data).entries == tuple(table)
