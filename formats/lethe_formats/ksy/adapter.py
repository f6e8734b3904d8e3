"""Turn Kaitai parses of ``.log`` segments into lethe's model values, with the rules Kaitai lacks.

Theory of operation
-------------------
The compiled specs (see :mod:`lethe_formats.ksy.compiler`) parse bytes into
Kaitai objects; this module converts them into the frozen dataclasses of
:mod:`lethe_formats.model`, so parity tests compare Kaitai, Construct and the
fast path value for value. Kaitai describes layout only, so the adapter adds:

* CRC-32C (magic 2, bytes [21, end)) and CRC32 (magic 0/1, magic..end),
  computed over the raw entry body Kaitai keeps in ``_raw_body``;
* decompression (:func:`lethe_formats.compression.decompress`), then parsing
  with ``kafka_record_v2::records`` (:mod:`.adapter_records`) or, for a
  legacy wrapper's inner messages, with the segment spec's own entry type;
* v1 inner offsets (absolute = wrapper offset - last inner + inner; a
  wrapper offset of 0 means base 0) and the legacy wrapper rules;
* the order in which Kafka reports faults.

A segment is parsed entry by entry (the spec's ``entry`` type on one stream)
so every error is tied to the entry's absolute position. When Kaitai cannot
parse an entry, :func:`_diagnose` reads its fixed prefix::

    0 offset int64 | 8 length int32 | 12 crc / leader epoch | 16 magic int8

and reports what Kafka would, in Kafka's order: a torn tail (fewer than 17
bytes, or a length beyond the data), a length too small, an unknown magic,
a CRC mismatch, and only then the content (a record located by
:func:`.adapter_records.locate_record_error`). Inner entries of a legacy
wrapper are checked in the order of Kafka's DeepRecordsIterator.

Index and checkpoint files are in :mod:`lethe_formats.ksy.adapter_files`.
"""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

from kaitaistruct import KaitaiStream

from lethe_formats import crc as _crc
from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
)
from lethe_formats.ksy.adapter_records import (
    KAITAI_ERRORS,
    Buffer,
    Where,
    batch_header,
    convert_records,
    decode_end_txn_marker,
    decode_records,
    locate_record_error,
)
from lethe_formats.ksy.compiler import KaitaiSpecs
from lethe_formats.model import Compression, LegacyMessage, RecordBatch

__all__ = [
    "Buffer",
    "batch_header",
    "decode_end_txn_marker",
    "decode_log",
    "decode_records",
    "legacy_message",
]

_V2_MIN_LENGTH = 61 - 12  # RECORD_BATCH_OVERHEAD without offset and length
_LEGACY_MIN_LENGTH = 14  # RECORD_OVERHEAD_V0, the only floor Kafka checks for magic 0/1
_PREFIX = 17  # offset, length, crc/epoch, magic


def _int(data: bytes, pos: int, size: int) -> int:
    return int.from_bytes(data[pos : pos + size], "big", signed=True)


def _prefix_error(data: bytes, pos: int, where: Where, *, inner: bool) -> FormatError | None:
    """The first fault of the entry's fixed prefix, in Kafka's order (None: it is sound)."""
    remaining = len(data) - pos
    torn_field = "messageSize" if inner else "entry"
    if remaining < _PREFIX:
        return where.error(TruncatedError, f"log entry is torn: {remaining} bytes", pos, torn_field)
    length, magic = _int(data, pos + 8, 4), _int(data, pos + 16, 1)
    name = "messageSize" if inner or magic in (0, 1) else "batchLength"
    known = (0, 1) if inner else (0, 1, 2)
    floor = _V2_MIN_LENGTH if magic == 2 else _LEGACY_MIN_LENGTH
    checks: list[tuple[bool, type[FormatError], str, int, str]] = [
        (not inner and length < _PREFIX - 12, CorruptRecordError, "too small", pos + 8, name),
        (not inner and length + 12 > remaining, TruncatedError, "torn", pos, torn_field),
        (magic not in known, UnsupportedMagicError, f"unknown magic {magic}", pos + 16, "magic"),
        (length < floor, CorruptRecordError, "too small", pos + 8, name),
        (inner and length + 12 > remaining, TruncatedError, "torn", pos + 8, torn_field),
    ]
    for failed, klass, what, at, field in checks:
        if failed:
            return where.error(klass, f"{name} {length}: {what}", at, field)
    return None


