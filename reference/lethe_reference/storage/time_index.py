"""A segment's time index, held in memory (Kafka's ``TimeIndex`` without the mmap).

Theory of operation
-------------------
Each ``.timeindex`` entry says "the largest timestamp seen so far in this
segment is T, first reached in the batch whose last offset is O" (12 bytes,
layout in ``lethe_formats.storage.index``)::

    +0  int64  timestamp                (max so far)
    +8  int32  O - baseOffset

Kafka's rules, kept here:

* :meth:`TimeIndex.maybe_append` writes only when the timestamp is *greater*
  than the last entry's; the "last entry" of an empty index is
  ``(-1, baseOffset)``, so data without timestamps leaves the index empty.
  A smaller timestamp or offset than the last entry is a programming error;
* the index is full one entry early (``entries >= maxEntries - 1``): the last
  slot is kept for the final entry a segment appends when it becomes inactive
  or closes (``skip_full_check=True``);
* :meth:`lookup` returns the entry with the largest timestamp <= the target,
  or ``(-1, baseOffset)`` when there is none.

Not task-safe: the owning segment's caller holds the partition lock.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable
from typing import NamedTuple

from lethe_formats.model import NO_TIMESTAMP, TimeIndexEntry
from lethe_formats.storage.index import encode_time_index

from lethe_reference.storage.offset_index import DEFAULT_INDEX_BYTES

__all__ = ["TimeIndex", "TimestampOffset"]

ENTRY_SIZE = 12


class TimestampOffset(NamedTuple):
    """A timestamp and an absolute offset."""

    timestamp: int
    offset: int


class TimeIndex:
    """In-memory ``.timeindex`` of the segment at ``base_offset`` (see the module docstring)."""

    def __init__(
        self,
        base_offset: int,
        *,
        max_index_bytes: int = DEFAULT_INDEX_BYTES,
        entries: Iterable[TimeIndexEntry] = (),
    ) -> None:
        self.base_offset = base_offset
        self.max_entries = max_index_bytes // ENTRY_SIZE
        self._timestamps = array("q")
        self._relative = array("i")
        for entry in entries:
            self._timestamps.append(entry.timestamp)
            self._relative.append(entry.relative_offset)

    def __len__(self) -> int:
        return len(self._timestamps)

    @property
    def entries(self) -> tuple[TimeIndexEntry, ...]:
        """Entries as stored (relative offsets)."""
        return tuple(map(TimeIndexEntry, self._timestamps, self._relative))

    @property
    def last_entry(self) -> TimestampOffset:
        """The last entry (absolute offset), or ``(-1, baseOffset)`` when empty."""
        if not self._timestamps:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return TimestampOffset(self._timestamps[-1], self.base_offset + self._relative[-1])

    def is_full(self) -> bool:
        return len(self._timestamps) >= self.max_entries - 1

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        """Append ``(timestamp, offset)`` if the timestamp exceeds the last entry's."""
        if not skip_full_check and self.is_full():
            raise ValueError(f"Attempt to append to a full time index (size = {len(self)}).")
        last = self.last_entry
        if self._timestamps and offset < last.offset:
            raise ValueError(f"Attempt to append an offset ({offset}) no larger than {last.offset}")
        if self._timestamps and timestamp < last.timestamp:
            raise ValueError(f"Attempt to append a timestamp ({timestamp}) below {last.timestamp}")
        if timestamp > last.timestamp:
            self._timestamps.append(timestamp)
            self._relative.append(offset - self.base_offset)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= the target, else ``(-1, baseOffset)``."""
        slot = bisect.bisect_right(self._timestamps, target_timestamp) - 1
        if slot < 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return TimestampOffset(self._timestamps[slot], self.base_offset + self._relative[slot])

    def truncate_to(self, offset: int) -> None:
        """Remove every entry whose offset is >= ``offset``."""
        keep = bisect.bisect_left(self._relative, offset - self.base_offset)
        del self._timestamps[keep:], self._relative[keep:]

    def reset(self) -> None:
        del self._timestamps[:]
        del self._relative[:]

    def to_bytes(self) -> bytes:
        """The trimmed ``.timeindex`` file content."""
        return encode_time_index(self.entries)
