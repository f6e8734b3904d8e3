"""A segment's offset index, held in memory (Kafka's ``OffsetIndex`` without the mmap).

Theory of operation
-------------------
The ``.index`` file is a sparse, sorted map from offset to the byte position
of a batch in the ``.log``; offsets are stored relative to the segment's base
offset so an entry fits in 8 bytes (layout in ``lethe_formats.storage.index``)::

    +0  int32  offset - baseOffset      (the batch's *last* offset)
    +4  int32  position in .log         (where that batch starts)

Kafka maps the file, preallocated to ``segment.index.bytes``; here the entries
live in two int32 arrays (8 bytes an entry, as in the file: Python lists of
ints took ~80, which under steady load grew the broker by ~20 MB per GB
written) and the segment writes :meth:`OffsetIndex.to_bytes`
(always trimmed, as Kafka leaves the file after a roll or a clean shutdown).
The rules are Kafka's:

* ``max_entries`` = ``segment.index.bytes // 8``; :meth:`is_full` at that count;
* appended offsets strictly increase (``InvalidOffsetException`` otherwise)
  and must be representable relative to the base (``0..Int.MAX``);
* :meth:`lookup` returns the entry with the largest offset <= the target, or
  ``(baseOffset, 0)`` when there is none (``largestLowerBoundSlotFor``);
* :meth:`truncate_to` drops entries with offset >= the given one.

Not task-safe: the owning segment's caller holds the partition lock.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable
from typing import NamedTuple

from lethe_formats.model import OffsetIndexEntry
from lethe_formats.storage.index import encode_offset_index

__all__ = ["DEFAULT_INDEX_BYTES", "INT32_MAX", "OffsetIndex", "OffsetPosition"]

#: ``segment.index.bytes`` default (``log.index.size.max.bytes``): 10 MiB.
DEFAULT_INDEX_BYTES = 10 * 1024 * 1024
INT32_MAX = 0x7FFFFFFF
ENTRY_SIZE = 8


class OffsetPosition(NamedTuple):
    """An absolute offset and the ``.log`` position of the batch it indexes."""

    offset: int
    position: int


class OffsetIndex:
    """In-memory ``.index`` of the segment at ``base_offset`` (see the module docstring)."""

    def __init__(
        self,
        base_offset: int,
        *,
        max_index_bytes: int = DEFAULT_INDEX_BYTES,
        entries: Iterable[OffsetIndexEntry] = (),
    ) -> None:
        self.base_offset = base_offset
        self.max_entries = max_index_bytes // ENTRY_SIZE
        self._relative = array("i")
        self._positions = array("i")
        for entry in entries:
            self._relative.append(entry.relative_offset)
            self._positions.append(entry.position)

    def __len__(self) -> int:
        return len(self._relative)

    @property
    def entries(self) -> tuple[OffsetIndexEntry, ...]:
        """Entries as stored (relative offsets)."""
        return tuple(map(OffsetIndexEntry, self._relative, self._positions))

    @property
    def last_offset(self) -> int:
        """The last indexed absolute offset, or the base offset when empty."""
        return self.base_offset + (self._relative[-1] if self._relative else 0)

    def is_full(self) -> bool:
        return len(self._relative) >= self.max_entries

    def can_append_offset(self, offset: int) -> bool:
        """True when ``offset`` fits as an int32 relative to the base offset."""
        return 0 <= offset - self.base_offset <= INT32_MAX

    def append(self, offset: int, position: int) -> None:
        """Add ``offset -> position``; the offset must exceed the last one."""
        if self.is_full():
            raise ValueError(f"Attempt to append to a full index (size = {len(self)}).")
        if not self.can_append_offset(offset):
            raise ValueError(f"offset {offset} cannot be made relative to {self.base_offset}")
        relative = offset - self.base_offset
        if self._relative and relative <= self._relative[-1]:
            raise ValueError(
                f"Attempt to append an offset {offset} to position {len(self)} no larger than "
                f"the last offset appended ({self.last_offset})."
            )
        self._relative.append(relative)
        self._positions.append(position)

    def lookup(self, target: int) -> OffsetPosition:
        """The entry with the largest offset <= ``target``, else ``(base, 0)``."""
        slot = bisect.bisect_right(self._relative, target - self.base_offset) - 1
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return OffsetPosition(self.base_offset + self._relative[slot], self._positions[slot])

    def fetch_upper_bound_offset(self, start_position: int, fetch_size: int) -> int | None:
        """The offset of the first entry at or past ``start_position + fetch_size``
        (``fetchUpperBoundOffset``): surely beyond a read of that size, though not
        the smallest such offset; None when no entry lies that far."""
        slot = bisect.bisect_left(self._positions, start_position + fetch_size)
        return None if slot == len(self._positions) else self.base_offset + self._relative[slot]

    def truncate_to(self, offset: int) -> None:
        """Remove every entry whose offset is >= ``offset``."""
        keep = bisect.bisect_left(self._relative, offset - self.base_offset)
        del self._relative[keep:], self._positions[keep:]

    def reset(self) -> None:
        del self._relative[:]
        del self._positions[:]

    def to_bytes(self) -> bytes:
        """The trimmed ``.index`` file content."""
        return encode_offset_index(self.entries)
