"""Bad __consumer_offsets records give typed errors naming field and position, never a crash."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.coordinator import (
    GroupMemberMetadata,
    GroupMetadataValue,
    OffsetCommitValue,
    UnknownRecordTypeError,
    UnsupportedVersionError,
    decode_key,
    decode_record,
    decode_value,
    encode_value,
)
from lethe_formats.coordinator.consumer_protocol import decode_subscription
from lethe_formats.errors import CorruptRecordError, FormatError, TruncatedError, VarintError

# The value at offset 2 of golden __consumer_offsets-17: version 3, offset 3,
# leaderEpoch -1, metadata "billing-p0\0", commitTimestamp 1795289526739.
GOLDEN_COMMIT = (
    struct.pack(">hqi", 3, 3, -1) + b"\x00\x0bbilling-p0\x00" + struct.pack(">q", 1795289526739)
)


def test_golden_commit_value_decodes() -> None:
    value = decode_value(1, GOLDEN_COMMIT)
    assert value == OffsetCommitValue(3, "billing-p0\x00", 1795289526739)


@pytest.mark.parametrize("cut", range(len(GOLDEN_COMMIT)))
def test_every_truncation_is_a_truncated_error(cut: int) -> None:
    with pytest.raises(TruncatedError) as info:
        decode_value(1, GOLDEN_COMMIT[:cut])
    assert info.value.field is not None and info.value.field.startswith("value")
    assert info.value.position is not None and 0 <= info.value.position <= cut


def test_truncated_error_names_the_field_and_its_position() -> None:
    with pytest.raises(TruncatedError) as info:
        decode_value(1, GOLDEN_COMMIT[:20])  # inside the metadata string (length at 14)
    assert info.value.field == "value.body.metadata"
    assert info.value.position == 14


def test_huge_string_length_is_refused_before_reading() -> None:
    data = struct.pack(">hqi", 3, 1, -1) + struct.pack(">h", 0x7FFF) + b"x"
    with pytest.raises(TruncatedError, match="claims 32767 bytes, only 1 left"):
        decode_value(1, data)


def test_huge_flexible_array_count_is_refused() -> None:
    # GroupMetadataValue v4 with a member count uvarint of 0xFFFFFFFF.
    head = struct.pack(">h", 4) + b"\x01" + struct.pack(">i", 0) + b"\x00\x00" + bytes(8)
    with pytest.raises(TruncatedError) as info:
        decode_value(2, head + b"\xff\xff\xff\xff\x0f")
    assert info.value.field == "value.body.members"


def test_overlong_unsigned_varint_is_a_varint_error() -> None:
    data = struct.pack(">hqi", 4, 1, -1) + b"\xff\xff\xff\xff\xff\x01"
    with pytest.raises(VarintError) as info:
        decode_value(1, data)
    assert info.value.position == 14


def test_null_for_a_non_nullable_string_is_corrupt() -> None:
    data = struct.pack(">hqh", 0, 1, -1) + struct.pack(">q", 0)
    with pytest.raises(CorruptRecordError, match="invalid null"):
        decode_value(1, data)


def test_unknown_record_type_is_its_own_error() -> None:
    with pytest.raises(UnknownRecordTypeError) as info:
        decode_key(struct.pack(">h", 9) + b"\x00\x01g")
    assert (info.value.field, info.value.position) == ("key.version", 0)
    with pytest.raises(UnknownRecordTypeError):
        decode_value(42, b"\x00\x00")


def test_unsupported_value_version() -> None:
    with pytest.raises(UnsupportedVersionError, match="OffsetCommitValue: unsupported version 5"):
        decode_value(1, struct.pack(">hq", 5, 1))


def test_trailing_bytes_after_a_value_are_corrupt() -> None:
    with pytest.raises(CorruptRecordError, match="bytes left after the message"):
        decode_value(1, GOLDEN_COMMIT + b"\x00")


def test_null_key_is_corrupt_and_null_value_is_a_tombstone() -> None:
    with pytest.raises(CorruptRecordError):
        decode_key(None)
    record = decode_record((struct.pack(">h", 2) + struct.pack(">h", 1) + b"g", None))
    assert record.is_tombstone


def test_tags_out_of_order_are_corrupt() -> None:
    tags = b"\x02" + b"\x03\x00" + b"\x01\x00"
    data = struct.pack(">hqi", 4, 1, -1) + b"\x01" + struct.pack(">q", 2) + tags
    with pytest.raises(CorruptRecordError, match="out of order"):
        decode_value(1, data)


def test_negative_consumer_protocol_version_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decode_subscription(b"\xff\xff")


@given(st.integers(0, 8), st.binary(max_size=80))
def test_arbitrary_bytes_never_escape_as_anything_but_format_errors(kind: int, data: bytes) -> None:
    with contextlib.suppress(FormatError):
        decode_value(kind, data)
    with contextlib.suppress(FormatError):
        decode_key(data)


_text = st.text(max_size=20)
_i32 = st.integers(-(2**31), 2**31 - 1)
_i64 = st.integers(-(2**63), 2**63 - 1)


@given(_i64, _text, _i64, _i32, st.integers(0, 4))
def test_offset_commit_values_round_trip(
    offset: int, metadata: str, stamp: int, epoch: int, version: int
) -> None:
    value = OffsetCommitValue(
        offset,
        metadata,
        stamp,
        leader_epoch=epoch if version >= 3 else -1,
        expire_timestamp=stamp if version == 1 else -1,
        version=version,
    )
    assert decode_value(1, encode_value(value)) == value


@given(
    st.integers(0, 4),
    st.lists(st.tuples(_text, st.none() | _text, st.binary(max_size=10)), max_size=3),
)
def test_group_metadata_values_round_trip(
    version: int, members: list[tuple[str, str | None, bytes]]
) -> None:
    value = GroupMetadataValue(
        protocol_type="consumer",
        generation=1,
        protocol=None if not members else "range",
        leader=None if not members else members[0][0],
        members=tuple(
            GroupMemberMetadata(
                member_id=member,
                client_id="c",
                client_host="/h",
                session_timeout=1,
                subscription=data,
                assignment=data,
                group_instance_id=instance if version >= 3 else None,
                rebalance_timeout=5 if version >= 1 else -1,
            )
            for member, instance, data in members
        ),
        current_state_timestamp=7 if version >= 2 else -1,
        version=version,
    )
    assert decode_value(2, encode_value(value)) == value
