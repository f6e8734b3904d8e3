"""v0/v1 messages: hand-built from the documented layout, wrappers, offsets, bad input."""

from __future__ import annotations

import gzip
import struct
import zlib

import cramjam
import pytest
from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
)
from lethe_formats.model import Compression, LegacyMessage, RecordBatch, TimestampType
from lethe_formats.records import decode_log, decode_message, encode_message
from lethe_formats.records.builder import RecordSpec, build_batch, build_legacy_message_set


def _bytes(data: bytes | None) -> bytes:
    return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data


def _entry(
    offset: int,
    *,
    magic: int,
    key: bytes | None,
    value: bytes | None,
    attributes: int = 0,
    timestamp: int = -1,
) -> bytes:
    """offset | size | crc (IEEE, magic..end) | magic | attributes | [timestamp] | key | value"""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += _bytes(key) + _bytes(value)
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


V0 = _entry(7, magic=0, key=b"k", value=b"hello")
V1 = _entry(8, magic=1, key=None, value=b"v", timestamp=12345)


def test_hand_built_v0_message_decodes() -> None:
    message = decode_message(V0)
    assert (message.offset, message.message_size, message.magic) == (7, 20, 0)
    assert (message.key, message.value, message.timestamp) == (b"k", b"hello", None)
    assert message.crc == zlib.crc32(V0[16:])
    assert message.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE
    assert message.size_in_bytes == len(V0)


def test_hand_built_v1_message_decodes() -> None:
    message = decode_message(V1)
    assert (message.offset, message.magic, message.timestamp) == (8, 1, 12345)
    assert (message.key, message.value) == (None, b"v")
    assert message.timestamp_type is TimestampType.CREATE_TIME


def test_builder_writes_the_hand_built_bytes() -> None:
    assert build_legacy_message_set([RecordSpec(b"k", b"hello")], magic=0, base_offset=7) == V0
    spec = RecordSpec(None, b"v", timestamp=12345)
    assert build_legacy_message_set([spec], magic=1, base_offset=8) == V1


@pytest.mark.parametrize("entry", [V0, V1])
def test_plain_messages_re_encode_to_the_same_bytes(entry: bytes) -> None:
    assert encode_message(decode_message(entry)) == entry


def _wrapper(offset: int, inner: bytes, *, magic: int = 1, codec: int = 1, ts: int = 20) -> bytes:
    value = (
        gzip.compress(inner, mtime=0) if codec == 1 else bytes(cramjam.snappy.compress_raw(inner))
    )
    return _entry(offset, magic=magic, key=None, value=value, attributes=codec, timestamp=ts)


INNER_V1 = _entry(0, magic=1, key=b"a", value=b"1", timestamp=10) + _entry(
    1, magic=1, key=b"b", value=b"2", timestamp=20
)


def test_v1_wrapper_inner_offsets_are_made_absolute() -> None:
    message = decode_message(_wrapper(101, INNER_V1))
    assert message.compression is Compression.GZIP
    assert [m.offset for m in message.inner] == [100, 101]
    assert [(m.key, m.value, m.timestamp) for m in message.inner] == [
        (b"a", b"1", 10),
        (b"b", b"2", 20),
    ]


def test_v1_wrapper_offset_zero_means_base_zero() -> None:
    message = decode_message(_wrapper(0, INNER_V1))
    assert [m.offset for m in message.inner] == [0, 1]


def test_v1_wrapper_offset_below_last_inner_is_invalid() -> None:
    inner = _entry(0, magic=1, key=None, value=b"x") + _entry(5, magic=1, key=None, value=b"y")
    with pytest.raises(InvalidRecordError, match="wrapper offset"):
        decode_message(_wrapper(3, inner))


def test_v0_wrapper_inner_offsets_are_absolute() -> None:
    inner = _entry(50, magic=0, key=None, value=b"x") + _entry(51, magic=0, key=None, value=b"y")
    message = decode_message(_wrapper(51, inner, magic=0, codec=2))
    assert [m.offset for m in message.inner] == [50, 51]
    assert message.timestamp is None


def test_wrapper_re_encodes_with_relative_v1_offsets() -> None:
    message = decode_message(_wrapper(101, INNER_V1))
    again = encode_message(message)
    inner = gzip.decompress(decode_message(again).value or b"")
    assert struct.unpack_from(">q", inner, 0)[0] == 0
    assert decode_message(again).inner == message.inner


def test_inner_messages_must_match_the_wrapper_magic() -> None:
    inner = _entry(0, magic=0, key=None, value=b"x")
    with pytest.raises(InvalidRecordError, match="does not match"):
        decode_message(_wrapper(0, inner))


def test_inner_messages_must_not_be_compressed() -> None:
    with pytest.raises(InvalidRecordError, match="must not be compressed"):
        decode_message(_wrapper(5, _wrapper(1, INNER_V1)))


def test_wrapper_without_inner_messages_is_invalid() -> None:
    with pytest.raises(InvalidRecordError, match="no inner records"):
        decode_message(_wrapper(0, b""))


