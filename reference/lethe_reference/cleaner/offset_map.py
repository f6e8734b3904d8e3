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
"""

from __future__ import annotations

__all__ = ["HASH_SLOT_BYTES", "OffsetMap", "slots_for"]

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
