"""Magic-2 records through the Kaitai record spec, into :class:`~lethe_formats.model.Record`.

Theory of operation
-------------------
``kafka_record_v2`` parses a record's layout; it cannot bound a varint for
the field using it, so each converted record is checked here the way Kafka's
``DefaultRecord.readFrom`` and lethe's other decoders check it:

* varints at most 5 bytes / 32 bits, the timestamp delta (a varlong) at most
  10 bytes / 64 bits (:class:`VarintError`);
* any negative key/value/header-value length is null (Kafka slices only a
  length >= 0); a negative headers count is an :class:`InvalidRecordError`;
* the body must end exactly at ``length`` and the section exactly after
  ``recordsCount`` records (the specs keep the rest in ``trailing``).

Positions are computed from the varint sizes Kaitai reports, so an error
names the exact field. When Kaitai itself cannot parse a section,
:func:`locate_record_error` re-reads it record by record with the same spec
and classifies the first record that fails: an over-long length varint is a
:class:`VarintError`, a negative length a :class:`CorruptRecordError`, and
anything else, including a section that ends early, Kafka's
InvalidRecordException (Kafka turns a buffer underflow into one). When the
record's own fields overrun its length, the error names the record, not the
field: Kaitai does not say where inside the body it stopped. A section
inside decompressed data has no file position: :class:`Where` then points
at the compressed block and names the byte inside the decompressed data.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kaitaistruct import KaitaiStream, KaitaiStructError

from lethe_formats.errors import (
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    VarintError,
)
from lethe_formats.ksy.compiler import KaitaiSpecs
from lethe_formats.model import BatchHeader, ControlType, EndTxnMarker, Header, Record

__all__ = [
    "KAITAI_ERRORS",
    "Buffer",
    "Where",
    "batch_header",
    "convert_records",
    "decode_end_txn_marker",
    "decode_records",
    "locate_record_error",
]

Buffer = bytes | bytearray | memoryview

#: Everything a generated parser may raise on bad input.
KAITAI_ERRORS = (KaitaiStructError, EOFError, ValueError, UnicodeDecodeError)

_VARINT = (5, 32)
_VARLONG = (10, 64)


@dataclass(frozen=True, slots=True)
class Where:
    """Where parsed bytes sit: ``start`` in the file, or inside decompressed data."""

    start: int
    file: str | None
    decompressed: str | None = None  # "records" / "wrapper value" when decompressed

    def locate(self, rel: int, field: str) -> tuple[int, str]:
        """(absolute position, field name) for byte ``rel`` of these bytes."""
        if self.decompressed is None:
            return self.start + rel, field
        return self.start, f"{field} (byte {rel} of the decompressed {self.decompressed})"

    def error(self, klass: type[FormatError], message: str, rel: int, field: str) -> FormatError:
        """``klass`` at byte ``rel`` of these bytes."""
        position, name = self.locate(rel, field)
        return klass(message, file=self.file, position=position, field=name)


def batch_header(entry: Any) -> BatchHeader:
    """The 61-byte header of a parsed magic-2 log-segment ``entry``."""
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


def _varint(v: Any, limits: tuple[int, int], where: Where, rel: int, field: str) -> int:
    """Kafka's bounds on a parsed varint: at most ``limits`` = (bytes, bits)."""
    max_bytes, bits = limits
    if v.num_groups > max_bytes or not v.terminated:
        raise where.error(VarintError, f"{field} is longer than {max_bytes} bytes", rel, field)
    if v.unsigned >> bits:
        raise where.error(VarintError, f"{field} does not fit in {bits} bits", rel, field)
    value: int = v.value
    return value


def _nullable(
    length: Any, data: Any, where: Where, rel: int, field: str
) -> tuple[bytes | None, int]:
    """(bytes or None, position after) for a varint length + bytes field."""
    size = _varint(length, _VARINT, where, rel, f"{field}Length")
    after = rel + length.num_groups
    if size < 0:
        return None, after
    return bytes(data), after + size


def _headers(body: Any, name: str, where: Where, p: int) -> tuple[tuple[Header, ...], int]:
    count = _varint(body.headers_count, _VARINT, where, p, f"{name}.headersCount")
    if count < 0:
        field = f"{name}.headersCount"
        raise where.error(InvalidRecordError, f"invalid {field} {count}", p, field)
    p += body.headers_count.num_groups
    headers = []
    for j, h in enumerate(body.headers):
        field = f"{name}.headers[{j}]"
        key, p = _nullable(h.key_length, h.key, where, p, f"{field}.key")
        value, p = _nullable(h.value_length, getattr(h, "value", b""), where, p, f"{field}.value")
        headers.append(Header(key or b"", value))
    return tuple(headers), p


