"""Turn Kaitai parse results into lethe's model values, adding the rules Kaitai cannot state.

Theory of operation
-------------------
The compiled specs (see :mod:`lethe_formats.ksy.compiler`) parse bytes into
Kaitai objects; this module converts those into the frozen dataclasses of
:mod:`lethe_formats.model`, so parity tests compare Kaitai, Construct and the
fast path value for value. Kaitai describes layout only, so the adapter adds:

* CRC-32C (magic 2, bytes [21, end)) and CRC32 (magic 0/1, magic..end),
  computed over the raw entry body Kaitai keeps in ``_raw_body``;
* decompression (:func:`lethe_formats.compression.decompress`) and parsing of
  the result with ``kafka_record_v2::records`` or the log-segment spec itself;
* varint limits (5 bytes / 32 bits, varlong 10 bytes / 64 bits), null
  lengths other than -1, negative counts, leftover bytes, v1 inner offsets.

A segment is parsed entry by entry (the spec's ``entry`` type on one stream)
so an error is tied to the entry's absolute position. When Kaitai itself
fails, :func:`_diagnose` looks at the entry's fixed prefix to report it the
way Kafka would (torn tail, size below the minimum, CRC, bad record), and a
records section is re-read record by record to find the failing record.
Errors inside decompressed data point at the records section (or wrapper
value) and name the byte inside the decompressed data.

Index and checkpoint files are in :mod:`lethe_formats.ksy.adapter_files`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kaitaistruct import KaitaiStream, KaitaiStructError

from lethe_formats import crc as _crc
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
from lethe_formats.ksy.compiler import KaitaiSpecs
from lethe_formats.model import (
    BatchHeader,
    Compression,
    ControlType,
    EndTxnMarker,
    Header,
    LegacyMessage,
    Record,
    RecordBatch,
)

__all__ = [
    "KAITAI_ERRORS",
    "Buffer",
    "batch_header",
    "decode_end_txn_marker",
    "decode_log",
    "decode_records",
    "legacy_message",
]

Buffer = bytes | bytearray | memoryview

#: Everything a generated parser may raise on bad input.
KAITAI_ERRORS = (KaitaiStructError, EOFError, ValueError, UnicodeDecodeError)

_VARINT = (5, 32)
_VARLONG = (10, 64)
_MIN_LENGTH = {0: 14, 1: 22, 2: 49}  # RECORD_OVERHEAD_V0/V1; 61-byte batch header - 12


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a records section sits: absolute start, or inside decompressed data."""

    start: int
    file: str | None
    decompressed: str | None = None  # "records" / "wrapper value" when decompressed

    def error(self, klass: type[FormatError], message: str, rel: int, field: str) -> FormatError:
        if self.decompressed is None:
            return klass(message, file=self.file, position=self.start + rel, field=field)
        inner = f"{field} (byte {rel} of the decompressed {self.decompressed})"
        return klass(message, file=self.file, position=self.start, field=inner)


# --- magic 2 ---------------------------------------------------------------------


def batch_header(entry: Any) -> BatchHeader:
    """The 61-byte header of a parsed magic-2 ``entry``."""
    b = entry.body.content
    return BatchHeader(
        entry.offset,
        entry.length,
        b.partition_leader_epoch,
        b.magic,
        b.crc,
        b.attributes,
        b.last_offset_delta,
        b.base_timestamp,
        b.max_timestamp,
        b.producer_id,
        b.producer_epoch,
        b.base_sequence,
        b.records_count,
    )


def _varint(v: Any, limits: tuple[int, int], where: _Where, rel: int, field: str) -> int:
    """Kafka's bounds on a parsed varint: at most ``limits`` = (bytes, bits)."""
    max_bytes, bits = limits
    if v.num_groups > max_bytes or not v.terminated:
        raise where.error(VarintError, f"{field} is longer than {max_bytes} bytes", rel, field)
    if v.unsigned >> bits:
        raise where.error(VarintError, f"{field} does not fit in {bits} bits", rel, field)
    value: int = v.value
    return value


