"""The cleaner's key -> latest offset map (Kafka's ``SkimpyOffsetMap``).

Theory of operation
-------------------
Before a cleaning rewrites anything it reads the dirty range
``[firstDirtyOffset, firstUncleanableOffset)`` and remembers, for every key,
the highest offset at which it appears (``Cleaner.buildOffsetMap``). Kafka
stores MD5 hashes of the keys in a fixed buffer (``log.cleaner.dedupe.buffer.
size`` shared by ``log.cleaner.threads``, 24 bytes per slot: a 16-byte hash and
an 8-byte offset) and only fills it to ``log.cleaner.io.buffer.load.factor``
(0.9); a full map ends the round early at the last offset it covers. Here the
keys are kept as bytes in a dict, which gives the same answers (an MD5
collision is not a case worth copying), and the same capacity rule:
:attr:`OffsetMap.max_desired_size` slots, checked *before* every put, even for
a key already present, exactly as ``buildOffsetMapForSegment`` checks
``map.size < maxDesiredMapSize``.

``latest_offset`` is the last offset the map covers (-1 when empty); the
cleaning's end offset is ``latest_offset + 1``.

:func:`build_offset_map` fills it from the dirty segments in order: records of
aborted transactions (known from the ``.txnindex`` entries) and control
batches stay out, so they never shadow a committed record of the same key;
every batch ending at or above the start moves ``latest_offset`` to its last
offset, and a segment read to its end moves it to the next segment's base - 1
(offset gaps left by earlier cleanings). A full map returns at once: the
records not mapped lie above ``latest_offset``, so this round keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.model import BatchHeader

from lethe_reference.cleaner.entries import legacy_records, v2_records
from lethe_reference.cleaner.source import (
    SourceSegment,
    collect_aborted,
    covering,
    whole_segment,
)
from lethe_reference.cleaner.txn_state import TxnState

__all__ = ["HASH_SLOT_BYTES", "OffsetMap", "build_offset_map", "slots_for"]

#: Bytes per slot: an MD5 hash (16) plus an offset (8).
HASH_SLOT_BYTES = 24


def slots_for(dedupe_buffer_bytes: int, threads: int = 1) -> int:
    """Slots of one cleaner thread's map (``dedupeBufferSize / numThreads / 24``)."""
    per_thread = dedupe_buffer_bytes // max(threads, 1)
    return max(per_thread // HASH_SLOT_BYTES, 0)


class OffsetMap:
    """Key -> latest offset, bounded like Kafka's map (module docstring)."""

    def __init__(self, slots: int = 5592405, load_factor: float = 0.9) -> None:
        self.slots = slots
        self.max_desired_size = int(slots * load_factor)
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def is_full(self) -> bool:
        """True when another put would exceed the load factor."""
        return len(self._offsets) >= self.max_desired_size

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[key] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset of ``key``, or -1 (Kafka's ``get`` of a missing key)."""
        return self._offsets.get(key, -1)

    def update_latest_offset(self, offset: int) -> None:
        """Cover offsets up to ``offset`` (the end of a batch or a segment)."""
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1

    @property
    def utilization(self) -> float:
        return len(self._offsets) / self.slots if self.slots else 0.0


def build_offset_map(
    segments: Sequence[SourceSegment], start: int, end: int, offset_map: OffsetMap
) -> None:
    """``buildOffsetMap`` over ``[start, end)`` (first dirty, first uncleanable):
    aborted data and control batches stay out; a full map stops early."""
    dirty = covering(segments, start, end)
    txn = TxnState()
    txn.add_aborted_transactions(collect_aborted(segments, start, end))
    for index, segment in enumerate(dirty):
        following = dirty[index + 1].base_offset if index + 1 < len(dirty) else end
        if _map_segment(segment, start, offset_map, txn):
            return
        offset_map.update_latest_offset(following - 1)


def _map_segment(segment: SourceSegment, start: int, offset_map: OffsetMap, txn: TxnState) -> bool:
    """Add one segment's keys; True when the map filled up."""
    data = segment.data
    for entry in whole_segment(segment):
        header = entry.header
        if not isinstance(header, BatchHeader):
            txn.on_batch_read(None, header.offset)
            for message in legacy_records(data, entry, segment.file):
                if _map_put(offset_map, message.key, message.offset, start):
                    return True
            if header.offset >= start:
                offset_map.update_latest_offset(header.offset)
            continue
        records = v2_records(data, entry, segment.file)
        if header.is_control:
            txn.on_control_batch_read(header, records)
        elif not txn.on_batch_read(header, header.last_offset):
            for record in records:
                offset = header.base_offset + record.offset_delta
                if _map_put(offset_map, record.key, offset, start):
                    return True
        if header.last_offset >= start:
            offset_map.update_latest_offset(header.last_offset)
    return False


def _map_put(offset_map: OffsetMap, key: bytes | None, offset: int, start: int) -> bool:
    if key is None or offset < start:
        return False
    if offset_map.is_full:
        return True
    offset_map.put(key, offset)
    return False
