"""The three retention rules, in Kafka's order (``UnifiedLog.deleteOldSegments``).

Theory of operation
-------------------
:func:`delete_old_segments` runs, for a log whose ``cleanup.policy`` contains
``delete``: log-start-offset breach, then ``retention.bytes``, then
``retention.ms``; for a log without ``delete`` (pure ``compact``) only the
log-start-offset breach (kafka-facts 1.3, 5). The KIP-68 extension's consumed
retention (:mod:`.consumed`, off unless ``retention.commitoffset.enable``) runs
between the log-start-offset breach and ``retention.bytes``, only with ``delete``.
Each rule deletes a prefix of the log through :mod:`.deletable` (HW and
active-segment rules included).

* **Log start offset breach**: a segment goes when the *next* segment's base
  offset is <= the log start offset, i.e. all its offsets lie below it. The
  last segment never qualifies this way (it has no next segment).
* **retention.bytes** (skipped if < 0 or the log is smaller): with
  ``diff = size - retention.bytes``, oldest first, a segment goes while
  ``diff - segment size >= 0`` (then ``diff`` shrinks by it), so the log
  never drops below ``retention.bytes``.
* **retention.ms** (skipped if < 0): a segment goes when
  ``now - largest timestamp > retention.ms`` (strictly), where the largest
  timestamp is the max record timestamp, or the file's mtime when the
  segment has none (``LogSegment.largestTimestamp``).

Returns the number of segments listed for deletion, as Kafka does.
"""

from __future__ import annotations

from lethe_reference import faults
from lethe_reference.retention.consumed import delete_consumed_segments
from lethe_reference.retention.deletable import deletable_segments, delete_segments
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.segment import LogSegment

__all__ = [
    "delete_log_start_offset_breached_segments",
    "delete_old_segments",
    "delete_retention_ms_breached_segments",
    "delete_retention_size_breached_segments",
]


def delete_old_segments(log: PartitionLog, min_committed_offset: int | None = None) -> int:
    """All rules that apply to ``log``'s cleanup policy, in Kafka's order; KIP-68's
    consumed retention (``min_committed_offset``: see :mod:`.consumed`) after the
    log start offset breach, before the forced rules (catalog KIP68-RET-1)."""
    deleted = delete_log_start_offset_breached_segments(log)
    deleted += delete_consumed_segments(log, min_committed_offset)
    if log.settings.delete or faults.active(log, "retention-on-compact-topics"):
        deleted += delete_retention_size_breached_segments(log)
        deleted += delete_retention_ms_breached_segments(log)
    return deleted


def delete_log_start_offset_breached_segments(log: PartitionLog) -> int:
    def breached(segment: LogSegment, following: LogSegment | None) -> bool:
        if faults.active(log, "retention-deletes-straddling-segment"):
            return segment.base_offset < log.log_start_offset
        return following is not None and following.base_offset <= log.log_start_offset

    reason = f"log start offset {log.log_start_offset} breach"
    return delete_segments(log, deletable_segments(log, breached), reason)


def delete_retention_size_breached_segments(log: PartitionLog) -> int:
    retention_bytes = log.settings.retention_bytes
    size = log.size()
    if faults.active(log, "size-retention-ignores-active-segment"):
        size -= log.active_segment.size
    if retention_bytes < 0 or size < retention_bytes:
        return 0
    remaining = size - retention_bytes

    def breached(segment: LogSegment, _following: LogSegment | None) -> bool:
        nonlocal remaining
        if remaining - segment.size < 0:
            return False
        remaining -= segment.size
        return True

    reason = f"log retention size {retention_bytes} breach"
    return delete_segments(log, deletable_segments(log, breached), reason)


def delete_retention_ms_breached_segments(log: PartitionLog) -> int:
    retention_ms = log.settings.retention_ms
    if retention_ms < 0 and not faults.active(log, "retention-minus-one-not-unlimited"):
        return 0
    start_ms = log.clock.now_ms()

    def breached(segment: LogSegment, _following: LogSegment | None) -> bool:
        return start_ms - segment.largest_timestamp() > retention_ms

    reason = f"log retention time {retention_ms}ms breach"
    return delete_segments(log, deletable_segments(log, breached), reason)
