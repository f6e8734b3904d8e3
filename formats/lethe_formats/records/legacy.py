"""Magic 0 and 1 messages (LegacyRecord): one schema factory, decode, encode.

Byte layout of a log entry (offsets from its start)::

    offset size field              v0  v1
    0      8    offset int64       yes yes   absolute; a wrapper's = its last inner offset
    8      4    messageSize int32  yes yes   bytes after this field (>= 14)
    12     4    crc uint32         yes yes   IEEE CRC-32 over [16, end)
    16     1    magic int8         0   1
    17     1    attributes int8    yes yes   bits 0-2 codec; bit 3 LogAppendTime (v1)
    18     8    timestamp int64    -   yes
    18/26  4    keyLength int32    yes yes   -1 = null
           ...  key
           4    valueLength int32  yes yes   -1 = null
           ...  value              a compressed inner message set for a wrapper

Theory of operation
-------------------
:func:`message_schema` builds the schema for one magic; the two versions differ
only in the timestamp field, so there is one definition, not a copy per
version. The magic byte sits at entry offset 16 in both, which is how
:func:`decode_message` (and ``records.log``) pick the schema.

A compressed *wrapper* message holds, in its value, a compressed message set
of uncompressed inner entries with the same magic. They are decoded
recursively with the same schema and checked as Kafka's
``DeepRecordsIterator`` checks them (same magic, not compressed, at least
one, a non-null wrapper value). Inner offsets are stored absolute in the
model: v0 inner offsets already are; v1 inner offsets are relative, and
absolute = wrapper offset - last inner relative offset + inner offset, except
that a wrapper offset of 0 (written by some librdkafka versions) means base 0.
:func:`encode_message` re-relativises v1 inner offsets (first inner = 0) and
recompresses. Unlike Kafka, which stops silently at a partial trailing inner
entry, we report it: a tool should not drop bytes without saying so.
"""

from __future__ import annotations

import dataclasses
import struct
from functools import cache
from typing import Any

from construct import Construct, ConstructError, If, Struct

from lethe_formats.compression import compress, decompress, resolve_codec
from lethe_formats.crc import crc32
from lethe_formats.errors import (
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
)
from lethe_formats.model import LOG_OVERHEAD, Compression, LegacyMessage
from lethe_formats.primitives import (
    Checksummed,
    Ensure,
    Int8,
    Int32,
    Int32Bytes,
    Int64,
    SizePrefixed,
    UInt32,
    Window,
    relocate,
)
from lethe_formats.records.attributes import LegacyAttributes

__all__ = ["RECORD_OVERHEAD_V0", "decode_message", "encode_message", "message_schema"]

#: crc + magic + attributes + key length + value length: the smallest v0 message.
RECORD_OVERHEAD_V0 = 14
Buffer = bytes | bytearray | memoryview


def _expect_magic(magic: int) -> Any:
    def check(context: Any) -> str | None:
        if context.magic != magic:
            return f"magic {context.magic} where a v{magic} message was expected"
        return None

    return check


def _check_codec(magic: int) -> Any:
    def check(context: Any) -> str | None:
        try:
            resolve_codec(LegacyAttributes.part(context.attributes, "compression"), magic)
        except UnsupportedCompressionError as error:
            return error.message
        return None

    return check


@cache
def message_schema(magic: int) -> Construct[Any, Any]:
    """The log entry schema of a magic-``magic`` (0 or 1) message."""
    if magic not in (0, 1):
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic}")
    body = Struct(
        "magic" / Int8,
        Ensure(_expect_magic(magic), UnsupportedMagicError, "magic", back=1),
        "attributes" / LegacyAttributes,
        Ensure(_check_codec(magic), UnsupportedCompressionError, "attributes", back=1),
        "timestamp" / If(magic >= 1, Int64),
        "key" / Int32Bytes,
        "value" / Int32Bytes,
    )
    return Struct(
        "offset" / Int64,
        "_message"
        / SizePrefixed(
            Int32,
            Checksummed(
                UInt32, crc32, body, leftover=CorruptRecordError, leftover_field="messageSize"
            ),
            field="message_size",
            minimum=RECORD_OVERHEAD_V0,
            overrun=TruncatedError,
            leftover=CorruptRecordError,
        ),
    )


def _window(data: Buffer, position: int) -> Window:
    end = len(data)
    if position + LOG_OVERHEAD <= end:
        (size,) = struct.unpack_from(">i", data, position + 8)
        if size >= 0:
            end = min(end, position + LOG_OVERHEAD + size)
    return Window(bytes(data[position:end]), position)


