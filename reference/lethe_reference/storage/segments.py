"""The segments of one partition, ordered by base offset (Kafka's ``LogSegments``).

Theory of operation
-------------------
A partition's log is a run of segments whose base offsets increase; the last
one is the *active* segment, the only one appended to. Lookups are by offset:
the segment holding offset ``o`` is the one with the greatest base offset
<= ``o`` (:meth:`LogSegments.floor`). Base offsets are kept in a sorted list
beside a dict, so lookups are ``bisect`` and adding at the end (the common
case, a roll) is O(1).

:meth:`LogSegments.covering` is ``values(from, to)``: every segment that may
hold an offset in ``[from, to)``, starting with the floor segment of ``from``.
Not task-safe: the caller holds the partition lock.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from lethe_reference.storage.segment import LogSegment

__all__ = ["LogSegments"]


class LogSegments:
    """Base offset -> :class:`LogSegment`, ordered."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._by_base: dict[int, LogSegment] = {}

    def __len__(self) -> int:
        return len(self._bases)

    def __iter__(self) -> Iterator[LogSegment]:
        return (self._by_base[base] for base in list(self._bases))

    def __contains__(self, base_offset: object) -> bool:
        return base_offset in self._by_base

    @property
    def base_offsets(self) -> list[int]:
        return list(self._bases)

    def add(self, segment: LogSegment) -> None:
        """Add or replace the segment at its base offset."""
        base = segment.base_offset
        if base not in self._by_base:
            if not self._bases or base > self._bases[-1]:
                self._bases.append(base)
            else:
                bisect.insort(self._bases, base)
        self._by_base[base] = segment

    def remove(self, base_offset: int) -> LogSegment | None:
        segment = self._by_base.pop(base_offset, None)
        if segment is not None:
            self._bases.remove(base_offset)
        return segment

    def get(self, base_offset: int) -> LogSegment | None:
        return self._by_base.get(base_offset)

    @property
    def first(self) -> LogSegment | None:
        return self._by_base[self._bases[0]] if self._bases else None

    @property
    def active(self) -> LogSegment:
        """The last segment; a loaded log always has one."""
        if not self._bases:
            raise LookupError("the log has no segments")
        return self._by_base[self._bases[-1]]

    def floor(self, offset: int) -> LogSegment | None:
        """The segment with the greatest base offset <= ``offset``."""
        slot = bisect.bisect_right(self._bases, offset) - 1
        return self._by_base[self._bases[slot]] if slot >= 0 else None

    def higher(self, base_offset: int) -> LogSegment | None:
        """The segment right after ``base_offset`` (strictly greater base)."""
        slot = bisect.bisect_right(self._bases, base_offset)
        return self._by_base[self._bases[slot]] if slot < len(self._bases) else None

    def covering(self, start: int, end: int) -> list[LogSegment]:
        """Segments that may hold offsets in ``[start, end)`` (``values(from, to)``)."""
        if start == end:
            return []
        if end < start:
            raise ValueError(f"Invalid log segment range: {start} is greater than {end}")
        slot = max(bisect.bisect_right(self._bases, start) - 1, 0)
        stop = bisect.bisect_left(self._bases, end)
        return [self._by_base[base] for base in self._bases[slot:stop]]

    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self)

    def clear(self) -> None:
        self._bases.clear()
        self._by_base.clear()
