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

from typing import TYPE_CHECKING, Any

from construct import Adapter, Construct, Container

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
from lethe_formats.primitives import Int8, Int16

__all__ = [
    "BatchAttributes",
    "BitFields",
    "LegacyAttributes",
    "RecordAttributes",
    "batch_attributes",
    "legacy_attributes",
]

# Construct's runtime Adapter is not generic; its stubs are.
if TYPE_CHECKING:
    _BitsAdapter = Adapter[int, int, Container[Any], Any]
else:
    _BitsAdapter = Adapter


class BitFields(_BitsAdapter):
    """Named bit ranges of an integer field: ``name=(lowest_bit, width)``.

    Parsing gives a Container with one int per name (width-1 fields as bools)
    plus ``raw``, the whole value; building ORs the names back together, and
    bits no name covers are taken from ``raw`` so that reserved bits survive a
    round trip. Signed fields are handled through their unsigned image.
    """

    def __init__(self, subcon: Construct[Any, Any], width: int, **fields: tuple[int, int]) -> None:
        super().__init__(subcon)
        self.width = width
        self.fields = fields

    def _decode(self, obj: int, context: Any, path: str | None) -> Container[Any]:
        unsigned = obj & ((1 << self.width) - 1)
        out = Container(raw=obj)
        for name, (low, size) in self.fields.items():
            value = (unsigned >> low) & ((1 << size) - 1)
            out[name] = bool(value) if size == 1 else value
        return out

    def _encode(self, obj: Any, context: Any, path: str) -> int:
        return self.to_int(obj)

    def to_int(self, obj: Any) -> int:
        """The signed value of an int or a container/dict of named bits.

        Starts from ``raw`` (when given) and overrides each named part present.
        """
        if isinstance(obj, int):
            return obj
        mask = (1 << self.width) - 1
        unsigned = int(obj.get("raw", 0)) & mask
        for name, (low, size) in self.fields.items():
            if name not in obj:
                continue
            value = int(obj[name])
            if not 0 <= value < (1 << size):
                raise ValueError(f"{name}={value} does not fit in {size} bits")
            unsigned = (unsigned & ~(((1 << size) - 1) << low)) | (value << low)
        if unsigned >= 1 << (self.width - 1):
            return unsigned - (1 << self.width)
        return unsigned

    def part(self, obj: Any, name: str) -> int:
        """One named part of an int or container (the build side sees either)."""
        low, size = self.fields[name]
        return (self.to_int(obj) >> low) & ((1 << size) - 1)

    def from_int(self, value: int) -> Container[Any]:
        """The named bits of ``value``."""
        return self._decode(value, None, None)


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
