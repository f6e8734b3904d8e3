"""v2 batches: a batch hand-built from the documented layout, bad input, property round trips."""

from __future__ import annotations

import contextlib
import struct
import tracemalloc

import cramjam
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.crc import crc32c
from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
    VarintError,
)
from lethe_formats.model import Compression, Header, RecordBatch, TimestampType
from lethe_formats.records import decode_batch, decode_log, encode_batch
from lethe_formats.records.builder import RecordSpec, build_batch, build_empty_batch


def _batch(
    records: bytes,
    count: int,
    *,
    base_offset: int = 5,
    attributes: int = 0,
    last_offset_delta: int = 0,
    base_timestamp: int = 1000,
    max_timestamp: int = 1000,
    producer: tuple[int, int, int] = (-1, -1, -1),
    leader_epoch: int = 0,
) -> bytes:
    """A v2 batch packed field by field from the layout table, CRC-32C over [21, end)."""
    producer_id, producer_epoch, base_sequence = producer
    covered = struct.pack(
        ">hiqqqhii",
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )
    covered += records
    batch_length = 4 + 1 + 4 + len(covered)
    return (
        struct.pack(">qiib", base_offset, batch_length, leader_epoch, 2)
        + struct.pack(">I", crc32c(covered))
        + covered
    )


# One record, key "k", value "v", no headers, deltas 0 (DefaultRecord layout):
# length 8 (zig-zag 0x10) | attributes 0 | tsDelta 0 | offsetDelta 0 |
# keyLength 1 (0x02) "k" | valueLength 1 (0x02) "v" | headers 0
RECORD_KV = bytes.fromhex("10 00 00 00 02 6b 02 76 00")
SMALL = _batch(RECORD_KV, 1)


def test_hand_built_batch_decodes_field_by_field() -> None:
    batch = decode_batch(SMALL)
    h = batch.header
    assert (h.base_offset, h.batch_length, h.partition_leader_epoch, h.magic) == (5, 58, 0, 2)
    assert h.crc == crc32c(SMALL[21:])
    assert (h.last_offset_delta, h.base_timestamp, h.max_timestamp) == (0, 1000, 1000)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (-1, -1, -1, 1)
    (record,) = batch.records
    assert (record.key, record.value, record.headers, record.attributes) == (b"k", b"v", (), 0)
    assert batch.offset_of(record) == 5
    assert batch.timestamp_of(record) == 1000


def test_builder_writes_the_hand_built_bytes() -> None:
    spec = RecordSpec(key=b"k", value=b"v", timestamp=1000)
    assert build_batch([spec], base_offset=5, partition_leader_epoch=0) == SMALL


def test_empty_batch_is_a_header_with_base_timestamp_minus_one() -> None:
    expected = _batch(
        b"",
        0,
        base_offset=100,
        last_offset_delta=3,
        base_timestamp=-1,
        max_timestamp=777,
        producer=(9, 2, 40),
        attributes=0x10,
    )
    built = build_empty_batch(
        base_offset=100,
        last_offset_delta=3,
        max_timestamp=777,
        producer_id=9,
        producer_epoch=2,
        base_sequence=40,
        partition_leader_epoch=0,
        is_transactional=True,
    )
    assert built == expected
    header = decode_batch(built).header
    assert (header.records_count, header.last_offset, header.last_sequence) == (0, 103, 43)
    assert header.delete_horizon_ms is None


@pytest.mark.parametrize("cut", range(len(SMALL)))
def test_truncation_at_every_byte_is_a_truncated_error(cut: int) -> None:
    with pytest.raises(TruncatedError):
        decode_batch(SMALL[:cut])
    if cut:
        with pytest.raises(TruncatedError) as info:
            decode_log(SMALL[:cut], file="x.log")
        assert (info.value.position, info.value.file) == (0, "x.log")


def test_torn_second_batch_names_its_position() -> None:
    data = SMALL + SMALL[:30]
    with pytest.raises(TruncatedError) as info:
        decode_log(data)
    assert info.value.position == len(SMALL)


@pytest.mark.parametrize("index", range(21, len(SMALL)))
def test_flipped_bit_in_covered_bytes_is_a_checksum_error_at_17(index: int) -> None:
    data = bytearray(SMALL)
    data[index] ^= 0x04
    with pytest.raises(ChecksumError) as info:
        decode_batch(bytes(data), file="seg.log")
    assert (info.value.position, info.value.field, info.value.file) == (17, "crc", "seg.log")


def test_flipped_bit_in_stored_crc_is_a_checksum_error() -> None:
    data = bytearray(SMALL)
    data[18] ^= 0x01
    with pytest.raises(ChecksumError) as info:
        decode_batch(bytes(data))
    assert info.value.stored != info.value.computed


def test_partition_leader_epoch_is_not_covered_by_the_crc() -> None:
    data = bytearray(SMALL)
    data[15] ^= 0x01
    assert decode_batch(bytes(data)).header.partition_leader_epoch == 1


