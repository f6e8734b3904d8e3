"""The rules every segment deletion shares (``UnifiedLog.deletableSegments`` / ``deleteSegments``).

Theory of operation
-------------------
A deletion policy is a predicate ``(segment, next segment or None) -> bool``.
:func:`deletable_segments` walks the segments oldest first and stops at the
first one that fails (so only a *prefix* of the log is ever deleted). A
segment qualifies only when

* the high watermark has reached its upper bound: the next segment's base
  offset, or the LEO for the last segment (so the log start offset can never
  pass the HW). The predicate is not even asked otherwise, which matters for
  the size policy, whose predicate counts down as it accepts segments;
* it is not an empty last (active) segment.

:func:`delete_segments` then removes them (``deleteSegments``):

1. if *every* segment is deletable, a new empty active segment is rolled
   first (a log always has one), and if the roll replaced an empty segment
   that was on the list, that one is dropped from it;
2. the log start offset moves to the base offset of the first remaining
   segment (reason ``SegmentDeletion``), before the segments disappear;
3. the segments leave the log and their files are renamed ``.deleted``; the
   log's deleter removes them after ``file.delete.delay.ms``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable

from lethe_reference import faults
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.segment import LogSegment

__all__ = ["Predicate", "deletable_segments", "delete_segments"]

Predicate = Callable[[LogSegment, LogSegment | None], bool]
_log = logging.getLogger(__name__)


def deletable_segments(log: PartitionLog, predicate: Predicate) -> list[LogSegment]:
    """The oldest segments, in order, that ``predicate`` and the shared rules accept."""
    segments = list(log.segments)
    if faults.active(log, "retention-not-prefix"):  # a filter over the inactive segments
        pairs = itertools.pairwise(segments)
        return [s for s, n in pairs if log.high_watermark >= n.base_offset and predicate(s, n)]
    deletable: list[LogSegment] = []
    for index, segment in enumerate(segments):
        following = segments[index + 1] if index + 1 < len(segments) else None
        last_and_empty = following is None and segment.size == 0
        upper_bound = following.base_offset if following is not None else log.log_end_offset
        accepted = log.high_watermark >= upper_bound and predicate(segment, following)
        if following is None and faults.active(log, "retention-keeps-active-segment"):
            break
        if not accepted or last_and_empty:
            break
        deletable.append(segment)
    return deletable


def delete_segments(log: PartitionLog, deletable: list[LogSegment], reason: str) -> int:
    """Remove ``deletable`` from ``log`` (module docstring); returns how many were listed."""
    if not deletable:
        return 0
    doomed = list(deletable)
    if len(log.segments) == len(deletable):
        rolled = log.roll()
        if doomed[-1].base_offset == rolled.base_offset:
            doomed.pop()
    if doomed:
        following = log.segments.higher(doomed[-1].base_offset)
        assert following is not None  # a roll above guarantees a later segment
        if not faults.active(log, "log-start-offset-not-moved-by-retention"):
            log.maybe_increment_log_start_offset(
                following.base_offset, LogStartOffsetIncrementReason.SEGMENT_DELETION
            )
        _log.info("[%s] Deleting segments due to %s: %s", log.name, reason, doomed)
        log.remove_and_delete_segments(doomed)
    return len(deletable)
