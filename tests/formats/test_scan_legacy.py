"""Magic 0/1 entries on the fast path: shallow wrappers, inner offsets resolved as
Kafka resolves them (kafka-facts §3.4), and the same errors as the schema."""

from __future__ import annotations

import struct

import pytest
import test_scan_support as support
from lethe_formats.compression import compress
from lethe_formats.errors import ChecksumError, InvalidRecordError
from lethe_formats.model import Compression, LegacyMessage, TimestampType
from lethe_formats.records import scan
from lethe_formats.records.builder import RecordSpec, build_legacy_message_set
from lethe_formats.records.legacy import decode_message, encode_message
from lethe_formats.records.log import decode_log

impl = support.impl
SPECS = [RecordSpec(b"k%d" % i, b"value-%d" % i, timestamp=1_000 + i) for i in range(3)]


def wrapper(magic: int, base_offset: int, codec: Compression = Compression.GZIP) -> bytes:
    return build_legacy_message_set(SPECS, magic=magic, base_offset=base_offset, compression=codec)


@pytest.mark.parametrize("magic", [0, 1])
def test_shallow_wrapper_keeps_the_compressed_value_and_no_inner(magic: int, impl: str) -> None:
    data = wrapper(magic, 40)
    (entry,) = scan.LogScanner(data)
    header = entry.header
    assert isinstance(header, LegacyMessage)
    assert (entry.position, entry.crc_valid, header.inner) == (0, True, ())
    assert header.offset == 42  # the wrapper carries the last inner offset
    assert header.key is None
    assert header.value is not None
    assert header.value[:2] == b"\x1f\x8b"  # still gzip
    assert header.timestamp == (None if magic == 0 else 1_002)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [Compression.GZIP, Compression.SNAPPY, Compression.LZ4])
def test_inner_messages_get_absolute_offsets(magic: int, codec: Compression, impl: str) -> None:
    data = wrapper(magic, 40, codec)
    (entry,) = scan.LogScanner(data)
    inner = scan.decode_legacy_inner(data, entry)
    assert [m.offset for m in inner] == [40, 41, 42]
    assert [m.key for m in inner] == [b"k0", b"k1", b"k2"]
    assert inner == decode_message(data).inner


def test_v1_wrapper_offset_zero_means_base_zero(impl: str) -> None:
    data = bytearray(wrapper(1, 40))
    struct.pack_into(">q", data, 0, 0)  # the offset is outside the CRC
    (entry,) = scan.LogScanner(bytes(data))
    assert entry.crc_valid is True
    assert [m.offset for m in scan.decode_legacy_inner(bytes(data), entry)] == [0, 1, 2]


def test_v1_wrapper_offset_below_last_inner_offset_is_invalid(impl: str) -> None:
    data = bytearray(wrapper(1, 0))
    struct.pack_into(">q", data, 0, 1)  # last relative inner offset is 2
    (entry,) = scan.LogScanner(bytes(data))
    with pytest.raises(InvalidRecordError) as caught:
        scan.decode_legacy_inner(bytes(data), entry)
    with pytest.raises(InvalidRecordError) as schema:
        decode_message(bytes(data))
    assert caught.value.position == schema.value.position


def test_uncompressed_legacy_entry_is_its_own_only_message(impl: str) -> None:
    data = build_legacy_message_set(SPECS, magic=1, base_offset=7)
    entries = list(scan.LogScanner(data))
    assert [e.header.offset for e in entries] == [7, 8, 9]  # type: ignore[union-attr]
    for entry in entries:
        assert scan.decode_legacy_inner(data, entry) == (entry.header,)
    assert list(scan.read_log(data)) == decode_log(data)


def test_log_append_time_wrapper_round_trips_like_the_schema(impl: str) -> None:
    data = build_legacy_message_set(
        SPECS,
        magic=1,
        base_offset=5,
        compression=Compression.LZ4,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=9_999,
    )
    (message,) = scan.read_log(data)
    assert isinstance(message, LegacyMessage)
    assert message.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert message == decode_message(data)


def test_flipped_key_length_in_legacy_message_is_reported_as_a_crc_error(impl: str) -> None:
    data = bytearray(build_legacy_message_set(SPECS[:1], magic=1, base_offset=0))
    data[26] ^= 0x40  # keyLength: the message no longer parses
    scanner = scan.LogScanner(bytes(data))
    assert list(scanner) == []
    assert isinstance(scanner.stop_error, ChecksumError)
    assert scanner.stop_error.position == 12
    with pytest.raises(ChecksumError):
        decode_log(bytes(data))


def test_flipped_value_byte_marks_the_legacy_crc_invalid(impl: str) -> None:
    data = bytearray(build_legacy_message_set(SPECS, magic=0, base_offset=0))
    data[-1] ^= 0x01
    assert [e.crc_valid for e in scan.LogScanner(bytes(data))] == [True, True, False]
    with pytest.raises(ChecksumError) as caught:
        list(scan.read_log(bytes(data)))
    assert caught.value.position == 2 * (len(data) // 3) + 12


def test_inner_crc_is_checked_only_when_asked(impl: str) -> None:
    plain = [LegacyMessage(i, 0, 0, 1, 0, 1_000 + i, b"k", b"v") for i in range(2)]
    inner = bytearray(b"".join(encode_message(m) for m in plain))
    inner[12] ^= 0xFF  # first inner message's stored CRC
    value = compress(Compression.GZIP, bytes(inner), magic=1)
    data = encode_message(LegacyMessage(1, 0, 0, 1, Compression.GZIP, 1_001, None, value))
    (entry,) = scan.LogScanner(data)
    assert entry.crc_valid is True  # the wrapper CRC covers the compressed bytes only
    assert [m.offset for m in scan.decode_legacy_inner(data, entry)] == [0, 1]
    with pytest.raises(ChecksumError) as caught:
        scan.decode_legacy_inner(data, entry, verify_crc=True)
    with pytest.raises(ChecksumError) as schema:
        decode_log(data)
    assert caught.value.position == schema.value.position
    with pytest.raises(ChecksumError):
        list(scan.read_log(data))
    assert list(scan.read_log(data, verify_crc=False)) == decode_log(data, verify_crc=False)
