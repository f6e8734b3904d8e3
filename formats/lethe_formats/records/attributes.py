"""Attribute bits of batches, records and legacy messages, as named fields.

Theory of operation
-------------------
Each attributes field is parsed by :class:`~lethe_formats.primitives.BitFields`
into named parts and built back from them; bits no name covers are carried in
``raw`` so that a round trip never loses a reserved bit.

v2 batch attributes (int16, DefaultRecordBatch)::

    bit  15 .. 7   6               5        4              3              2..0
         unused    delete horizon  control  transactional  timestamp type compression
                   (KIP-534)                               1=LogAppendTime 0..4

v0/v1 message attributes (int8, LegacyRecord)::

    bit  7..4    3 (v1 only)      2..0
         unused  timestamp type   compression

v2 record attributes (int8, DefaultRecord) and the KIP-87 extension::

    bit  7..1    0
         unused  explicit tombstone (KIP-87, lethe extension)

Why bit 0 of the *record* attributes for KIP-87
-----------------------------------------------
KIP-87 (never adopted) asked for an explicit tombstone flag so that a record
could be a tombstone and still carry a value. Its original proposal used bit 5
of the old message attributes. In the v2 batch that bit is the control flag,
and bit 6 is KIP-534's delete horizon, so a batch bit is not available; a
batch bit would also make tombstone-ness a property of the batch, while
KIP-87 wants it per record. The v2 record attributes byte is free: Kafka's
``DefaultRecord`` writes it as 0 and ignores it on read, so a stock broker or
client never sees the bit, and lethe can store the flag per record without
changing anything Kafka observes. lethe's builders set it only when a record
spec asks for it (``kip87_tombstone=True``); data written by Kafka always has
it clear. The constant is :data:`lethe_formats.model.KIP87_TOMBSTONE_BIT`.
"""

from __future__ import annotations

from typing import Any

from lethe_formats.model import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    KIP87_TOMBSTONE_BIT,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    Compression,
    TimestampType,
)
from lethe_formats.primitives import BitFields, Int8, Int16

__all__ = [
    "BatchAttributes",
    "LegacyAttributes",
    "RecordAttributes",
    "batch_attributes",
    "legacy_attributes",
]


def _bit(mask: int) -> tuple[int, int]:
    return (mask.bit_length() - 1, 1)


BatchAttributes = BitFields(
    Int16,
    16,
    compression=(0, COMPRESSION_MASK.bit_length()),
    log_append_time=_bit(TIMESTAMP_TYPE_BIT),
    transactional=_bit(TRANSACTIONAL_BIT),
    control=_bit(CONTROL_BIT),
    delete_horizon=_bit(DELETE_HORIZON_BIT),
)

LegacyAttributes = BitFields(
    Int8,
    8,
    compression=(0, COMPRESSION_MASK.bit_length()),
    log_append_time=_bit(TIMESTAMP_TYPE_BIT),
)

RecordAttributes = BitFields(Int8, 8, kip87_tombstone=_bit(KIP87_TOMBSTONE_BIT))


def batch_attributes(
    *,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    transactional: bool = False,
    control: bool = False,
    delete_horizon: bool = False,
) -> int:
    """The int16 attributes value of a v2 batch with these properties."""
    fields: dict[str, Any] = {
        "compression": int(compression),
        "log_append_time": timestamp_type is TimestampType.LOG_APPEND_TIME,
        "transactional": transactional,
        "control": control,
        "delete_horizon": delete_horizon,
    }
    return BatchAttributes.to_int(fields)


def legacy_attributes(
    *,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
) -> int:
    """The int8 attributes value of a v0/v1 message."""
    fields = {
        "compression": int(compression),
        "log_append_time": timestamp_type is TimestampType.LOG_APPEND_TIME,
    }
    return LegacyAttributes.to_int(fields)