def _nullable(
    length: Any, data: Any, where: _Where, rel: int, field: str, *, allow_null: bool = True
) -> tuple[bytes | None, int]:
    """(bytes or None, position after) for a varint length + bytes field."""
    size = _varint(length, _VARINT, where, rel, f"{field}Length")
    after = rel + length.num_groups
    if size == -1 and allow_null:
        return None, after
    if size < 0:
        raise where.error(
            InvalidRecordError, f"invalid {field}Length {size}", rel, f"{field}Length"
        )
    return bytes(data), after + size


def _record(k: Any, index: int, where: _Where, rel: int) -> tuple[Record, int]:
    """Convert one Kaitai record starting at ``rel``; return it and the next position."""
    name = f"records[{index}]"
    length = _varint(k.length, _VARINT, where, rel, f"{name}.length")
    body = k.body
    p = rel + k.length.num_groups + 1
    ts_delta = _varint(body.timestamp_delta, _VARLONG, where, p, f"{name}.timestampDelta")
    p += body.timestamp_delta.num_groups
    off_delta = _varint(body.offset_delta, _VARINT, where, p, f"{name}.offsetDelta")
    p += body.offset_delta.num_groups
    key, p = _nullable(body.key_length, getattr(body, "key", b""), where, p, f"{name}.key")
    value, p = _nullable(body.value_length, getattr(body, "value", b""), where, p, f"{name}.value")
    count = _varint(body.headers_count, _VARINT, where, p, f"{name}.headersCount")
    if count < 0:
        raise where.error(
            InvalidRecordError, f"invalid {name}.headersCount {count}", p, f"{name}.headersCount"
        )
    p += body.headers_count.num_groups
    headers = []
    for j, h in enumerate(body.headers):
        field = f"{name}.headers[{j}]"
        hkey, p = _nullable(h.key_length, h.key, where, p, f"{field}.key", allow_null=False)
        hval, p = _nullable(h.value_length, getattr(h, "value", b""), where, p, f"{field}.value")
        headers.append(Header(bytes(hkey or b""), hval))
    if body.trailing:
        raise where.error(
            InvalidRecordError,
            f"{name}.length {length} but the fields end {len(body.trailing)} bytes earlier",
            rel,
            f"{name}.length",
        )
    record = Record(body.attributes, ts_delta, off_delta, key, value, tuple(headers))
    return record, rel + k.length.num_groups + length


def _convert_records(items: Sequence[Any], trailing: bytes, where: _Where) -> tuple[Record, ...]:
    records = []
    rel = 0
    for index, k in enumerate(items):
        record, rel = _record(k, index, where, rel)
        records.append(record)
    if trailing:
        raise where.error(
            InvalidRecordError,
            f"{len(trailing)} bytes remain after the last of {len(items)} records",
            rel,
            "records",
        )
    return tuple(records)


def _locate_record_error(
    specs: KaitaiSpecs, section: bytes, count: int, where: _Where, cause: Exception
) -> FormatError:
    """Re-read a section that failed to parse record by record; name the bad record."""
    stream = KaitaiStream(io.BytesIO(section))
    for index in range(count):
        rel = stream.pos()
        name = f"records[{index}]"
        if rel >= len(section):
            message = f"{name} extends beyond the end of the records section"
            return where.error(InvalidRecordError, message, rel, f"{name}.length")
        try:
            k = specs.record_v2(stream)
        except KAITAI_ERRORS as failure:
            lead = specs.varint(KaitaiStream(io.BytesIO(section[rel : rel + 10])))
            _varint(lead, _VARINT, where, rel, f"{name}.length")
            return where.error(InvalidRecordError, f"{name} does not parse: {failure}", rel, name)
        _record(k, index, where, rel)
    return where.error(InvalidRecordError, f"records section does not parse: {cause}", 0, "records")


def decode_records(
    specs: KaitaiSpecs, section: Buffer, count: int, *, where: _Where | None = None
) -> tuple[Record, ...]:
    """Parse a records section (e.g. decompressed) with ``kafka_record_v2::records``."""
    where = where or _Where(0, None)
    data = bytes(section)
    try:
        parsed = specs.record_v2.Records(count, KaitaiStream(io.BytesIO(data)))
    except KAITAI_ERRORS as failure:
        raise _locate_record_error(specs, data, count, where, failure) from None
    return _convert_records(parsed.items, parsed.trailing, where)


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
        records = _convert_records(b.records.items, b.records.trailing, _Where(start, file))
        return RecordBatch(header, records)
    if codec > Compression.ZSTD:
        raise UnsupportedCompressionError(
            f"unknown compression codec {codec}", file=file, position=pos + 21, field="attributes"
        )
    raw = _decompress(codec, b.compressed_records, 2, start, file)
    where = _Where(start, file, "records")
    return RecordBatch(header, decode_records(specs, raw, header.records_count, where=where))


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


