"""Every version of OffsetCommitValue and GroupMetadataValue against bytes laid out by
hand from Kafka's message specs (group-coordinator/.../common/message/*.json, 4.0)."""

from __future__ import annotations

import struct

import pytest
from lethe_formats.coordinator import (
    GroupMemberMetadata,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from lethe_formats.coordinator.consumer_protocol import decode_subscription, encode_subscription


def s16(text: str) -> bytes:
    """Classic string: int16 length + UTF-8."""
    return struct.pack(">h", len(text)) + text.encode()


def compact(data: bytes) -> bytes:
    """Compact string/bytes of fewer than 127 bytes: uvarint(length + 1)."""
    return bytes([len(data) + 1]) + data


def b32(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


I64 = struct.Struct(">q").pack
I32 = struct.Struct(">i").pack
I16 = struct.Struct(">h").pack

OFFSET_COMMIT_BYTES = {
    0: I16(0) + I64(42) + s16("meta") + I64(1000),
    1: I16(1) + I64(42) + s16("meta") + I64(1000) + I64(5000),
    2: I16(2) + I64(42) + s16("meta") + I64(1000),
    3: I16(3) + I64(42) + I32(7) + s16("meta") + I64(1000),
    4: I16(4) + I64(42) + I32(7) + compact(b"meta") + I64(1000) + b"\x00",
}


@pytest.mark.parametrize("version", sorted(OFFSET_COMMIT_BYTES))
def test_offset_commit_value_every_version(version: int) -> None:
    data = OFFSET_COMMIT_BYTES[version]
    value = decode_value(1, data)
    assert isinstance(value, OffsetCommitValue)
    assert (value.version, value.offset, value.metadata, value.commit_timestamp) == (
        version,
        42,
        "meta",
        1000,
    )
    assert value.leader_epoch == (7 if version >= 3 else -1)
    assert value.expire_timestamp == (5000 if version == 1 else -1)
    assert encode_value(value) == data


def test_offset_commit_v4_unknown_tagged_field_survives_round_trip() -> None:
    tagged = b"\x01" + b"\x05" + b"\x02" + b"hi"  # one field: tag 5, size 2, "hi"
    data = I16(4) + I64(1) + I32(-1) + compact(b"") + I64(2) + tagged
    value = decode_value(1, data)
    assert isinstance(value, OffsetCommitValue)
    assert value.unknown_tags == ((5, b"hi"),)
    assert encode_value(value) == data


def _member_v(version: int) -> bytes:
    flexible = version >= 4

    def text(value: str) -> bytes:
        return compact(value.encode()) if flexible else s16(value)

    def raw(value: bytes) -> bytes:
        return compact(value) if flexible else b32(value)

    out = text("m-1")
    if version >= 3:
        out += b"\x00" if flexible else I16(-1)  # groupInstanceId null
    out += text("client") + text("/127.0.0.1")
    if version >= 1:
        out += I32(300000)
    out += I32(10000) + raw(b"\x00\x01") + raw(b"\x00\x02")
    return out + (b"\x00" if flexible else b"")


def _group_v(version: int) -> bytes:
    flexible = version >= 4

    def text(value: str) -> bytes:
        return compact(value.encode()) if flexible else s16(value)

    out = I16(version) + text("consumer") + I32(3) + text("range") + text("m-1")
    if version >= 2:
        out += I64(123)
    out += (b"\x02" if flexible else I32(1)) + _member_v(version)
    return out + (b"\x00" if flexible else b"")


@pytest.mark.parametrize("version", range(5))
def test_group_metadata_value_every_version(version: int) -> None:
    data = _group_v(version)
    value = decode_value(2, data)
    assert isinstance(value, GroupMetadataValue)
    assert (value.version, value.protocol_type, value.generation) == (version, "consumer", 3)
    assert (value.protocol, value.leader) == ("range", "m-1")
    assert value.current_state_timestamp == (123 if version >= 2 else -1)
    assert value.members == (
        GroupMemberMetadata(
            member_id="m-1",
            client_id="client",
            client_host="/127.0.0.1",
            session_timeout=10000,
            subscription=b"\x00\x01",
            assignment=b"\x00\x02",
            rebalance_timeout=300000 if version >= 1 else -1,
        ),
    )
    assert encode_value(value) == data


def test_empty_group_has_null_protocol_and_leader() -> None:
    # As Kafka writes a group that became empty (golden __consumer_offsets-17 offset 6).
    data = I16(3) + s16("consumer") + I32(2) + I16(-1) + I16(-1) + I64(9) + I32(0)
    value = decode_value(2, data)
    assert value == GroupMetadataValue("consumer", 2, None, None, (), 9)
    assert encode_value(GroupMetadataValue("consumer", 2, None, None, (), 9)) == data


def test_fields_outside_a_version_are_dropped_when_encoding() -> None:
    value = OffsetCommitValue(42, "meta", 1000, leader_epoch=7, expire_timestamp=5000, version=0)
    assert encode_value(value) == OFFSET_COMMIT_BYTES[0]


@pytest.mark.parametrize(
    ("key", "data"),
    [
        (OffsetCommitKey("g", "t", 3), I16(1) + s16("g") + s16("t") + I32(3)),
        (OffsetCommitKey("g", "t", 3, version=0), I16(0) + s16("g") + s16("t") + I32(3)),
        (GroupMetadataKey("g"), I16(2) + s16("g")),
    ],
)
def test_keys_encode_and_decode(key: object, data: bytes) -> None:
    assert decode_key(data) == key
    assert encode_key(key) == data  # type: ignore[arg-type]


def test_newer_consumer_protocol_versions_read_with_the_newest_layout() -> None:
    # ConsumerProtocol: later versions only append fields; Kafka reads them as v3.
    v3_body = I32(1) + s16("t") + I32(-1) + I32(0) + I32(5) + I16(-1)
    subscription = decode_subscription(I16(9) + v3_body + b"future fields")
    assert (subscription.version, subscription.topics, subscription.user_data) == (9, ("t",), None)
    assert (subscription.generation_id, subscription.rack_id) == (5, None)
    v0 = decode_subscription(I16(0) + I32(1) + s16("t") + b32(b"ud"))
    assert (v0.owned_partitions, v0.generation_id, v0.user_data) == ((), -1, b"ud")
    assert encode_subscription(v0) == I16(0) + I32(1) + s16("t") + b32(b"ud")
