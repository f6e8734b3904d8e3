"""Pure-Python decoder of a magic-2 records section (the fallback of ``_cscan``).

Theory of operation
-------------------
``decode_section(buf, start, end, count)`` decodes ``count`` records laid out
back to back in ``buf[start:end]`` (an uncompressed batch's records section, or
the output of decompression) into :class:`~lethe_formats.model.Record` values.
It is a line-by-line twin of ``_cscan.c``: the same checks in the same order,
the same messages, the same field names, so the two paths raise identical
errors. Positions in raised errors are RELATIVE to ``start``; ``scan.py``
re-anchors them (absolute for an uncompressed batch, the records section
position for a compressed one).

One record (``DefaultRecord.java``)::

    length          varint   body bytes after this field
    attributes      int8     unused by Kafka (0)
    timestampDelta  varlong
    offsetDelta     varint
    keyLength       varint   -1 = null
    key             bytes
    valueLength     varint   -1 = null
    value           bytes
    headersCount    varint   must be >= 0
    headers         headerKeyLength varint (>= 0), key, headerValueLength
                    varint (-1 = null), value

Every read is bounded: fields by the end of the record body (``length``),
the body by the end of the section. Varints stop at 5 bytes (varlongs at 10)
exactly as Kafka does, so corrupt input can neither loop nor allocate a
claimed length. Kafka treats any negative key/value length as null; we accept
only -1 because a value must re-encode to the bytes it came from.
"""

from __future__ import annotations

import struct
from dataclasses import replace

from lethe_formats.errors import (
    CorruptRecordError,
    InvalidRecordError,
    TruncatedError,
    VarintError,
)
from lethe_formats.model import Header, LegacyMessage, Record

__all__ = ["decode_section", "parse_legacy", "read_inner"]

Readable = bytes | bytearray | memoryview


