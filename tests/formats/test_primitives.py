"""The Construct building blocks: exact varint bytes, bounds, typed errors, positions."""

from __future__ import annotations

import tracemalloc
import zlib

import pytest
from construct import Struct
from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    InvalidRecordError,
    TruncatedError,
    VarintError,
)
from lethe_formats.primitives import (
    Checksummed,
    HeaderKeyBytes,
    Int8,
    Int32,
    Int32Bytes,
    SizePrefixed,
    UInt32,
    VarBytes,
    VarInt,
    VarLong,
    Window,
)
from lethe_formats.records.attributes import BitFields

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# Expected bytes worked out from the zig-zag definition (ByteUtils.java):
# zz = (n << 1) ^ (n >> 31|63), then 7 bits a byte, low group first.
VARINT_TABLE = [
    (0, "00"),  # zz 0
    (-1, "01"),  # zz 1
    (1, "02"),  # zz 2
    (63, "7e"),  # zz 126, last one-byte value
    (64, "8001"),  # zz 128
    (-64, "7f"),  # zz 127
    (-65, "8101"),  # zz 129
    (INT32_MAX, "feffffff0f"),  # zz 0xFFFFFFFE
    (INT32_MIN, "ffffffff0f"),  # zz 0xFFFFFFFF
]
VARLONG_TABLE = [
    *VARINT_TABLE[:7],
    (INT32_MAX, "feffffff0f"),
    (INT32_MIN, "ffffffff0f"),
    (INT64_MAX, "feffffffffffffffff01"),  # zz 2**64 - 2
    (INT64_MIN, "ffffffffffffffffff01"),  # zz 2**64 - 1
]


@pytest.mark.parametrize(("value", "hexbytes"), VARINT_TABLE)
def test_varint_encodes_and_decodes_the_zigzag_bytes(value: int, hexbytes: str) -> None:
    assert VarInt.build(value).hex() == hexbytes
    assert VarInt.parse(bytes.fromhex(hexbytes)) == value


@pytest.mark.parametrize(("value", "hexbytes"), VARLONG_TABLE)
def test_varlong_encodes_and_decodes_the_zigzag_bytes(value: int, hexbytes: str) -> None:
    assert VarLong.build(value).hex() == hexbytes
    assert VarLong.parse(bytes.fromhex(hexbytes)) == value


def test_varint_of_six_bytes_is_a_varint_error_at_its_position() -> None:
    data = b"\x00" * 3 + b"\x80" * 5 + b"\x00"
    with pytest.raises(VarintError) as info:
        VarInt.parse_stream(Window(data[3:], base=1003))
    assert info.value.position == 1003


def test_varlong_of_eleven_bytes_is_a_varint_error() -> None:
    with pytest.raises(VarintError):
        VarLong.parse(b"\x80" * 10 + b"\x00")


def test_varint_wider_than_32_bits_is_a_varint_error() -> None:
    with pytest.raises(VarintError):
        VarInt.parse(bytes.fromhex("ffffffff1f"))


def test_varint_out_of_range_cannot_be_built() -> None:
    with pytest.raises(ValueError, match="int32"):
        VarInt.build(INT32_MAX + 1)


def test_truncated_varint_is_a_truncated_error_at_its_start() -> None:
    with pytest.raises(TruncatedError) as info:
        VarInt.parse_stream(Window(b"\x80\x80", base=40))
    assert info.value.position == 40


def test_fixed_int_short_read_names_the_field_and_position() -> None:
    schema = Struct("a" / Int8, "b" / Int32)
    with pytest.raises(TruncatedError) as info:
        schema.parse_stream(Window(b"\x01\x00\x00", base=100))
    assert (info.value.field, info.value.position) == ("b", 101)


def test_var_bytes_minus_one_is_null_and_builds_back() -> None:
    assert VarBytes.parse(b"\x01") is None
    assert VarBytes.build(None) == b"\x01"
    assert VarBytes.parse(b"\x06abc") == b"abc"


def test_any_negative_length_reads_as_null_like_kafka() -> None:
    assert VarBytes.parse(b"\x03") is None  # zig-zag 3 = -2
    assert Int32Bytes.parse(b"\xff\xff\xff\xfe") is None


def test_negative_header_key_length_is_invalid() -> None:
    with pytest.raises(InvalidRecordError):
        HeaderKeyBytes.parse(b"\x01")


def test_claimed_length_beyond_the_data_is_truncated_without_allocating_it() -> None:
    data = b"\x7f\xff\xff\xff" + b"x" * 10
    tracemalloc.start()
    try:
        with pytest.raises(TruncatedError):
            Int32Bytes.parse(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_size_prefixed_checks_minimum_overrun_and_leftover() -> None:
    schema = SizePrefixed(Int32, Struct("x" / Int8), minimum=1, field="size")
    assert schema.parse(b"\x00\x00\x00\x01\x07").x == 7
    with pytest.raises(CorruptRecordError):
        schema.parse(b"\xff\xff\xff\xff\x07")
    with pytest.raises(TruncatedError):
        schema.parse(b"\x00\x00\x00\x09\x07")
    with pytest.raises(CorruptRecordError, match="left unread"):
        schema.parse(b"\x00\x00\x00\x02\x07\x08")
    assert schema.build({"x": 7}) == b"\x00\x00\x00\x01\x07"


def test_size_prefixed_can_turn_inner_truncation_into_invalid_record() -> None:
    schema = SizePrefixed(VarInt, Struct("x" / Int32), inner=InvalidRecordError)
    with pytest.raises(InvalidRecordError):
        schema.parse(b"\x04\x00\x00")


def test_checksummed_covers_the_bytes_after_the_crc() -> None:
    schema = Checksummed(UInt32, zlib.crc32, Struct("a" / Int8, "b" / Int8))
    built = schema.build({"a": 1, "b": 2})
    assert built == zlib.crc32(b"\x01\x02").to_bytes(4, "big") + b"\x01\x02"
    parsed = schema.parse(built)
    assert (parsed.a, parsed.b, parsed.crc_valid) == (1, 2, True)


def test_checksum_mismatch_names_the_crc_position_unless_disabled() -> None:
    schema = Checksummed(UInt32, zlib.crc32, Struct("a" / Int8))
    bad = b"\x00\x00\x00\x00\x01"
    with pytest.raises(ChecksumError) as info:
        schema.parse_stream(Window(bad, base=12))
    assert (info.value.position, info.value.field) == (12, "crc")
    assert info.value.computed == zlib.crc32(b"\x01")
    assert schema.parse(bad, verify_crc=False).crc_valid is False


def test_bit_fields_name_bits_and_keep_unnamed_ones() -> None:
    bits = BitFields(Int8, 8, low=(0, 3), flag=(3, 1))
    parsed = bits.parse(b"\xf5")  # 1111 0101
    assert (parsed.low, parsed.flag, parsed.raw) == (5, False, -11)
    assert bits.build(parsed) == b"\xf5"
    assert bits.build({"low": 2, "flag": True}) == b"\x0a"
    assert bits.part(0x0D, "low") == 5
