"""Magic 0 and 1 messages through the Kaitai segment spec (no golden file holds them).

Kafka 4.0 writes only magic 2, so these entries are built here from the layout
in kafka-facts section 3.4, and the expected values are the rules stated
there: v0 has no timestamp, a compressed wrapper's value holds inner entries,
v0 inner offsets are absolute, v1 inner offsets are relative to the wrapper
(absolute = wrapperOffset - lastInnerRelative + inner), and a wrapper offset
of 0 (librdkafka) means base 0. The Construct schemas and the fast path must
agree on every case.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import replace

import pytest
from conftest_ksy import kaitai_specs, legacy_entry
from lethe_formats.errors import FormatError, InvalidRecordError
from lethe_formats.ksy import KaitaiSpecs
from lethe_formats.ksy.adapter import decode_log
from lethe_formats.model import LegacyMessage, TimestampType
from lethe_formats.records.log import decode_log as construct_decode_log
from lethe_formats.records.scan import read_log

__all__ = ["kaitai_specs"]
pytestmark = pytest.mark.kaitai

TS = 1_700_000_000_000


def _expected(entry: bytes, *, inner: tuple[LegacyMessage, ...] = ()) -> LegacyMessage:
    """The message an entry encodes, read off the bytes with the documented layout."""
    offset, size, crc, magic, attributes = struct.unpack_from(">qiIbB", entry)
    pos = 18
    timestamp = None
    if magic == 1:
        (timestamp,) = struct.unpack_from(">q", entry, pos)
        pos += 8
    fields: list[bytes | None] = []
    for _ in range(2):
        (length,) = struct.unpack_from(">i", entry, pos)
        pos += 4
        fields.append(None if length < 0 else entry[pos : pos + length])
        pos += max(length, 0)
    key, value = fields
    return LegacyMessage(offset, size, crc, magic, attributes, timestamp, key, value, inner)


def _agree(specs: KaitaiSpecs, data: bytes) -> list[object]:
    kaitai = decode_log(specs, data)
    assert construct_decode_log(data) == kaitai
    assert list(read_log(data)) == kaitai
    return list(kaitai)


def test_v0_and_v1_messages_decode_with_their_layouts(kaitai_specs: KaitaiSpecs) -> None:
    entries = [
        legacy_entry(0, b"k0", b"v0", magic=0),
        legacy_entry(1, None, b"no key", magic=0),
        legacy_entry(2, b"k2", None, magic=1, timestamp=TS),
        legacy_entry(3, b"", b"", magic=1, attributes=0x08, timestamp=TS + 5),
    ]
    decoded = _agree(kaitai_specs, b"".join(entries))
    assert decoded == [_expected(e) for e in entries]
    assert [m.timestamp for m in decoded] == [None, None, TS, TS + 5]  # type: ignore[attr-defined]
    assert [m.timestamp_type for m in decoded] == [  # type: ignore[attr-defined]
        TimestampType.NO_TIMESTAMP_TYPE,
        TimestampType.NO_TIMESTAMP_TYPE,
        TimestampType.CREATE_TIME,
        TimestampType.LOG_APPEND_TIME,
    ]


def _wrapper(offset: int, inner: list[bytes], *, magic: int) -> bytes:
    value = gzip.compress(b"".join(inner), mtime=0)
    return legacy_entry(offset, None, value, magic=magic, attributes=0x01, timestamp=TS + 2)


def test_v1_wrapper_inner_offsets_are_relative_to_the_wrapper(kaitai_specs: KaitaiSpecs) -> None:
    inner = [legacy_entry(i, f"k{i}".encode(), b"x", timestamp=TS + i) for i in range(3)]
    wrapper = _wrapper(12, inner, magic=1)
    (decoded,) = _agree(kaitai_specs, wrapper)
    # The CRC does not cover the offset, so only the offsets change: 12 - 2 + i.
    absolute = tuple(replace(_expected(e), offset=10 + i) for i, e in enumerate(inner))
    assert decoded == _expected(wrapper, inner=absolute)


def test_v1_wrapper_at_offset_zero_uses_base_zero(kaitai_specs: KaitaiSpecs) -> None:
    inner = [legacy_entry(i, b"k", b"v", timestamp=TS) for i in range(2)]
    (decoded,) = _agree(kaitai_specs, _wrapper(0, inner, magic=1))
    assert [m.offset for m in decoded.inner] == [0, 1]  # type: ignore[attr-defined]


def test_v0_wrapper_inner_offsets_are_absolute(kaitai_specs: KaitaiSpecs) -> None:
    inner = [legacy_entry(40 + i, b"k", b"v", magic=0) for i in range(3)]
    (decoded,) = _agree(kaitai_specs, _wrapper(42, inner, magic=0))
    assert decoded.inner == tuple(_expected(e) for e in inner)  # type: ignore[attr-defined]


def test_wrapper_with_a_compressed_inner_message_is_rejected(kaitai_specs: KaitaiSpecs) -> None:
    nested = _wrapper(0, [legacy_entry(0, b"k", b"v")], magic=1)
    data = _wrapper(1, [nested], magic=1)
    with pytest.raises(InvalidRecordError) as caught:
        decode_log(kaitai_specs, data)
    # Inside decompressed data the error points at the wrapper's value and
    # names the byte inside the decompressed bytes: the inner attributes.
    assert caught.value.position == len(data) - len(gzip.compress(nested, mtime=0))
    assert caught.value.field == "attributes (byte 17 of the decompressed wrapper value)"
    for other in (construct_decode_log, lambda d: list(read_log(d))):
        with pytest.raises(InvalidRecordError):
            other(data)


def test_legacy_crc_is_crc32_over_magic_to_end(kaitai_specs: KaitaiSpecs) -> None:
    entry = bytearray(legacy_entry(7, b"key", b"value"))
    assert struct.unpack_from(">I", entry, 12)[0] == zlib.crc32(bytes(entry[16:]))
    entry[-1] ^= 0x01
    with pytest.raises(FormatError) as caught:
        decode_log(kaitai_specs, bytes(entry))
    assert type(caught.value).__name__ == "ChecksumError"
    assert (caught.value.position, caught.value.field) == (12, "crc")
    assert decode_log(kaitai_specs, bytes(entry), verify_crc=False)[0].value == b"valud"  # type: ignore[union-attr]