def _crc_error(magic: int, body: bytes, stored: int, pos: int, where: Where) -> FormatError | None:
    """A CRC mismatch of the entry at ``pos`` whose bytes after offset+length are ``body``.

    Magic 2: CRC-32C over entry bytes [21, end) = body[9:]; magic 0/1: CRC32
    over magic..end = body[4:]. None when the stored CRC matches.
    """
    if magic == 2:
        computed, at = _crc.crc32c(body[9:]), 17
    else:
        computed, at = _crc.crc32(body[4:]), 12
    if stored == computed:
        return None
    position, field = where.locate(pos + at, "crc")
    return ChecksumError(stored, computed, file=where.file, position=position, field=field)


def _diagnose(
    specs: KaitaiSpecs,
    data: bytes,
    pos: int,
    where: Where,
    cause: Exception,
    *,
    inner: bool,
    verify_crc: bool,
) -> FormatError:
    """Why Kaitai could not parse the entry at ``pos``, reported as Kafka would."""
    error = _prefix_error(data, pos, where, inner=inner)
    length, magic = _int(data, pos + 8, 4), _int(data, pos + 16, 1)
    body = data[pos + 12 : pos + 12 + length]
    if error is None and verify_crc:
        stored = int.from_bytes(body[5:9] if magic == 2 else body[0:4], "big")
        error = _crc_error(magic, body, stored, pos, where)
    if error is not None:
        return error
    if magic == 2:  # only at the top level: inner entries must be magic 0/1
        section = Where(where.start + pos + 61, where.file)
        return locate_record_error(specs, body[49:], _int(body, 45, 4), section, cause)
    return where.error(TruncatedError, f"message does not parse: {cause}", pos + 12, "message")


def _entries(
    specs: KaitaiSpecs, data: bytes, where: Where, *, inner: bool, verify_crc: bool
) -> list[tuple[int, Any]]:
    """Parse every entry with the spec's ``entry`` type: [(position, entry)]."""
    stream = KaitaiStream(io.BytesIO(data))
    out = []
    pos = 0
    while pos < len(data):
        try:
            entry = specs.log_segment.Entry(stream)
        except KAITAI_ERRORS as failure:
            raise _diagnose(
                specs, data, pos, where, failure, inner=inner, verify_crc=verify_crc
            ) from None
        if (error := _prefix_error(data, pos, where, inner=inner)) is not None:
            raise error  # a magic the spec parses but this context does not allow
        if verify_crc:  # over the raw body Kaitai kept, against the CRC it parsed
            magic, crc = entry.body.magic, entry.body.content.crc
            if (error := _crc_error(magic, entry._raw_body, crc, pos, where)) is not None:
                raise error
        out.append((pos, entry))
        pos = stream.pos()
    return out


# --- magic 0 and 1 -------------------------------------------------------------


def legacy_message(entry: Any) -> LegacyMessage:
    """The magic 0/1 message of a parsed ``entry`` (inner messages not resolved)."""
    m = entry.body.content
    return LegacyMessage(
        entry.offset,
        entry.length,
        m.crc,
        m.magic,
        m.attributes,
        m.timestamp if m.magic >= 1 else None,
        getattr(m, "key", None),
        getattr(m, "value", None),
    )


def _check_legacy(entry: Any, pos: int, where: Where) -> None:
    """Nothing may follow the value inside messageSize (Kaitai keeps it in ``trailing``)."""
    trailing = entry.body.content.trailing
    if trailing:
        message = f"{len(trailing)} bytes left unread inside messageSize {entry.length}"
        at = pos + 12 + entry.length - len(trailing)
        raise where.error(CorruptRecordError, message, at, "messageSize")


def _check_codec(message: LegacyMessage, pos: int, where: Where) -> int:
    codec = message.attributes & 0x07
    if codec >= Compression.ZSTD:
        text = f"compression codec {codec} is not allowed for magic {message.magic}"
        raise where.error(UnsupportedCompressionError, text, pos + 17, "attributes")
    return codec