def _check_legacy(entry: Any, pos: int, where: _Where) -> None:
    """lethe's rules on top of the spec: null is only -1, nothing after the value."""
    m = entry.body.content
    key_at = 18 if m.magic == 0 else 26
    value_at = key_at + 4 + max(m.key_length, 0)
    for field, length, at in (("key", m.key_length, key_at), ("value", m.value_length, value_at)):
        if length < -1:
            message = f"invalid {field}Length {length}"
            raise where.error(CorruptRecordError, message, pos + at, f"{field}Length")
    if m.trailing:
        raise where.error(
            CorruptRecordError,
            f"messageSize {entry.length} but the value ends {len(m.trailing)} bytes earlier",
            pos + 8,
            "messageSize",
        )


def _inner(specs: KaitaiSpecs, wrapper: LegacyMessage, pos: int, file: str | None) -> LegacyMessage:
    """Decompress a wrapper's value and parse the inner entries with the segment spec."""
    codec = wrapper.attributes & 0x07
    value_pos = pos + 12 + wrapper.message_size - len(wrapper.value or b"")
    if codec >= Compression.ZSTD:
        raise UnsupportedCompressionError(
            f"compression codec {codec} is not allowed for magic {wrapper.magic}",
            file=file,
            position=pos + 17,
            field="attributes",
        )
    if wrapper.value is None:
        raise InvalidRecordError(
            "compressed wrapper message has a null value",
            file=file,
            position=value_pos - 4,
            field="valueLength",
        )
    raw = _decompress(codec, wrapper.value, wrapper.magic, value_pos, file)
    where = _Where(value_pos, file, "wrapper value")
    inner = []
    for rel, entry in _entries(specs, raw, where, verify_crc=False):
        magic = entry.body.magic
        if magic != wrapper.magic:
            message = f"inner message magic {magic} does not match wrapper magic {wrapper.magic}"
            raise where.error(InvalidRecordError, message, rel + 16, "inner.magic")
        _check_legacy(entry, rel, where)
        message_ = legacy_message(entry)
        if message_.attributes & 0x07:
            raise where.error(
                InvalidRecordError, "inner message is compressed", rel + 17, "inner.attributes"
            )
        inner.append(message_)
    if not inner:
        raise where.error(InvalidRecordError, "compressed wrapper holds no messages", 0, "inner")
    if wrapper.magic >= 1:
        base = 0 if wrapper.offset == 0 else wrapper.offset - inner[-1].offset
        inner = [replace(m, offset=base + m.offset) for m in inner]
    return replace(wrapper, inner=tuple(inner))


# --- entries ---------------------------------------------------------------------


def _crc_error(entry: Any, pos: int, file: str | None) -> ChecksumError | None:
    raw = entry._raw_body
    stored = entry.body.content.crc
    if entry.body.magic == 2:
        computed = _crc.crc32c(raw[9:])
        where = pos + 17
    else:
        computed = _crc.crc32(raw[4:])
        where = pos + 12
    if computed == stored:
        return None
    return ChecksumError(stored, computed, file=file, position=where, field="crc")


