"""The magic-2 record batch (DefaultRecordBatch): normative schema, decode, encode.

Byte layout (offsets from the start of the batch)::

    offset size field                 notes
    0      8    baseOffset int64
    8      4    batchLength int32     bytes after this field (total - 12)
    12     4    partitionLeaderEpoch  not covered by the CRC
    16     1    magic int8            2
    17     4    crc uint32            CRC-32C over [21, end)
    21     2    attributes int16      see records/attributes.py
    23     4    lastOffsetDelta int32
    27     8    baseTimestamp int64   or the delete horizon when attribute bit 6 is set
    35     8    maxTimestamp int64
    43     8    producerId int64
    51     2    producerEpoch int16
    53     4    baseSequence int32
    57     4    recordsCount int32
    61     ...  records               one compressed block if compression != 0

Theory of operation
-------------------
:data:`RecordBatchSchema` is the normative definition. The batch length is a
bounded :class:`~lethe_formats.primitives.SizePrefixed` (at least 49, never
more than the bytes present), the CRC a
:class:`~lethe_formats.primitives.Checksummed` over the rest of the batch, the
record count a ``Rebuild`` of the records, and the records area either the
records themselves or one :class:`~lethe_formats.primitives.Compressed` block
holding them. Grouping levels are named ``_batch`` and ``_body`` so that field
names in errors stay flat (``attributes``, ``records.key``).

:func:`decode_batch` parses one batch from a window of the buffer anchored at
its position, so every error carries the absolute byte position; it never
copies more than the batch's own bytes. :func:`encode_batch` rebuilds length,
count and CRC, and compresses the records per the attributes.
"""

from __future__ import annotations

import struct
from typing import Any

from construct import ConstructError, IfThenElse, Rebuild, Struct, Tell, len_, this

from lethe_formats.compression import Compressed, resolve_codec
from lethe_formats.crc import crc32c
from lethe_formats.errors import (
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
)
from lethe_formats.model import (
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    BatchHeader,
    RecordBatch,
)
from lethe_formats.primitives import (
    Checksummed,
    CountedArray,
    Ensure,
    ExpectEnd,
    Int8,
    Int16,
    Int32,
    Int64,
    SizePrefixed,
    UInt32,
    Window,
)
from lethe_formats.records.attributes import BatchAttributes
from lethe_formats.records.record import (
    RecordSchema,
    record_from_container,
    record_to_container,
)

__all__ = ["MAGIC", "RecordBatchSchema", "decode_batch", "encode_batch"]

MAGIC = 2
Buffer = bytes | bytearray | memoryview


def _codec(context: Any) -> int:
    return BatchAttributes.part(context.attributes, "compression")


def _check_codec(context: Any) -> str | None:
    try:
        resolve_codec(_codec(context), MAGIC)
    except UnsupportedCompressionError as error:
        return error.message
    return None


def _check_magic(context: Any) -> str | None:
    if context.magic != MAGIC:
        return f"magic {context.magic} where a v2 batch was expected"
    return None


_LEFTOVER = "Incorrect declared batch size, records still remaining in file"


def _records_area() -> Any:
    """The records themselves, or one compressed block holding them."""
    records = CountedArray(
        this.records_count,
        RecordSchema,
        what="record count",
        truncated=InvalidRecordError,
        at=lambda context: context._records_count_at,
    )
    return IfThenElse(
        lambda context: _codec(context) == 0,
        records,
        Compressed(records, _codec, MAGIC, leftover=_LEFTOVER),
    )


#: Bytes [21, end): everything the CRC covers.
BatchBody = Struct(
    "attributes" / BatchAttributes,
    Ensure(_check_codec, UnsupportedCompressionError, "attributes", back=2),
    "last_offset_delta" / Int32,
    "base_timestamp" / Int64,
    "max_timestamp" / Int64,
    "producer_id" / Int64,
    "producer_epoch" / Int16,
    "base_sequence" / Int32,
    "_records_count_at" / Tell,
    "records_count" / Rebuild(Int32, len_(this.records)),
    "records" / _records_area(),
    ExpectEnd(InvalidRecordError, _LEFTOVER),
)

