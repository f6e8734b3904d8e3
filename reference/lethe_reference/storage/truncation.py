"""A follower cutting its log back to an offset (``UnifiedLog.truncateTo``).

Theory of operation
-------------------
A follower whose log holds records its new leader never had (it led, or followed
a leader, at an older epoch that wrote past what the new leader kept) must drop
them before it fetches again. The fetcher decides the offset
(:mod:`lethe_reference.cluster.fetcher`); this module does the cut, as Kafka's
``UnifiedLog.truncateTo`` does::

    target >= log end offset          nothing to do (False)
    target < first segment's base     truncate fully and restart at target
    otherwise                         delete the segments based above target, cut the
                                      one holding it (``LogSegment.truncateTo``), drop
                                      leader-epoch entries from target on
                                      (``truncateFromEnd``), set the log end offset,
                                      lower the high watermark and recovery point to
                                      it, and rebuild producer and transaction state
                                      from the snapshots and segments below it

The log start offset is left alone unless it lies above the target (then it
becomes the target, ``math.min``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lethe_reference.storage.loader import segment_batch_reader, segment_txn_batches
from lethe_reference.storage.producer_snapshots import rebuild_producer_state
from lethe_reference.storage.transactions import rebuild

if TYPE_CHECKING:
    from lethe_reference.storage.log import PartitionLog

__all__ = ["truncate_to"]

_log = logging.getLogger(__name__)


def truncate_to(log: PartitionLog, target: int) -> bool:
    """Drop every record at or above ``target``; True when something was dropped."""
    if target < 0:
        raise ValueError(f"cannot truncate to a negative offset ({target})")
    if target >= log.log_end_offset:
        return False
    first = log.segments.first
    if first is None or target < first.base_offset:
        log.truncate_fully_and_start_at(target)
        return True
    log.remove_and_delete_segments([s for s in log.segments if s.base_offset > target])
    log.active_segment.truncate_to(target, now_ms=log.clock.now_ms())
    log.epoch_cache.truncate_from_end(target)
    log.reset_end_offset(target)
    rebuild_producer_state(
        log.producer_state,
        log.segments.base_offsets,
        segment_batch_reader(log.segments),
        log_start_offset=log.log_start_offset,
        last_offset=target,
        now_ms=log.clock.now_ms(),
        reload_from_clean_shutdown=False,
    )
    log.transactions, _ = rebuild(map(segment_txn_batches, log.segments), log.log_start_offset)
    log.transactions.on_high_watermark_updated(log.high_watermark)
    _log.info("[%s] Truncated to offset %d", log.name, target)
    return True
