"""Valid record cases built by hand from Kafka's documented layout.

Theory of operation
-------------------
Some rules have no example in the golden files (magic 0 and 1 messages, an
empty batch left by compaction, LogAppendTime, negative lengths read as null,
sequence wrap-around). These cases are built here from field values with the
``struct`` encoders of :mod:`.authoring_wire`; the values passed in *are* the
expected decoding, so nothing is computed by the code under test. Each
builder returns the bytes and the tagged expected value side by side.

Rules pinned (kafka-facts §3.2-3.4): a negative key or value length other
than -1 still reads as null (``Utils.readBytes``); record timestamp = batch
baseTimestamp + delta, or maxTimestamp under LogAppendTime; sequence =
baseSequence + offsetDelta wrapping past Int.MAX to 0, or -1 without a base
sequence; a v1 wrapper's inner offsets are relative and become absolute as
``wrapper offset - last inner + inner`` (base 0 when the wrapper offset is 0);
v0 inner offsets are absolute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lethe_conformance.formats.authoring_cases import Authored, valid
from lethe_conformance.formats.authoring_wire import (
    BatchFields,
    Part,
    assemble_record,
    batch_bytes,
    compress,
    legacy_entry,
    record_parts,
    varint,
)
from lethe_conformance.formats.tagged import bytes_value, int64

__all__ = [
    "RECORD_CONTEXT",
    "batch_expected",
    "built_batches",
    "built_records",
    "legacy",
    "record_expected",
]

INT32_MAX = 2**31 - 1
T0 = 1_795_000_000_000
RECORD_CONTEXT = {
    "baseOffset": "1000",
    "baseTimestamp": int64(T0),
    "maxTimestamp": int64(T0 + 500),
    "timestampType": "CreateTime",
    "baseSequence": 40,
}


def record_expected(
    *,
    attributes: int = 0,
    timestamp_delta: int = 0,
    offset_delta: int = 0,
    key: bytes | None = None,
    value: bytes | None = None,
    headers: Sequence[tuple[bytes, bytes | None]] = (),
) -> dict[str, Any]:
    """The tagged record value for these field values."""
    return {
        "attributes": attributes,
        "timestampDelta": int64(timestamp_delta),
        "offsetDelta": offset_delta,
        "key": bytes_value(key),
        "value": bytes_value(value),
        "headers": [{"key": bytes_value(k), "value": bytes_value(v)} for k, v in headers],
    }


def _derived(fields: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """offset, timestamp and sequence of a record in the batch ``context`` describes."""
    delta = fields["offsetDelta"]
    if context["timestampType"] == "LogAppendTime":
        timestamp = int(context["maxTimestamp"])
    else:
        timestamp = int(context["baseTimestamp"]) + int(fields["timestampDelta"])
    sequence = context["baseSequence"]
    if sequence != -1:
        total = sequence + delta
        sequence = total - INT32_MAX - 1 if total > INT32_MAX else total
    return {
        "offset": int64(int(context["baseOffset"]) + delta),
        "timestamp": int64(timestamp),
        "sequence": sequence,
    }


def _record_case(
    name: str,
    description: str,
    fields: dict[str, Any],
    *,
    parts: list[Part] | None = None,
    expected: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
) -> Authored:
    ctx = RECORD_CONTEXT if context is None else context
    data = assemble_record(parts if parts is not None else record_parts(**fields))
    value = expected if expected is not None else record_expected(**fields)
    return valid(
        f"record/{name}",
        description,
        data,
        value | _derived(value, ctx),
        provenance="built by hand with struct from the v2 record layout (kafka-facts 3.2)",
        context=ctx,
    )


def _with_part(fields: dict[str, Any], name: str, raw: bytes) -> list[Part]:
    return [(n, raw if n == name else b) for n, b in record_parts(**fields)]


def built_records() -> list[Authored]:
    """``record`` valid cases."""
    plain = {
        "timestamp_delta": 7,
        "offset_delta": 2,
        "key": b"user-1",
        "value": b"v1",
        "headers": [(b"trace", b"abc")],
    }
    tomb = {"offset_delta": 3, "key": b"user-2", "value": None}
    return [
        _record_case("plain", "record with key, value and one header", plain),
        _record_case("tombstone", "record with a null value", tomb),
        _record_case("null-key", "record with a null key", {"key": None, "value": b"x"}),
        _record_case(
            "negative-key-length-is-null",
            "key length -2 reads as a null key, as Kafka reads any negative length",
            {"key": None, "value": b"x"},
            parts=_with_part({"key": None, "value": b"x"}, "keyLength", varint(-2)),
        ),
        _record_case(
            "negative-value-length-is-null",
            "value length -7 reads as a null value",
            {"key": b"k", "value": None},
            parts=_with_part({"key": b"k", "value": None}, "valueLength", varint(-7)),
        ),
        _record_case(
            "header-null-and-empty",
            "headers with a null value, an empty value and an empty key",
            {"key": b"k", "value": b"v", "headers": [(b"n", None), (b"e", b""), (b"", b"x")]},
        ),
        _record_case(
            "negative-timestamp-delta",
            "timestamp delta below the base timestamp, as after a delete horizon",
            {"timestamp_delta": -23_000, "key": b"k", "value": b"v"},
        ),
        _record_case(
            "log-append-time",
            "LogAppendTime batch: the record timestamp is the batch maxTimestamp",
            {"timestamp_delta": 5, "offset_delta": 1, "key": b"k", "value": b"v"},
            context=RECORD_CONTEXT | {"timestampType": "LogAppendTime"},
        ),
        _record_case(
            "sequence-wraps",
            "sequence past Int.MAX wraps to 0 and up",
            {"offset_delta": 3, "key": b"k", "value": b"v"},
            context=RECORD_CONTEXT | {"baseSequence": INT32_MAX - 1},
        ),
        _record_case(
            "no-sequence",
            "base sequence -1 gives every record sequence -1",
            {"offset_delta": 4, "key": b"k", "value": b"v"},
            context=RECORD_CONTEXT | {"baseSequence": -1},
        ),
        _record_case(
            "attributes-kept",
            "record attributes byte 1 is kept as stored",
            {"attributes": 1, "key": b"k", "value": None},
        ),
        _record_case(
            "multi-byte-varints",
            "multi-byte varints: offset delta 300, timestamp delta 2^40, 200-byte value",
            {"timestamp_delta": 2**40, "offset_delta": 300, "key": b"k", "value": b"z" * 200},
        ),
    ]


def batch_expected(
    fields: BatchFields, records: list[dict[str, Any]], data: bytes
) -> dict[str, Any]:
    """Tagged batch value; batchLength and crc are the ones written into ``data``."""
    return {
        "baseOffset": int64(fields.base_offset),
        "batchLength": int.from_bytes(data[8:12], "big", signed=True),
        "partitionLeaderEpoch": fields.partition_leader_epoch,
        "magic": 2,
        "crc": int.from_bytes(data[17:21], "big"),
        "attributes": fields.attributes,
        "lastOffsetDelta": fields.last_offset_delta,
        "baseTimestamp": int64(fields.base_timestamp),
        "maxTimestamp": int64(fields.max_timestamp),
        "producerId": int64(fields.producer_id),
        "producerEpoch": fields.producer_epoch,
        "baseSequence": fields.base_sequence,
        "recordsCount": fields.records_count,
        "records": records,
    }


def _batch_case(
    name: str, description: str, fields: BatchFields, specs: list[dict[str, Any]]
) -> Authored:
    area = b"".join(assemble_record(record_parts(**spec)) for spec in specs)
    data = batch_bytes(fields, area)
    expected = batch_expected(fields, [record_expected(**s) for s in specs], data)
    return valid(
        f"record-batch/{name}",
        description,
        data,
        expected,
        provenance="built by hand with struct from the v2 batch layout (kafka-facts 3.1)",
    )


def built_batches() -> list[Authored]:
    """``record-batch`` valid cases built by hand."""
    two = [
        {
            "timestamp_delta": 0,
            "offset_delta": 0,
            "key": b"a",
            "value": b"first",
            "headers": [(b"h", b"1")],
        },
        {"timestamp_delta": 12, "offset_delta": 1, "key": b"b", "value": b"second"},
    ]
    return [
        _batch_case(
            "built-two-records",
            "uncompressed batch of two records built from the layout",
            BatchFields(
                base_offset=500,
                last_offset_delta=1,
                base_timestamp=T0,
                max_timestamp=T0 + 12,
                records_count=2,
            ),
            two,
        ),
        _batch_case(
            "log-append-time",
            "LogAppendTime batch: attribute bit 3, broker time as maxTimestamp",
            BatchFields(
                base_offset=7,
                attributes=0x08,
                last_offset_delta=1,
                base_timestamp=T0,
                max_timestamp=T0 + 9000,
                records_count=2,
            ),
            two,
        ),
        _batch_case(
            "empty-after-compaction",
            "batch left empty by compaction: no records, base timestamp -1, producer state kept",
            BatchFields(
                base_offset=40,
                last_offset_delta=3,
                base_timestamp=-1,
                max_timestamp=T0 + 77,
                producer_id=12,
                producer_epoch=2,
                base_sequence=100,
                records_count=0,
            ),
            [],
        ),
    ]


def legacy(
    offset: int,
    magic: int,
    *,
    attributes: int = 0,
    timestamp: int | None = None,
    key: bytes | None = None,
    value: bytes | None = None,
    inner: Sequence[tuple[bytes, dict[str, Any]]] = (),
    codec: str = "gzip",
) -> tuple[bytes, dict[str, Any]]:
    """A v0/v1 log entry and its tagged value; ``inner`` makes it a compressed
    wrapper whose value is ``codec`` over the inner entries' bytes."""
    if inner:
        value = compress(codec, b"".join(raw for raw, _ in inner), magic=magic)
    data = legacy_entry(
        offset=offset, magic=magic, attributes=attributes, timestamp=timestamp, key=key, value=value
    )
    expected = {
        "offset": int64(offset),
        "messageSize": len(data) - 12,
        "crc": int.from_bytes(data[12:16], "big"),
        "magic": magic,
        "attributes": attributes,
        "timestamp": None if magic == 0 else int64(-1 if timestamp is None else timestamp),
        "key": bytes_value(key),
        "value": bytes_value(value),
        "inner": [e for _, e in inner],
    }
    return data, expected
