"""What counts as a tombstone in a log, and which record attribute bits a rewrite keeps.

Theory of operation
-------------------
Kafka (kafka-facts 4.2, 6) has one rule: a record with a key and a **null
value** is a tombstone (valueLength -1); its attributes byte is written as 0
and never read, and headers play no part. lethe's KIP-87 extension adds an
explicit flag, bit 0 of a magic-2 record's own attributes byte (catalog
KIP87-BIT-1), switched on per topic by ``tombstone.flag.enable``::

    record (magic 2):  length | attributes | tsDelta | offDelta | key | value | headers
                                 bit 0 = KIP-87 tombstone (only if the topic enables it)

:func:`tombstone_predicate` builds the cleaner's ``is_tombstone(record, magic)``
from a log's settings, decided per record (KIP87-CLN-4):

=====================================  ===============================================
log                                    tombstone
=====================================  ===============================================
flag off, or no ``compact`` policy     null value (Kafka)
flag on and compacted, magic 2         null value **or** bit 0 (KIP87-CLN-1, CLN-2)
flag on and compacted, magic 0/1       null value (KIP87-CLN-3: no record attributes)
=====================================  ===============================================

Headers never count (KIP87-CLN-8). A topic without ``compact`` is never
cleaned, and the flag then deletes nothing (KIP87-CLN-7); the predicate says
"Kafka's rule" there too, so nothing depends on the cleaner checking first.

:func:`record_attribute_mask` is what every rewrite of a record (validator
recompression, cleaner rebuild) copies from the old attributes byte: 0 as in
Kafka (``DefaultRecord.writeTo`` writes 0), bit 0 with the flag on (KIP87-BIT-4,
BIT-5).
"""

from __future__ import annotations

from collections.abc import Callable

from lethe_formats.model import KIP87_TOMBSTONE_BIT, LegacyMessage, Record

from lethe_reference.storage.settings import LogSettings

__all__ = [
    "TombstonePredicate",
    "kafka_is_tombstone",
    "kip87_is_tombstone",
    "record_attribute_mask",
    "tombstone_predicate",
]

#: ``is_tombstone(record, magic)``, the cleaner's hook.
TombstonePredicate = Callable[[Record | LegacyMessage, int], bool]

_FLAGGED_MAGIC = 2


def kafka_is_tombstone(record: Record | LegacyMessage, magic: int) -> bool:
    """Kafka's rule: a null value, whatever the magic, attributes or headers."""
    return record.value is None


def kip87_is_tombstone(record: Record | LegacyMessage, magic: int) -> bool:
    """A null value, or bit 0 of a magic-2 record's attributes (the KIP-87 flag)."""
    if record.value is None:
        return True
    return (
        magic >= _FLAGGED_MAGIC
        and isinstance(record, Record)
        and bool(record.attributes & KIP87_TOMBSTONE_BIT)
    )


def _flag_in_effect(settings: LogSettings) -> bool:
    return settings.tombstone_flag_enable and settings.compact


def tombstone_predicate(settings: LogSettings) -> TombstonePredicate:
    """The tombstone rule of a log with these settings (table in the module docstring)."""
    return kip87_is_tombstone if _flag_in_effect(settings) else kafka_is_tombstone


def record_attribute_mask(settings: LogSettings) -> int:
    """Record attribute bits a rewrite keeps: bit 0 with the flag on, else none (Kafka)."""
    return KIP87_TOMBSTONE_BIT if settings.tombstone_flag_enable else 0
