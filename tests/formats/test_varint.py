"""Zig-zag varints: Kafka's ByteUtils encoding, bounded to 5 and 10 bytes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.errors import TruncatedError, VarintError
from lethe_formats.varint import (
    encode_varint,
    encode_varlong,
    read_varint,
    read_varlong,
)

# Expected bytes worked out by hand from the zig-zag definition
# (n << 1) ^ (n >> 31), 7 bits a byte, low group first.
VARINT_TABLE = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]
VARLONG_TABLE = [
    (2**63 - 1, "feffffffffffffffff01"),
    (-(2**63), "ffffffffffffffffff01"),
]


@pytest.mark.parametrize(("value", "hex_bytes"), VARINT_TABLE)
def test_varint_bytes_match_kafka(value: int, hex_bytes: str) -> None:
    assert encode_varint(value).hex() == hex_bytes
    assert read_varint(bytes.fromhex(hex_bytes), 0) == (value, len(hex_bytes) // 2)


@pytest.mark.parametrize(("value", "hex_bytes"), VARLONG_TABLE)
def test_varlong_bytes_match_kafka(value: int, hex_bytes: str) -> None:
    assert encode_varlong(value).hex() == hex_bytes
    assert read_varlong(bytes.fromhex(hex_bytes), 0) == (value, 10)


def test_a_sixth_varint_byte_is_refused_with_its_position() -> None:
    with pytest.raises(VarintError) as caught:
        read_varint(b"\x00\x80\x80\x80\x80\x80\x01", 1, "keyLength")
    assert (caught.value.position, caught.value.field) == (1, "keyLength")


def test_an_eleventh_varlong_byte_is_refused() -> None:
    with pytest.raises(VarintError):
        read_varlong(b"\x80" * 10 + b"\x01", 0)


def test_a_varint_cut_short_is_truncated() -> None:
    with pytest.raises(TruncatedError) as caught:
        read_varint(b"\x80\x80", 0, "length")
    assert caught.value.position == 0


def test_five_byte_varint_above_32_bits_is_refused() -> None:
    with pytest.raises(VarintError):
        read_varint(b"\xff\xff\xff\xff\x7f", 0)


def test_out_of_range_values_cannot_be_encoded() -> None:
    with pytest.raises(ValueError):
        encode_varint(2**31)
    with pytest.raises(ValueError):
        encode_varlong(-(2**63) - 1)


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trips(value: int) -> None:
    encoded = encode_varint(value)
    assert read_varint(encoded + b"\xaa", 0) == (value, len(encoded))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varlong_round_trips(value: int) -> None:
    encoded = encode_varlong(value)
    assert read_varlong(encoded, 0) == (value, len(encoded))