def test_wrapper_with_null_value_is_invalid() -> None:
    entry = _entry(0, magic=1, key=None, value=None, attributes=1)
    with pytest.raises(InvalidRecordError, match="null value"):
        decode_message(entry)


def test_error_inside_the_inner_set_is_reported_at_the_wrapper_value() -> None:
    bad_inner = bytearray(INNER_V1)
    bad_inner[20] ^= 0x01
    entry = _wrapper(1, bytes(bad_inner))
    with pytest.raises(ChecksumError) as info:
        decode_message(entry)
    assert info.value.position == len(entry) - len(gzip.compress(bytes(bad_inner), mtime=0))


def test_flipped_bit_is_a_checksum_error_at_byte_12() -> None:
    data = bytearray(V1)
    data[-1] ^= 0x10
    with pytest.raises(ChecksumError) as info:
        decode_message(bytes(data), file="old.log")
    assert (info.value.position, info.value.field, info.value.file) == (12, "crc", "old.log")
    assert decode_message(bytes(data), verify_crc=False).value == b"f"


def test_zstd_wrapper_is_unsupported_before_magic_2() -> None:
    entry = _entry(0, magic=1, key=None, value=b"x", attributes=4)
    with pytest.raises(UnsupportedCompressionError) as info:
        decode_message(entry)
    assert info.value.position == 17


def test_message_size_below_the_v0_overhead_is_corrupt() -> None:
    data = V0[:8] + struct.pack(">i", 13) + V0[12:]
    with pytest.raises(CorruptRecordError) as info:
        decode_message(data)
    assert info.value.position == 8


@pytest.mark.parametrize("cut", range(1, len(V1)))
def test_truncated_message_is_a_truncated_error(cut: int) -> None:
    with pytest.raises(TruncatedError):
        decode_log(V1[:cut])


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize(
    "codec", [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.NONE]
)
def test_builder_message_sets_decode_to_their_specs(magic: int, codec: Compression) -> None:
    specs = [RecordSpec(b"a", b"1", timestamp=30), RecordSpec(None, None, timestamp=10)]
    data = build_legacy_message_set(specs, magic=magic, base_offset=40, compression=codec)
    entries = decode_log(data)
    assert all(isinstance(e, LegacyMessage) for e in entries)
    messages = [m for e in entries if isinstance(e, LegacyMessage) for m in (e.inner or (e,))]
    assert [(m.offset, m.key, m.value) for m in messages] == [(40, b"a", b"1"), (41, None, None)]
    assert [m.timestamp for m in messages] == ([30, 10] if magic else [None, None])
    if codec is not Compression.NONE:
        (wrapper,) = entries
        assert isinstance(wrapper, LegacyMessage)
        assert (wrapper.offset, wrapper.key) == (41, None)
        assert wrapper.timestamp == (30 if magic else None)
        assert encode_message(wrapper) == data


def test_v1_log_append_time_wrapper_carries_the_broker_time() -> None:
    specs = [RecordSpec(b"a", b"1", timestamp=30)]
    data = build_legacy_message_set(
        specs,
        magic=1,
        base_offset=0,
        compression=Compression.GZIP,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=999,
    )
    wrapper = decode_message(data)
    assert wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert wrapper.timestamp == 999
    assert wrapper.attributes == 0x09


def test_magic_0_lz4_wrapper_round_trips_with_kafkas_header_checksum() -> None:
    specs = [RecordSpec(b"a", b"1"), RecordSpec(b"b", b"2")]
    data = build_legacy_message_set(specs, magic=0, base_offset=3, compression=Compression.LZ4)
    assert [m.offset for m in decode_message(data).inner] == [3, 4]


def test_segment_may_mix_magics() -> None:
    v2 = build_batch([RecordSpec(b"k", b"v", timestamp=5)], base_offset=9)
    entries = decode_log(V0 + V1 + v2)
    assert [type(e) for e in entries] == [LegacyMessage, LegacyMessage, RecordBatch]


def test_bytes_after_the_value_inside_message_size_are_corrupt_in_both_decoders() -> None:
    """A v1 message whose messageSize claims 2 bytes more than its fields use.

    Layout: offset 0-7, size 8-11, crc 12-15, magic 16, attributes 17,
    timestamp 18-25, key length 26-29 (-1), value length 30-33, value 34-35,
    then the 2 stray bytes at 36.
    """
    from lethe_formats.records.scan import LogScanner

    body = bytes([1, 0]) + struct.pack(">qii", 5, -1, 2) + b"hi" + b"XY"
    message = struct.pack(">I", zlib.crc32(body)) + body
    entry = struct.pack(">qi", 7, len(message)) + message
    with pytest.raises(CorruptRecordError) as caught:
        decode_message(entry)
    assert (caught.value.position, caught.value.field) == (36, "messageSize")
    scanner = LogScanner(entry)
    assert list(scanner) == []
    assert isinstance(scanner.stop_error, CorruptRecordError)
    assert scanner.stop_error.position == 36
