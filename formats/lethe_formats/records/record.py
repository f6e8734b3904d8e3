"""The magic-2 record (DefaultRecord): Construct schema and model conversion.

Theory of operation
-------------------
A record lives inside a batch's records area (decompressed first if the batch
is compressed). Its length prefix bounds everything after it, so a corrupt
inner length can never read past the record::

    length            varint   bytes after this field
    attributes        int8     unused by Kafka (0); bit 0 = KIP-87 tombstone (lethe)
    timestampDelta    varlong  timestamp - batch baseTimestamp (negative with a horizon)
    offsetDelta       varint   offset - batch baseOffset
    keyLength         varint   -1 = null key
    key               bytes
    valueLength       varint   -1 = null value (tombstone)
    value             bytes
    headersCount      varint   negative = InvalidRecordError
    headers           headersCount x { keyLength varint (>= 0), key,
                                       valueLength varint (-1 = null), value }

Faults inside a record are Kafka's InvalidRecordException ("Found invalid
record structure", "Invalid record size"), hence InvalidRecordError here, with
the one exception of an over-long varint, which stays a VarintError.
Any negative key/value length reads as null, as Kafka reads it; -1 is written.
"""

from __future__ import annotations

from typing import Any

from construct import Rebuild, Struct, Tell, len_, this

from lethe_formats.errors import InvalidRecordError
from lethe_formats.model import Header, Record
from lethe_formats.primitives import (
    CountedArray,
    HeaderKeyBytes,
    SizePrefixed,
    VarBytes,
    VarInt,
    VarLong,
)
from lethe_formats.records.attributes import RecordAttributes

__all__ = ["HeaderSchema", "RecordSchema", "record_from_container", "record_to_container"]

HeaderSchema = Struct(
    "key" / HeaderKeyBytes,
    "value" / VarBytes,
)

RecordBody = Struct(
    "attributes" / RecordAttributes,
    "timestamp_delta" / VarLong,
    "offset_delta" / VarInt,
    "key" / VarBytes,
    "value" / VarBytes,
    "_headers_count_at" / Tell,
    "headers_count" / Rebuild(VarInt, len_(this.headers)),
    "headers"
    / CountedArray(
        this.headers_count, HeaderSchema, what="headers count", at=this._headers_count_at
    ),
)

#: One record: its varint length, then exactly that many bytes of body.
RecordSchema = SizePrefixed(
    VarInt,
    RecordBody,
    field="length",
    overrun=InvalidRecordError,
    inner=InvalidRecordError,
    leftover=InvalidRecordError,
)


def record_from_container(parsed: Any) -> Record:
    """The model value of a parsed record."""
    return Record(
        attributes=int(parsed.attributes.raw),
        timestamp_delta=parsed.timestamp_delta,
        offset_delta=parsed.offset_delta,
        key=parsed.key,
        value=parsed.value,
        headers=tuple(Header(h.key, h.value) for h in parsed.headers),
    )


def record_to_container(record: Record) -> dict[str, Any]:
    """What :data:`RecordSchema` builds ``record`` from."""
    return {
        "attributes": record.attributes,
        "timestamp_delta": record.timestamp_delta,
        "offset_delta": record.offset_delta,
        "key": record.key,
        "value": record.value,
        "headers": [{"key": h.key, "value": h.value} for h in record.headers],
    }