def _varint(  # noqa: PLR0917 - positional on purpose: the hot path
    buf: Readable,
    pos: int,
    limit: int,
    max_bytes: int,
    bits: int,
    where: tuple[int, str],
    what: str,
) -> tuple[int, int]:
    """Zig-zag varint at ``pos`` that must end before ``limit``; (value, next).

    ``where`` is (record index, field suffix): the field name is only built
    when an error is raised, which keeps the happy path cheap.
    """
    byte = buf[pos] if pos < limit else 0x100
    if byte < 0x80:  # one-byte fast path: most lengths and deltas
        return (byte >> 1) ^ -(byte & 1), pos + 1
    result = 0
    shift = 0
    for i in range(max_bytes):
        if pos + i >= limit:
            field = _name(where)
            raise InvalidRecordError(
                f"{field} extends beyond the end of the {what}", position=pos, field=field
            )
        byte = buf[pos + i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if result >> bits:
                field = _name(where)
                raise VarintError(f"{field} does not fit in {bits} bits", position=pos, field=field)
            return (result >> 1) ^ -(result & 1), pos + i + 1
        shift += 7
    field = _name(where)
    raise VarintError(f"{field} is longer than {max_bytes} bytes", position=pos, field=field)


def _name(where: tuple[int, str]) -> str:
    return f"records[{where[0]}]{where[1]}"


def _bytes(
    buf: Readable, pos: int, limit: int, where: tuple[int, str], allow_null: bool
) -> tuple[bytes | None, int]:
    """A length-prefixed byte string inside a record body ending at ``limit``."""
    index, suffix = where
    start = pos
    size, pos = _varint(buf, pos, limit, 5, 32, (index, suffix + "Length"), "record")
    if size < 0:
        if size == -1 and allow_null:
            return None, pos
        field = _name((index, suffix + "Length"))
        raise InvalidRecordError(f"invalid {field} {size}", position=start, field=field)
    if size > limit - pos:
        field = _name(where)
        raise InvalidRecordError(
            f"{field} of {size} bytes extends beyond the end of the record",
            position=pos,
            field=field,
        )
    return bytes(buf[pos : pos + size]), pos + size


def _headers(buf: Readable, pos: int, limit: int, index: int) -> tuple[tuple[Header, ...], int]:
    where = (index, ".headersCount")
    count, after = _varint(buf, pos, limit, 5, 32, where, "record")
    if count == 0:
        return (), after
    if count < 0:
        field = _name(where)
        raise InvalidRecordError(f"invalid {field} {count}", position=pos, field=field)
    pos = after
    headers = []
    for j in range(count):
        key, pos = _bytes(buf, pos, limit, (index, f".headers[{j}].key"), False)
        value, pos = _bytes(buf, pos, limit, (index, f".headers[{j}].value"), True)
        headers.append(Header(key, value))  # type: ignore[arg-type]
    return tuple(headers), pos


def _record(buf: Readable, pos: int, end: int, index: int) -> tuple[Record, int]:
    where = (index, ".length")
    length, body = _varint(buf, pos, end, 5, 32, where, "records section")
    if length < 0 or length > end - body:
        field = _name(where)
        problem = "is negative" if length < 0 else "extends beyond the end of the records section"
        raise InvalidRecordError(f"{field} {length} {problem}", position=pos, field=field)
    limit = body + length
    if body >= limit:
        field = _name((index, ".attributes"))
        raise InvalidRecordError(
            f"{field} extends beyond the end of the record", position=body, field=field
        )
    attributes = buf[body]
    delta_ts, p = _varint(buf, body + 1, limit, 10, 64, (index, ".timestampDelta"), "record")
    delta_off, p = _varint(buf, p, limit, 5, 32, (index, ".offsetDelta"), "record")
    key, p = _bytes(buf, p, limit, (index, ".key"), True)
    value, p = _bytes(buf, p, limit, (index, ".value"), True)
    headers, p = _headers(buf, p, limit, index)
    if p != limit:
        field = _name(where)
        raise InvalidRecordError(
            f"{field} {length} but the fields end {limit - p} bytes earlier",
            position=pos,
            field=field,
        )
    return Record(attributes, delta_ts, delta_off, key, value, headers), limit


def decode_section(buf: Readable, start: int, end: int, count: int) -> tuple[Record, ...]:
    """Decode ``count`` records in ``buf[start:end]``; error positions relative to ``start``."""
    records = []
    with memoryview(buf)[start:end] as view:
        size = end - start
        pos = 0
        for index in range(count):
            record, pos = _record(view, pos, size, index)
            records.append(record)
        if pos != size:
            raise InvalidRecordError(
                f"{size - pos} bytes remain after the last of {count} records",
                position=pos,
                field="records",
            )
    return tuple(records)


# --- magic 0/1 messages -------------------------------------------------------
#
#   0       8      12    16     17     18          (v1: 26)
#   offset  size   crc   magic  attr   [timestamp] keyLength key valueLength value
#
# ``size`` counts from ``crc`` to the end of the value. Both lengths are int32,
# -1 for null. Kafka reads any negative length as null; we accept only -1 so a
# message re-encodes to its own bytes.

_LEGACY_V0 = struct.Struct(">qiIbB")
_LEGACY_V1 = struct.Struct(">qiIbBq")
_INT32 = struct.Struct(">i")
_LEGACY_MIN_SIZE = {0: 14, 1: 22}


def _legacy_bytes(view: Readable, pos: int, end: int, field: str) -> tuple[bytes | None, int]:
    if end - pos < 4:
        raise CorruptRecordError(
            f"{field}Length extends beyond the end of the message",
            position=pos,
            field=field + "Length",
        )
    (size,) = _INT32.unpack_from(view, pos)
    if size == -1:
        return None, pos + 4
    if size < 0:
        raise CorruptRecordError(
            f"invalid {field}Length {size}", position=pos, field=field + "Length"
        )
    if size > end - pos - 4:
        raise CorruptRecordError(
            f"{field} of {size} bytes extends beyond the end of the message",
            position=pos + 4,
            field=field,
        )
    return bytes(view[pos + 4 : pos + 4 + size]), pos + 4 + size


def parse_legacy(view: Readable, pos: int, size: int) -> LegacyMessage:
    """The magic 0/1 entry of ``size`` bytes (offset and size fields included) at ``pos``.

    The caller has checked that the whole entry is present and that
    ``size - 12`` is at least the magic's minimum message size.
    """
    end = pos + size
    magic = view[pos + 16]
    if magic == 1:
        offset, message_size, crc, magic, attributes, timestamp = _LEGACY_V1.unpack_from(view, pos)
        p = pos + 26
    else:
        offset, message_size, crc, magic, attributes = _LEGACY_V0.unpack_from(view, pos)
        timestamp, p = None, pos + 18
    key, p = _legacy_bytes(view, p, end, "key")
    value, p = _legacy_bytes(view, p, end, "value")
    if p != end:
        raise CorruptRecordError(
            f"messageSize {message_size} but the value ends {end - p} bytes earlier",
            position=pos + 8,
            field="messageSize",
        )
    return LegacyMessage(offset, message_size, crc, magic, attributes, timestamp, key, value)


def read_inner(raw: Readable, wrapper: LegacyMessage) -> tuple[LegacyMessage, ...]:
    """Inner messages of a decompressed wrapper value, offsets made absolute.

    v0 inner offsets are absolute already; v1 inner offsets are relative and
    absolute = wrapper offset - last inner offset + inner offset (a wrapper
    offset of 0, as librdkafka may write, means base 0). Positions in errors
    are relative to ``raw``.
    """
    inner = []
    pos = 0
    end = len(raw)
    while pos < end:
        if end - pos < 17:
            raise TruncatedError("inner message is torn", position=pos, field="inner")
        (length,) = _INT32.unpack_from(raw, pos + 8)
        magic = raw[pos + 16]
        if magic != wrapper.magic:
            raise InvalidRecordError(
                f"inner message magic {magic} does not match wrapper magic {wrapper.magic}",
                position=pos + 16,
                field="inner.magic",
            )
        if length < _LEGACY_MIN_SIZE[magic]:
            raise CorruptRecordError(
                f"inner messageSize {length} is too small",
                position=pos + 8,
                field="inner.messageSize",
            )
        if length > end - pos - 12:
            raise TruncatedError("inner message is torn", position=pos, field="inner")
        message = parse_legacy(raw, pos, length + 12)
        if message.attributes & 0x07:
            raise InvalidRecordError(
                "inner message is compressed", position=pos + 17, field="inner.attributes"
            )
        inner.append(message)
        pos += length + 12
    if not inner:
        raise InvalidRecordError("compressed wrapper holds no messages", position=0, field="inner")
    if wrapper.magic == 0:
        return tuple(inner)
    base = 0 if wrapper.offset == 0 else wrapper.offset - inner[-1].offset
    return tuple(replace(m, offset=base + m.offset) for m in inner)