def _record(k: Any, index: int, where: Where, rel: int) -> tuple[Record, int]:
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
    headers, p = _headers(body, name, where, p)
    if body.trailing:  # reported where the unread bytes start
        message = f"{name}.length {length} but the fields end {len(body.trailing)} bytes earlier"
        raise where.error(InvalidRecordError, message, p, f"{name}.length")
    record = Record(body.attributes, ts_delta, off_delta, key, value, headers)
    return record, rel + k.length.num_groups + length


def convert_records(items: Sequence[Any], trailing: bytes, where: Where) -> tuple[Record, ...]:
    """Model records from a parsed ``records`` section, with Kafka's record rules."""
    records = []
    rel = 0
    for index, k in enumerate(items):
        record, rel = _record(k, index, where, rel)
        records.append(record)
    if trailing:
        message = f"{len(trailing)} bytes remain after the last of {len(items)} records"
        raise where.error(InvalidRecordError, message, rel, "records")
    return tuple(records)


def _record_failure(
    specs: KaitaiSpecs, section: bytes, rel: int, name: str, where: Where, *, cause: Exception
) -> FormatError:
    """Classify a record Kaitai could not parse, from its length varint."""
    field = f"{name}.length"
    try:
        lead = specs.varint(KaitaiStream(io.BytesIO(section[rel : rel + 10])))
    except KAITAI_ERRORS:  # Kafka: BufferUnderflowException -> InvalidRecordException
        message = f"the records section ends inside {field}"
        return where.error(InvalidRecordError, message, rel, field)
    length = _varint(lead, _VARINT, where, rel, field)
    if length < 0:
        return where.error(CorruptRecordError, f"{field} {length} is negative", rel, field)
    if length > len(section) - rel - lead.num_groups:
        message = f"{field} {length} extends beyond the end of the records section"
        return where.error(InvalidRecordError, message, rel, field)
    message = f"{name} fields overrun its length {length}: {cause}"
    return where.error(InvalidRecordError, message, rel, name)


def locate_record_error(
    specs: KaitaiSpecs, section: bytes, count: int, where: Where, cause: Exception
) -> FormatError:
    """Re-read a section that failed to parse record by record; name the bad record."""
    stream = KaitaiStream(io.BytesIO(section))
    for index in range(count):
        rel = stream.pos()
        name = f"records[{index}]"
        if rel >= len(section):
            message = f"the records section ends before {name}"
            return where.error(InvalidRecordError, message, rel, f"{name}.length")
        try:
            k = specs.record_v2(stream)
        except KAITAI_ERRORS as failure:
            return _record_failure(specs, section, rel, name, where, cause=failure)
        _record(k, index, where, rel)
    return where.error(InvalidRecordError, f"records section does not parse: {cause}", 0, "records")


def decode_records(
    specs: KaitaiSpecs, section: Buffer, count: int, *, where: Where | None = None
) -> tuple[Record, ...]:
    """Parse a records section (e.g. decompressed) with ``kafka_record_v2::records``."""
    where = where or Where(0, None)
    data = bytes(section)
    try:
        parsed = specs.record_v2.Records(count, KaitaiStream(io.BytesIO(data)))
    except KAITAI_ERRORS as failure:
        raise locate_record_error(specs, data, count, where, failure) from None
    return convert_records(parsed.items, parsed.trailing, where)


def decode_end_txn_marker(
    specs: KaitaiSpecs, record: Record, *, position: int | None = None
) -> EndTxnMarker:
    """The COMMIT/ABORT marker in a control record, parsed with the record spec's types.

    ``position`` (the record's position, when known) is attached to errors.
    """
    key, value = record.key or b"", record.value or b""
    if len(key) < 4:
        message = "control record key shorter than 4 bytes"
        raise InvalidRecordError(message, position=position, field="controlKey")
    k = specs.record_v2.ControlKey(KaitaiStream(io.BytesIO(key)))
    if k.version < 0 or int(k.type) not in (ControlType.ABORT, ControlType.COMMIT):
        message = f"not an end-transaction marker: key version {k.version}, type {int(k.type)}"
        raise InvalidRecordError(message, position=position, field="controlKey")
    if len(value) < 6:
        message = "end-transaction marker value shorter than 6 bytes"
        raise InvalidRecordError(message, position=position, field="endTxnMarker")
    v = specs.record_v2.EndTxnMarkerValue(KaitaiStream(io.BytesIO(value)))
    if v.version < 0:
        message = f"invalid end-transaction marker version {v.version}"
        raise InvalidRecordError(message, position=position, field="endTxnMarker.version")
    return EndTxnMarker(k.version, ControlType(int(k.type)), v.version, v.coordinator_epoch)