def _diagnose(
    specs: KaitaiSpecs, data: bytes, pos: int, where: _Where, cause: Exception, *, verify_crc: bool
) -> FormatError:
    """Explain why Kaitai could not parse the entry at ``pos`` (Kafka's order of checks)."""
    remaining = len(data) - pos
    if remaining < 17:
        return where.error(TruncatedError, f"log entry is torn: {remaining} bytes", pos, "entry")
    length = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
    magic = int.from_bytes(data[pos + 16 : pos + 17], "big", signed=True)
    name = "messageSize" if magic in (0, 1) else "batchLength"
    floor = _MIN_LENGTH.get(magic, _MIN_LENGTH[0])
    if length < floor:
        message = f"{name} {length} is smaller than the minimum {floor}"
        return where.error(CorruptRecordError, message, pos + 8, name)
    if length + 12 > remaining:
        return where.error(TruncatedError, f"log entry is torn: {remaining} bytes", pos, "entry")
    body = data[pos + 12 : pos + 12 + length]
    if verify_crc and magic in _MIN_LENGTH:
        stored = int.from_bytes(body[5:9] if magic == 2 else body[0:4], "big")
        computed = _crc.crc32c(body[9:]) if magic == 2 else _crc.crc32(body[4:])
        if stored != computed:
            at = pos + (17 if magic == 2 else 12)
            return ChecksumError(stored, computed, file=where.file, position=at, field="crc")
    if magic == 2:
        count = int.from_bytes(body[45:49], "big", signed=True)
        sub = _Where(pos + 61, where.file) if where.decompressed is None else where
        return _locate_record_error(specs, body[49:], count, sub, cause)
    return where.error(CorruptRecordError, f"message does not parse: {cause}", pos + 12, "message")


def _entries(
    specs: KaitaiSpecs, data: bytes, where: _Where, *, verify_crc: bool
) -> list[tuple[int, Any]]:
    """Parse every entry with the spec's ``entry`` type: [(position, entry)]."""
    stream = KaitaiStream(io.BytesIO(data))
    out = []
    pos = 0
    while pos < len(data):
        try:
            entry = specs.log_segment.Entry(stream)
        except KAITAI_ERRORS as failure:
            raise _diagnose(specs, data, pos, where, failure, verify_crc=verify_crc) from None
        if entry.body.magic not in _MIN_LENGTH:
            magic = entry.body.magic
            raise where.error(UnsupportedMagicError, f"unknown magic {magic}", pos + 16, "magic")
        out.append((pos, entry))
        pos = stream.pos()
    return out


def decode_log(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None, verify_crc: bool = True
) -> list[RecordBatch | LegacyMessage]:
    """Every entry of a ``.log`` segment, deep: batches with records, wrappers with inner.

    Raises :class:`ChecksumError` on a CRC mismatch when ``verify_crc``.
    """
    raw = bytes(data)
    where = _Where(0, file)
    out: list[RecordBatch | LegacyMessage] = []
    for pos, entry in _entries(specs, raw, where, verify_crc=verify_crc):
        if entry.body.magic in (0, 1):
            _check_legacy(entry, pos, where)
        if verify_crc and (error := _crc_error(entry, pos, file)) is not None:
            raise error
        if entry.body.magic == 2:
            out.append(_batch(specs, entry, pos, file))
            continue
        message = legacy_message(entry)
        out.append(_inner(specs, message, pos, file) if message.attributes & 0x07 else message)
    return out


# --- control records -------------------------------------------------------------


def decode_end_txn_marker(
    specs: KaitaiSpecs, record: Record, *, position: int | None = None
) -> EndTxnMarker:
    """The COMMIT/ABORT marker in a control record, parsed with the record spec's types."""
    key, value = record.key or b"", record.value or b""
    if len(key) < 4:
        raise InvalidRecordError(
            "control record key shorter than 4 bytes", position=position, field="controlKey"
        )
    k = specs.record_v2.ControlKey(KaitaiStream(io.BytesIO(key)))
    if k.version < 0 or int(k.type) not in (ControlType.ABORT, ControlType.COMMIT):
        raise InvalidRecordError(
            f"not an end-transaction marker: key version {k.version}, type {int(k.type)}",
            position=position,
            field="controlKey",
        )
    if len(value) < 6:
        raise InvalidRecordError(
            "end-transaction marker value shorter than 6 bytes",
            position=position,
            field="endTxnMarker",
        )
    v = specs.record_v2.EndTxnMarkerValue(KaitaiStream(io.BytesIO(value)))
    if v.version < 0:
        raise InvalidRecordError(
            f"invalid end-transaction marker version {v.version}",
            position=position,
            field="endTxnMarker.version",
        )
    return EndTxnMarker(k.version, ControlType(int(k.type)), v.version, v.coordinator_epoch)