def _inner_messages(
    specs: KaitaiSpecs, raw: bytes, wrapper: LegacyMessage, where: Where, *, verify_crc: bool
) -> list[LegacyMessage]:
    inner = []
    for rel, entry in _entries(specs, raw, where, inner=True, verify_crc=verify_crc):
        message = legacy_message(entry)
        codec = _check_codec(message, rel, where)
        _check_legacy(entry, rel, where)
        if message.magic != wrapper.magic:
            text = f"inner message magic {message.magic} is not the wrapper's {wrapper.magic}"
            raise where.error(InvalidRecordError, text, rel + 16, "magic")
        if codec:
            text = "inner message is compressed"
            raise where.error(InvalidRecordError, text, rel + 17, "attributes")
        inner.append(message)
    return inner


def _unwrap(
    specs: KaitaiSpecs, wrapper: LegacyMessage, pos: int, file: str | None, *, verify_crc: bool
) -> LegacyMessage:
    """Decompress a wrapper's value and parse its inner entries with the segment spec."""
    codec = _check_codec(wrapper, pos, Where(0, file))
    value_at = pos + wrapper.size_in_bytes - len(wrapper.value or b"")
    if wrapper.value is None:
        raise InvalidRecordError(
            "compressed wrapper message has a null value",
            file=file,
            position=value_at - 4,
            field="value",
        )
    raw = _decompress(codec, wrapper.value, wrapper.magic, value_at, file)
    where = Where(value_at, file, "wrapper value")
    inner = _inner_messages(specs, raw, wrapper, where, verify_crc=verify_crc)
    if not inner:
        raise where.error(InvalidRecordError, "compressed wrapper holds no messages", 0, "value")
    if wrapper.magic >= 1:
        base = 0 if wrapper.offset == 0 else wrapper.offset - inner[-1].offset
        inner = [replace(m, offset=base + m.offset) for m in inner]
    return replace(wrapper, inner=tuple(inner))


# --- magic 2 and whole segments --------------------------------------------------------


def _decompress(codec: int, data: bytes, magic: int, position: int, file: str | None) -> bytes:
    from lethe_formats.compression import decompress  # noqa: PLC0415 - only when compressed

    try:
        return decompress(Compression(codec), data, magic=magic)
    except FormatError as error:
        raise error.at(file=file, offset=position) from None


def _batch(specs: KaitaiSpecs, entry: Any, pos: int, file: str | None) -> RecordBatch:
    header = batch_header(entry)
    b = entry.body.content
    start = pos + 61
    if header.records_count < 0:
        raise InvalidRecordError(
            f"invalid recordsCount {header.records_count}",
            file=file,
            position=pos + 57,
            field="recordsCount",
        )
    codec = header.attributes & 0x07
    if codec == 0:
        records = convert_records(b.records.items, b.records.trailing, Where(start, file))
        return RecordBatch(header, records)
    if codec > Compression.ZSTD:
        raise UnsupportedCompressionError(
            f"unknown compression codec {codec}", file=file, position=pos + 21, field="attributes"
        )
    raw = _decompress(codec, b.compressed_records, 2, start, file)
    where = Where(start, file, "records")
    return RecordBatch(header, decode_records(specs, raw, header.records_count, where=where))


def decode_log(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None, verify_crc: bool = True
) -> list[RecordBatch | LegacyMessage]:
    """Every entry of a ``.log`` segment, deep: batches with records, wrappers with inner.

    Raises a :class:`~lethe_formats.errors.FormatError` subclass naming the
    field and absolute position; :class:`ChecksumError` on a CRC mismatch
    when ``verify_crc``.
    """
    raw = bytes(data)
    where = Where(0, file)
    out: list[RecordBatch | LegacyMessage] = []
    for pos, entry in _entries(specs, raw, where, inner=False, verify_crc=verify_crc):
        if entry.body.magic == 2:
            out.append(_batch(specs, entry, pos, file))
            continue
        _check_legacy(entry, pos, where)
        message = legacy_message(entry)
        if message.attributes & 0x07:
            message = _unwrap(specs, message, pos, file, verify_crc=verify_crc)
        out.append(message)
    return out