def decode_message(
    data: Buffer, position: int = 0, *, file: str | None = None, verify_crc: bool = True
) -> LegacyMessage:
    """Decode the v0/v1 log entry at byte ``position`` of ``data`` (with inner messages)."""
    try:
        return _decode(data, position, verify_crc)
    except FormatError as error:
        raise error.at(file=file) from None


def _decode(data: Buffer, position: int, verify_crc: bool, deep: bool = True) -> LegacyMessage:
    if position + 17 > len(data):
        raise TruncatedError(
            "data ends before the magic byte", position=position, field="message_size"
        )
    magic = data[position + 16]
    if magic not in (0, 1):
        raise UnsupportedMagicError(
            f"magic {magic} where a v0/v1 message was expected",
            position=position + 16,
            field="magic",
        )
    window = _window(data, position)
    try:
        parsed = message_schema(magic).parse_stream(window, verify_crc=verify_crc)
    except ConstructError as error:
        raise CorruptRecordError(
            f"undecodable message: {error}", position=position, field="message"
        ) from None
    end = window.tell()
    body = parsed._message
    message = LegacyMessage(
        offset=parsed.offset,
        message_size=end - position - LOG_OVERHEAD,
        crc=body.crc,
        magic=body.magic,
        attributes=int(body.attributes.raw),
        timestamp=body.timestamp,
        key=body.key,
        value=body.value,
    )
    if message.compression is Compression.NONE or not deep:
        return message
    value_at = end - (len(message.value) if message.value is not None else 0)
    return dataclasses.replace(message, inner=_inner(message, value_at, verify_crc))


def _inner(wrapper: LegacyMessage, value_at: int, verify_crc: bool) -> tuple[LegacyMessage, ...]:
    if wrapper.value is None:
        raise InvalidRecordError(
            f"Found invalid compressed record set with null value (magic = {wrapper.magic})",
            position=value_at - 4,
            field="value",
        )
    try:
        plain = decompress(wrapper.compression, wrapper.value, magic=wrapper.magic)
    except FormatError as error:
        raise error.at(offset=value_at) from None
    entries = []
    pos = 0
    try:
        while pos < len(plain):
            entry = _decode(plain, pos, verify_crc, deep=False)
            _check_inner(wrapper, entry, pos)
            entries.append(entry)
            pos += entry.size_in_bytes
    except FormatError as error:
        raise relocate(
            error, value_at, f"inner message at byte {error.position} of the decompressed value"
        ) from None
    if not entries:
        raise InvalidRecordError(
            "Found invalid compressed record set with no inner records",
            position=value_at,
            field="value",
        )
    return _absolute(wrapper, tuple(entries), value_at)


def _check_inner(wrapper: LegacyMessage, entry: LegacyMessage, pos: int) -> None:
    if entry.magic != wrapper.magic:
        raise InvalidRecordError(
            f"Compressed message magic {entry.magic} does not match wrapper magic {wrapper.magic}",
            position=pos + 16,
            field="magic",
        )
    if entry.compression is not Compression.NONE:
        raise InvalidRecordError(
            "Inner messages must not be compressed", position=pos + 17, field="attributes"
        )


def _absolute(
    wrapper: LegacyMessage, entries: tuple[LegacyMessage, ...], value_at: int
) -> tuple[LegacyMessage, ...]:
    """v1 inner offsets made absolute; v0 ones already are."""
    if wrapper.magic == 0:
        return entries
    last = entries[-1].offset
    if wrapper.offset == 0:
        base = 0
    elif wrapper.offset < last:
        raise InvalidRecordError(
            "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
            f"'{wrapper.offset}' is less than the last inner message offset '{last}' "
            "and it is not zero.",
            position=value_at,
            field="offset",
        )
    else:
        base = wrapper.offset - last
    return tuple(dataclasses.replace(e, offset=base + e.offset) for e in entries)


def encode_message(message: LegacyMessage, *, snappy_framing: str = "xerial") -> bytes:
    """Bytes of a v0/v1 log entry: size and CRC recomputed; for a wrapper the
    value is rebuilt from ``inner`` (v1 offsets relative again, first = 0)."""
    value = message.value
    if message.inner:
        first = message.inner[0].offset
        inner = b"".join(
            encode_message(
                e if message.magic == 0 else dataclasses.replace(e, offset=e.offset - first)
            )
            for e in message.inner
        )
        value = compress(
            message.compression, inner, magic=message.magic, snappy_framing=snappy_framing
        )
    obj = {
        "offset": message.offset,
        "_message": {
            "magic": message.magic,
            "attributes": message.attributes,
            "timestamp": message.timestamp,
            "key": message.key,
            "value": value,
        },
    }
    return bytes(message_schema(message.magic).build(obj))
