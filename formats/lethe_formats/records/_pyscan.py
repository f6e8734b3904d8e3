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
claimed length. Like Kafka (and the Construct schema in ``record.py``), any
negative key/value length reads as null; a negative header key length or
headers count is an InvalidRecordError.

Error classes follow the Construct schema: a negative record length is a
CorruptRecordError, an over-long varint a VarintError, and every other fault
(including a section shorter than its record count) Kafka's
InvalidRecordException, InvalidRecordError.
"""

from __future__ import annotations

import struct
from dataclasses import replace

from lethe_formats.crc import crc32
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
from lethe_formats.model import Header, LegacyMessage, Record

__all__ = [
    "absolute_offsets",
    "decode_section",
    "legacy_entry",
    "parse_legacy",
    "read_inner",
]

Readable = bytes | bytearray | memoryview
_SECTION = "records section"


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
        if allow_null:
            return None, pos
        field = _name((index, suffix + "Length"))
        raise InvalidRecordError(f"invalid {field} {size}", position=start, field=field)
    if size > limit - pos:
        field = _name(where)
        raise InvalidRecordError(
            f"{field} of {size} bytes extends beyond the end of the record",
            position=start,
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
    length, body = _varint(buf, pos, end, 5, 32, where, _SECTION)
    if length < 0:
        field = _name(where)
        raise CorruptRecordError(f"{field} {length} is negative", position=pos, field=field)
    if length > end - body:
        field = _name(where)
        raise InvalidRecordError(
            f"{field} {length} extends beyond the end of the {_SECTION}", position=pos, field=field
        )
    limit = body + length
    if body >= limit:
        field = _name((index, ".attributes"))
        raise InvalidRecordError(
            f"{field} extends beyond the end of the record", position=body, field=field
        )
    attributes = buf[body]
    if attributes >= 0x80:  # int8, signed as Kafka and the schema read it
        attributes -= 0x100
    delta_ts, p = _varint(buf, body + 1, limit, 10, 64, (index, ".timestampDelta"), "record")
    delta_off, p = _varint(buf, p, limit, 5, 32, (index, ".offsetDelta"), "record")
    key, p = _bytes(buf, p, limit, (index, ".key"), True)
    value, p = _bytes(buf, p, limit, (index, ".value"), True)
    headers, p = _headers(buf, p, limit, index)
    if p != limit:
        field = _name(where)
        raise InvalidRecordError(
            f"{field} {length} but the fields end {limit - p} bytes earlier",
            position=p,
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
# ``size`` counts from ``crc`` to the end of the value. Both lengths are int32;
# Kafka writes -1 for null and reads any negative length as null, as we do.
# Error classes and positions follow ``records.legacy`` (the Construct schema).

_LEGACY_V0 = struct.Struct(">qiIbb")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")
LEGACY_MIN_SIZE = 14  # RECORD_OVERHEAD_V0, the only floor Kafka checks for both magics


def _legacy_int(view: Readable, pos: int, end: int, fmt: struct.Struct, field: str) -> int:
    if end - pos < fmt.size:
        raise TruncatedError(f"data ends inside {field}", position=pos, field=field)
    value: int = fmt.unpack_from(view, pos)[0]
    return value


def _legacy_bytes(view: Readable, pos: int, end: int, field: str) -> tuple[bytes | None, int]:
    size = _legacy_int(view, pos, end, _INT32, field + "Length")
    if size < 0:
        return None, pos + 4
    if size > end - pos - 4:
        raise TruncatedError(
            f"{field} claims {size} bytes, only {end - pos - 4} left", position=pos, field=field
        )
    return bytes(view[pos + 4 : pos + 4 + size]), pos + 4 + size


def parse_legacy(view: Readable, pos: int, size: int) -> LegacyMessage:
    """The magic 0/1 entry of ``size`` bytes (offset and size fields included) at ``pos``.

    The caller has checked that the whole entry is present, that its magic
    is 0 or 1 and that ``size - 12`` is at least ``LEGACY_MIN_SIZE``.
    """
    end = pos + size
    offset, message_size, crc, magic, attributes = _LEGACY_V0.unpack_from(view, pos)
    timestamp = _legacy_int(view, pos + 18, end, _INT64, "timestamp") if magic == 1 else None
    key, p = _legacy_bytes(view, pos + 26 if magic == 1 else pos + 18, end, "key")
    value, p = _legacy_bytes(view, p, end, "value")
    if p != end:
        raise CorruptRecordError(
            f"{end - p} bytes left unread inside messageSize {message_size}",
            position=p,
            field="messageSize",
        )
    return LegacyMessage(offset, message_size, crc, magic, attributes, timestamp, key, value)


def legacy_entry(
    view: Readable, pos: int, size: int, verify_crc: bool
) -> tuple[LegacyMessage, bool | None]:
    """(message, CRC valid or None) of a top-level legacy entry.

    When the message cannot be parsed and its CRC is wrong, the CRC error is
    raised instead: the schema checks the CRC first, and a flipped byte is
    the likelier story than a writer that produced a malformed message.
    """
    try:
        message = parse_legacy(view, pos, size)
    except FormatError:
        if verify_crc:
            stored = _UINT32.unpack_from(view, pos + 12)[0]
            computed = crc32(view[pos + 16 : pos + size])
            if computed != stored:
                raise ChecksumError(stored, computed, position=pos + 12, field="crc") from None
        raise
    if not verify_crc:
        return message, None
    return message, crc32(view[pos + 16 : pos + size]) == message.crc


def _inner_entry(raw: bytes, pos: int, wrapper_magic: int, verify_crc: bool) -> LegacyMessage:
    """One inner entry at ``pos`` of the decompressed value, checked like Kafka's
    DeepRecordsIterator (same magic as the wrapper, not compressed)."""
    left = len(raw) - pos
    if left < 17:
        raise TruncatedError("data ends before the magic byte", position=pos, field="messageSize")
    magic = raw[pos + 16]
    if magic not in (0, 1):
        raise UnsupportedMagicError(
            f"magic {magic} where a v0/v1 message was expected", position=pos + 16, field="magic"
        )
    (length,) = _INT32.unpack_from(raw, pos + 8)
    if length < LEGACY_MIN_SIZE:
        raise CorruptRecordError(
            f"messageSize {length} is smaller than the minimum {LEGACY_MIN_SIZE}",
            position=pos + 8,
            field="messageSize",
        )
    if length > left - 12:
        raise TruncatedError(
            f"messageSize claims {length} bytes, only {left - 12} left",
            position=pos + 8,
            field="messageSize",
        )
    (stored,) = _INT32.unpack_from(raw, pos + 12)
    stored &= 0xFFFFFFFF
    if verify_crc and (computed := crc32(raw[pos + 16 : pos + 12 + length])) != stored:
        raise ChecksumError(stored, computed, position=pos + 12, field="crc")
    codec = raw[pos + 17] & 0x07
    if codec > 4 or (codec == 4 and magic < 2):
        raise UnsupportedCompressionError(
            f"compression codec {codec} is not allowed for magic {magic}",
            position=pos + 17,
            field="attributes",
        )
    message = parse_legacy(raw, pos, length + 12)
    if magic != wrapper_magic:
        raise InvalidRecordError(
            f"Compressed message magic {magic} does not match wrapper magic {wrapper_magic}",
            position=pos + 16,
            field="magic",
        )
    if codec:
        raise InvalidRecordError(
            "Inner messages must not be compressed", position=pos + 17, field="attributes"
        )
    return message


def read_inner(raw: bytes, wrapper: LegacyMessage, verify_crc: bool) -> list[LegacyMessage]:
    """Inner messages of a decompressed wrapper value, offsets as stored.

    Positions in errors are relative to ``raw``. Unlike Kafka, which stops
    silently at a partial trailing inner entry, a torn inner entry is an error.
    """
    inner = []
    pos = 0
    while pos < len(raw):
        message = _inner_entry(raw, pos, wrapper.magic, verify_crc)
        inner.append(message)
        pos += message.size_in_bytes
    return inner


def absolute_offsets(
    wrapper: LegacyMessage, inner: list[LegacyMessage], value_at: int
) -> tuple[LegacyMessage, ...]:
    """Inner messages with absolute offsets (``value_at``: where the wrapper value is).

    v0 inner offsets are absolute already. v1: absolute = wrapper offset -
    last inner offset + inner offset; a wrapper offset of 0 means base 0.
    """
    if not inner:
        raise InvalidRecordError(
            "Found invalid compressed record set with no inner records",
            position=value_at,
            field="value",
        )
    if wrapper.magic == 0:
        return tuple(inner)
    last = inner[-1].offset
    if wrapper.offset != 0 and wrapper.offset < last:
        raise InvalidRecordError(
            "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
            f"'{wrapper.offset}' is less than the last inner message offset '{last}' "
            "and it is not zero.",
            position=value_at,
            field="offset",
        )
    base = 0 if wrapper.offset == 0 else wrapper.offset - last
    return tuple(replace(m, offset=base + m.offset) for m in inner)