#: The whole batch, baseOffset to the last record byte.
RecordBatchSchema = Struct(
    "base_offset" / Int64,
    "_batch"
    / SizePrefixed(
        Int32,
        Struct(
            "partition_leader_epoch" / Int32,
            "magic" / Int8,
            Ensure(_check_magic, UnsupportedMagicError, "magic", back=1),
            "_body" / Checksummed(UInt32, crc32c, BatchBody),
        ),
        field="batch_length",
        minimum=RECORD_BATCH_OVERHEAD - LOG_OVERHEAD,
        overrun=TruncatedError,
        leftover=InvalidRecordError,
    ),
)


def _window(data: Buffer, position: int) -> Window:
    """The batch's own bytes (at most), anchored at ``position``.

    The claimed length only bounds the copy; the schema re-checks it and
    raises the typed error when it is negative or beyond the data.
    """
    end = len(data)
    if position + LOG_OVERHEAD <= end:
        (length,) = struct.unpack_from(">i", data, position + 8)
        if length >= 0:
            end = min(end, position + LOG_OVERHEAD + length)
    return Window(bytes(data[position:end]), position)


def decode_batch(
    data: Buffer, position: int = 0, *, file: str | None = None, verify_crc: bool = True
) -> RecordBatch:
    """Decode the v2 batch starting at byte ``position`` of ``data``."""
    if not 0 <= position <= len(data):
        raise TruncatedError(
            f"position {position} is outside the data", file=file, position=position, field="batch"
        )
    window = _window(data, position)
    try:
        parsed = RecordBatchSchema.parse_stream(window, verify_crc=verify_crc)
    except FormatError as error:
        raise error.at(file=file) from None
    except ConstructError as error:
        raise CorruptRecordError(
            f"undecodable batch: {error}", file=file, position=position, field="batch"
        ) from None
    return _to_model(parsed, window.tell() - position - LOG_OVERHEAD)


def _to_model(parsed: Any, batch_length: int) -> RecordBatch:
    inner = parsed._batch
    body = inner._body
    header = BatchHeader(
        base_offset=parsed.base_offset,
        batch_length=batch_length,
        partition_leader_epoch=inner.partition_leader_epoch,
        magic=inner.magic,
        crc=body.crc,
        attributes=int(body.attributes.raw),
        last_offset_delta=body.last_offset_delta,
        base_timestamp=body.base_timestamp,
        max_timestamp=body.max_timestamp,
        producer_id=body.producer_id,
        producer_epoch=body.producer_epoch,
        base_sequence=body.base_sequence,
        records_count=body.records_count,
    )
    return RecordBatch(header, tuple(record_from_container(r) for r in body.records))


def encode_batch(batch: RecordBatch, *, snappy_framing: str = "xerial") -> bytes:
    """Bytes of ``batch``: length, record count and CRC recomputed, records
    compressed with the codec in the attributes (``snappy_framing`` "raw" as
    librdkafka writes, or "xerial" as the Java client writes)."""
    header = batch.header
    if header.magic != MAGIC:
        raise ValueError(f"encode_batch writes magic 2, not {header.magic}")
    resolve_codec(header.attributes & 0x07, MAGIC)
    body = {
        "attributes": header.attributes,
        "last_offset_delta": header.last_offset_delta,
        "base_timestamp": header.base_timestamp,
        "max_timestamp": header.max_timestamp,
        "producer_id": header.producer_id,
        "producer_epoch": header.producer_epoch,
        "base_sequence": header.base_sequence,
        "records": [record_to_container(r) for r in batch.records],
    }
    obj = {
        "base_offset": header.base_offset,
        "_batch": {
            "partition_leader_epoch": header.partition_leader_epoch,
            "magic": MAGIC,
            "_body": body,
        },
    }
    return bytes(RecordBatchSchema.build(obj, snappy_framing=snappy_framing))
