"""Segment files waiting for physical removal after ``file.delete.delay.ms``.

Theory of operation
-------------------
Kafka never unlinks a segment the moment it leaves the log: its files are
renamed ``*.deleted`` and a ``delete-file`` task runs ``file.delete.delay.ms``
later (default 60000), so readers that still hold the segment finish first
(``LocalLog.deleteSegmentFiles``). Here that task is a queue ordered by due
time, driven by whoever owns the clock: the broker's scheduler or a test calls
:meth:`PendingDeletions.delete_due_files` with the current time, and every
segment whose due time has come (``due <= now``) loses its files.

A segment's due time is fixed when it is scheduled; later config changes do
not move it, as a scheduled Kafka task does not move. ``.deleted`` files left
by a crash or shutdown are removed by the loader at the next startup
(``LogLoader`` deletes stray ``.deleted`` files). Not task-safe.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from pathlib import Path

from lethe_reference.storage.segment import LogSegment

__all__ = ["PendingDeletions"]


class PendingDeletions:
    """``.deleted`` segments and when their files go; a ``SegmentDeleter``."""

    def __init__(self) -> None:
        self._queue: list[tuple[int, int, LogSegment]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._queue)

    def schedule(self, segments: Sequence[LogSegment], due_ms: int) -> None:
        """Remove ``segments``' files once the clock reaches ``due_ms``."""
        for segment in segments:
            heapq.heappush(self._queue, (due_ms, next(self._seq), segment))

    def next_due_ms(self) -> int | None:
        """When :meth:`delete_due_files` next has work (None: nothing pending)."""
        return self._queue[0][0] if self._queue else None

    def pending_files(self) -> list[Path]:
        """Every ``.deleted`` file still on disk, in due order."""
        return [path for _, _, segment in sorted(self._queue) for path in segment.file_paths()]

    def delete_due_files(self, now_ms: int) -> list[Path]:
        """Remove the files of every segment due at or before ``now_ms``; returns them."""
        removed: list[Path] = []
        while self._queue and self._queue[0][0] <= now_ms:
            _, _, segment = heapq.heappop(self._queue)
            removed += segment.file_paths()
            segment.delete_files()
        return removed