def test_crc_check_can_be_skipped() -> None:
    data = bytearray(SMALL)
    data[68] ^= 0x01  # the value byte "v" -> "w"
    batch = decode_batch(bytes(data), verify_crc=False)
    assert batch.records[0].value == b"w"


def _with_length(length: int) -> bytes:
    return SMALL[:8] + struct.pack(">i", length) + SMALL[12:]


def test_negative_batch_length_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError) as info:
        decode_batch(_with_length(-1))
    assert (info.value.position, info.value.field) == (8, "batch_length")


def test_batch_length_below_the_header_size_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decode_batch(_with_length(48))


def test_two_gib_batch_length_is_truncated_without_allocating() -> None:
    data = _with_length(2**31 - 1)
    tracemalloc.start()
    try:
        with pytest.raises(TruncatedError) as info:
            decode_batch(data)
        with pytest.raises(TruncatedError):
            decode_log(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.position == 8
    assert peak < 1 << 20


def test_six_byte_varint_is_a_varint_error_at_the_record() -> None:
    data = _batch(bytes.fromhex("80 80 80 80 80 00"), 1)
    with pytest.raises(VarintError) as info:
        decode_batch(data)
    assert info.value.position == 61


def test_negative_headers_count_is_an_invalid_record() -> None:
    # length 6 | attrs | ts | off | key null (01) | value null (01) | headers -2 (03)
    data = _batch(bytes.fromhex("0c 00 00 00 01 01 03"), 1)
    with pytest.raises(InvalidRecordError) as info:
        decode_batch(data)
    assert info.value.position == 67


def test_negative_header_key_length_is_an_invalid_record() -> None:
    # ... headers 1 (02) | header key length -1 (01)
    data = _batch(bytes.fromhex("0e 00 00 00 01 01 02 01"), 1)
    with pytest.raises(InvalidRecordError):
        decode_batch(data)


def test_unknown_magic_is_unsupported_at_byte_16() -> None:
    data = bytearray(SMALL)
    data[16] = 3
    with pytest.raises(UnsupportedMagicError) as info:
        decode_log(bytes(data))
    assert info.value.position == 16
    with pytest.raises(UnsupportedMagicError):
        decode_batch(bytes(data))


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_undefined_codec_is_unsupported_at_the_attributes(codec_id: int) -> None:
    with pytest.raises(UnsupportedCompressionError) as info:
        decode_batch(_batch(RECORD_KV, 1, attributes=codec_id))
    assert (info.value.position, info.value.field) == (21, "attributes")


def test_negative_record_count_is_an_invalid_record_at_byte_57() -> None:
    with pytest.raises(InvalidRecordError) as info:
        decode_batch(_batch(b"", -1))
    assert info.value.position == 57


def test_fewer_records_than_the_count_is_an_invalid_record() -> None:
    with pytest.raises(InvalidRecordError):
        decode_batch(_batch(RECORD_KV, 2))


def test_bytes_after_the_last_record_are_an_invalid_record() -> None:
    with pytest.raises(InvalidRecordError, match="Incorrect declared batch size"):
        decode_batch(_batch(RECORD_KV + b"\x00", 1))


def test_record_length_beyond_the_batch_is_an_invalid_record() -> None:
    with pytest.raises(InvalidRecordError):
        decode_batch(_batch(b"\x7e" + RECORD_KV[1:], 1))


def test_record_length_longer_than_its_fields_is_an_invalid_record() -> None:
    with pytest.raises(InvalidRecordError):
        decode_batch(_batch(b"\x12" + RECORD_KV[1:] + b"\x00", 1))


def test_corrupt_compressed_records_are_corrupt_at_the_block() -> None:
    data = _batch(b"not gzip at all", 1, attributes=int(Compression.GZIP))
    with pytest.raises(CorruptRecordError) as info:
        decode_batch(data)
    assert info.value.position == 61


def test_error_inside_decompressed_records_is_reported_at_the_block() -> None:
    good = build_batch([RecordSpec(b"k", b"v", timestamp=1)], base_offset=0)
    records = good[61:]
    block = bytes(cramjam.gzip.compress(records + b"\x00"))
    with pytest.raises(InvalidRecordError) as info:
        decode_batch(_batch(block, 1, attributes=1))
    assert info.value.position == 61
    assert "decompressed" in info.value.message


def test_position_argument_makes_errors_absolute() -> None:
    data = bytearray(SMALL + SMALL)
    data[len(SMALL) + 40] ^= 0x01
    with pytest.raises(ChecksumError) as info:
        decode_batch(bytes(data), len(SMALL))
    assert info.value.position == len(SMALL) + 17


def test_delete_horizon_moves_the_base_timestamp_and_keeps_record_timestamps() -> None:
    specs = [RecordSpec(b"a", None, timestamp=1_000), RecordSpec(b"b", b"x", timestamp=1_500)]
    batch = decode_batch(build_batch(specs, base_offset=7, delete_horizon_ms=9_000))
    assert batch.header.has_delete_horizon
    assert batch.header.attributes & 0x40
    assert batch.header.base_timestamp == batch.header.delete_horizon_ms == 9_000
    assert [r.timestamp_delta for r in batch.records] == [-8_000, -7_500]
    assert [batch.timestamp_of(r) for r in batch.records] == [1_000, 1_500]
    assert batch.header.max_timestamp == 1_500


def test_offset_deltas_leave_gaps_and_last_offset_can_be_forced() -> None:
    specs = [RecordSpec(b"a", b"1", timestamp=1), RecordSpec(b"b", b"2", timestamp=2)]
    data = build_batch(specs, base_offset=4, offset_deltas=[1, 3], last_offset_delta=5)
    batch = decode_batch(data)
    assert [batch.offset_of(r) for r in batch.records] == [5, 7]
    assert batch.header.last_offset == 9


def test_kip87_flag_is_set_only_when_asked() -> None:
    specs = [RecordSpec(b"a", b"kept", timestamp=1, kip87_tombstone=True), RecordSpec(b"b", None)]
    batch = decode_batch(build_batch(specs, base_offset=0))
    assert [r.attributes for r in batch.records] == [1, 0]
    assert batch.records[0].has_kip87_tombstone_flag
    assert not batch.records[1].has_kip87_tombstone_flag


_BYTES = st.none() | st.binary(max_size=40)
_HEADER = st.builds(Header, st.text(max_size=8).map(str.encode), st.none() | st.binary(max_size=12))
_SPEC = st.builds(
    RecordSpec,
    key=_BYTES,
    value=_BYTES,
    headers=st.lists(_HEADER, max_size=3).map(tuple),
    timestamp=st.integers(0, 2**45),
    kip87_tombstone=st.booleans(),
)


@given(
    specs=st.lists(_SPEC, min_size=1, max_size=6),
    base_offset=st.integers(0, 2**62),
    codec=st.sampled_from(list(Compression)),
    log_append=st.none() | st.integers(0, 2**45),
    transactional=st.booleans(),
    horizon=st.none() | st.integers(0, 2**45),
    producer=st.tuples(st.integers(-1, 2**62), st.integers(-1, 2**15 - 1), st.integers(-1, 2**30)),
    leader_epoch=st.integers(-1, 2**31 - 1),
    gap=st.integers(1, 3),
    framing=st.sampled_from(["raw", "xerial"]),
)
def test_built_batches_decode_to_their_specs(
    *,
    specs: list[RecordSpec],
    base_offset: int,
    codec: Compression,
    log_append: int | None,
    transactional: bool,
    horizon: int | None,
    producer: tuple[int, int, int],
    leader_epoch: int,
    gap: int,
    framing: str,
) -> None:
    kind = TimestampType.CREATE_TIME if log_append is None else TimestampType.LOG_APPEND_TIME
    deltas = [i * gap for i in range(len(specs))]
    data = build_batch(
        specs,
        base_offset=base_offset,
        compression=codec,
        timestamp_type=kind,
        log_append_time=log_append,
        producer_id=producer[0],
        producer_epoch=producer[1],
        base_sequence=producer[2],
        partition_leader_epoch=leader_epoch,
        is_transactional=transactional,
        delete_horizon_ms=horizon,
        offset_deltas=deltas,
        snappy_framing=framing,
    )
    (batch,) = decode_log(data)
    assert isinstance(batch, RecordBatch)
    _check(batch, specs, deltas, base_offset=base_offset, kind=kind, horizon=horizon)
    h = batch.header
    assert (h.compression, h.is_transactional, h.is_control) == (codec, transactional, False)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == producer
    assert h.partition_leader_epoch == leader_epoch
    assert h.size_in_bytes == len(data)
    if log_append is not None:
        assert h.max_timestamp == log_append
    assert decode_batch(encode_batch(batch, snappy_framing=framing)).records == batch.records


def _check(
    batch: RecordBatch,
    specs: list[RecordSpec],
    deltas: list[int],
    *,
    base_offset: int,
    kind: TimestampType,
    horizon: int | None,
) -> None:
    h = batch.header
    assert h.timestamp_type is kind
    assert h.delete_horizon_ms == horizon
    assert h.last_offset == base_offset + deltas[-1]
    assert h.records_count == len(specs)
    for record, spec, delta in zip(batch.records, specs, deltas, strict=True):
        assert (record.key, record.value, record.headers) == (spec.key, spec.value, spec.headers)
        assert record.has_kip87_tombstone_flag is spec.kip87_tombstone
        assert batch.offset_of(record) == base_offset + delta
        assert h.base_timestamp + record.timestamp_delta == spec.timestamp


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_escape_as_anything_but_format_errors(data: bytes) -> None:
    with contextlib.suppress(FormatError):
        decode_log(data)


@given(st.integers(0, len(SMALL) - 1), st.integers(0, 7))
def test_any_flipped_bit_is_caught_or_outside_the_crc(index: int, bit: int) -> None:
    data = bytearray(SMALL)
    data[index] ^= 1 << bit
    try:
        batch = decode_batch(bytes(data))
    except FormatError:
        return
    assert index < 16  # only baseOffset, batchLength-neutral flips and the epoch escape the CRC
    assert batch.records == decode_batch(SMALL).records
