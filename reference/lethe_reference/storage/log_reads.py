"""Reading a partition log: Fetch reads and ListOffsets lookups.

Theory of operation
-------------------
**Fetch** (:func:`read`, ``UnifiedLog.read`` + ``LocalLog.read``, kafka-facts 2.3):

* a fetch offset below the log start offset, or above the LEO, raises
  :class:`~.errors.OffsetOutOfRangeError` (the response then carries HW and
  log start offset -1; that is the handler's part);
* the upper bound is the LEO, the HW or the last stable offset
  (:class:`FetchIsolation`); a fetch at or past it returns no records;
* otherwise the read starts at the *whole batch* holding the fetch offset,
  so records below the fetch offset (and below the log start offset) may be
  returned: consumers skip them. It never passes the start of the batch that
  holds the upper bound, and reads on into later segments when the floor
  segment has nothing at or after the offset. ``as_region`` (the Fetch path)
  returns a large read as a file region the server sends with ``sendfile``
  (:mod:`.file_region`); every other reader gets bytes.
* a read_committed read (which stops at the last stable offset) also lists the
  aborted transactions overlapping ``[fetch offset, U)``, U being the first
  offset-index entry past the bytes read, else the next segment's base offset,
  else the LEO (``LocalLog.addAbortedTransactions``), from the ``.txnindex``
  files (:func:`collect_aborted_transactions`).

**ListOffsets** (:func:`fetch_offset_by_timestamp` is ``UnifiedLog.
fetchOffsetByTimestamp``; :func:`offset_for_timestamp` adds the partition's
rules, ``Partition.fetchOffsetForTimestamp`` + ``ReplicaManager``, kafka-facts 2.1):

=========================  =====================================================
timestamp                  result
=========================  =====================================================
-2 EARLIEST, -4 EARLIEST   the log start offset; epoch = the earliest cached epoch
   _LOCAL                  if it starts at or below the log start offset
-1 LATEST                  the last fetchable offset (HW; LSO for read_committed;
                           LEO for replicas), with the leader epoch
-3 MAX_TIMESTAMP           the first record carrying the largest timestamp of the
                           segment with the largest max-so-far; *not* clamped to
                           the log start offset
-5 LATEST_TIERED           offset -1, epoch -1 (no tiered storage)
>= 0                       the first segment whose largest timestamp >= target,
                           then the first record with timestamp >= target and
                           offset >= log start offset
=========================  =====================================================

For -3 and targets >= 0, an answer at or past the last fetchable offset is
dropped: the response says offset -1, timestamp -1 (None here).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lethe_formats.model import NO_TIMESTAMP, AbortedTxn

from lethe_reference import faults
from lethe_reference.storage import segment_reads
from lethe_reference.storage.errors import OffsetOutOfRangeError
from lethe_reference.storage.file_region import FileRegion
from lethe_reference.storage.segment_reads import TimestampAndOffset

if TYPE_CHECKING:
    from lethe_reference.storage.log import PartitionLog
    from lethe_reference.storage.segment import LogSegment

__all__ = [
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "FetchData",
    "FetchIsolation",
    "IsolationLevel",
    "collect_aborted_transactions",
    "fetch_offset_by_timestamp",
    "offset_for_timestamp",
    "read",
]

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5


class FetchIsolation(enum.Enum):
    """How far a read may go: LEO (replicas), HW (consumers), LSO (read_committed)."""

    LOG_END = "log_end"
    HIGH_WATERMARK = "high_watermark"
    TXN_COMMITTED = "txn_committed"


class IsolationLevel(enum.IntEnum):
    """The ListOffsets/Fetch ``IsolationLevel`` field."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1


@dataclass(frozen=True, slots=True)
class FetchData:
    """Records read for one partition (``FetchDataInfo``)."""

    fetch_offset: int
    records: bytes | FileRegion = b""
    first_entry_incomplete: bool = False
    aborted_transactions: tuple[AbortedTxn, ...] = field(default=())


def _upper_bound(log: PartitionLog, isolation: FetchIsolation) -> int:
    if isolation is FetchIsolation.LOG_END:
        return log.log_end_offset
    if isolation is FetchIsolation.HIGH_WATERMARK:
        return log.high_watermark
    return log.last_stable_offset


def _position_of(log: PartitionLog, offset: int) -> tuple[int, int]:
    """(segment base offset, position) of the batch holding ``offset`` (the LEO: the end)."""
    if offset >= log.log_end_offset:
        active = log.active_segment
        return active.base_offset, active.size
    segment = log.segments.floor(offset)
    assert segment is not None  # offset >= log start offset >= first base offset
    found = segment_reads.translate_offset(segment, offset)
    return segment.base_offset, (segment.size if found is None else found.position)


def read(
    log: PartitionLog,
    fetch_offset: int,
    max_bytes: int,
    *,
    isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK,
    min_one_message: bool = True,
    as_region: bool = False,
) -> FetchData:
    """Read from ``fetch_offset``; see the module docstring."""
    if fetch_offset < log.log_start_offset and not faults.active(
        log, "fetch-below-log-start-returns-data"
    ):
        raise OffsetOutOfRangeError(
            f"Received request for offset {fetch_offset} for partition {log.name}, but we only "
            f"have log segments starting from offset: {log.log_start_offset}."
        )
    segment = log.segments.floor(fetch_offset)
    if fetch_offset > log.log_end_offset and faults.active(log, "fetch-above-log-end-empty"):
        return FetchData(fetch_offset)
    if fetch_offset > log.log_end_offset or segment is None:
        raise OffsetOutOfRangeError(
            f"Received request for offset {fetch_offset} for partition {log.name}, but we only "
            f"have log segments upto {log.log_end_offset}."
        )
    upper = _upper_bound(log, isolation)
    if fetch_offset >= upper:
        return FetchData(fetch_offset)
    upper_base, upper_position = _position_of(log, upper)
    while segment is not None:
        max_position = _max_position(segment, upper_base, upper_position)
        found = segment_reads.read(
            segment,
            fetch_offset,
            max_bytes,
            max_position,
            min_one_message=min_one_message,
            as_region=as_region,
        )
        if found is not None:
            aborted: tuple[AbortedTxn, ...] = ()
            if isolation is FetchIsolation.TXN_COMMITTED:
                bound = _aborted_upper_bound(log, segment, found.position, len(found.records))
                aborted = collect_aborted_transactions(log, fetch_offset, bound, segment)
            return FetchData(fetch_offset, found.records, found.first_entry_incomplete, aborted)
        segment = log.segments.higher(segment.base_offset)
    return FetchData(fetch_offset)


def _max_position(segment: LogSegment, upper_base: int, upper_position: int) -> int | None:
    if segment.base_offset < upper_base:
        return segment.size
    if segment.base_offset == upper_base:
        return upper_position
    return None


def _aborted_upper_bound(log: PartitionLog, segment: LogSegment, position: int, size: int) -> int:
    """``LocalLog.addAbortedTransactions``' bound: the first offset-index entry past
    the bytes read, else the next segment's base offset, else the LEO."""
    bound = segment.state.offset_index.fetch_upper_bound_offset(position, size)
    if bound is not None:
        return bound
    following = log.segments.higher(segment.base_offset)
    return log.log_end_offset if following is None else following.base_offset


def collect_aborted_transactions(
    log: PartitionLog, start_offset: int, upper_bound: int, first: LogSegment | None = None
) -> tuple[AbortedTxn, ...]:
    """Aborted transactions overlapping ``[start_offset, upper_bound)``
    (``collectAbortedTransactions``): the ``.txnindex`` entries from segment
    ``first`` (default: the floor segment of ``start_offset``) on, until an entry
    whose last stable offset reaches ``upper_bound``, since every transaction
    aborted later started at or after that offset."""
    found: list[AbortedTxn] = []
    segment = first if first is not None else log.segments.floor(start_offset)
    while segment is not None:
        for txn in segment.aborted_txns:
            if txn.last_offset >= start_offset and txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                return tuple(found)
        segment = log.segments.higher(segment.base_offset)
    return tuple(found)


def fetch_offset_by_timestamp(log: PartitionLog, timestamp: int) -> TimestampAndOffset | None:
    """``UnifiedLog.fetchOffsetByTimestamp`` (no last-fetchable filter)."""
    cache = log.epoch_cache
    if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        earliest = cache.earliest_entry
        usable = earliest is not None and earliest.start_offset <= log.log_start_offset
        epoch = earliest.epoch if earliest is not None and usable else None
        if faults.active(log, "list-offsets-earliest-first-segment-base"):
            return TimestampAndOffset(
                NO_TIMESTAMP, (log.segments.first or log.active_segment).base_offset, epoch
            )
        return TimestampAndOffset(NO_TIMESTAMP, log.log_start_offset, epoch)
    if timestamp == LATEST_TIMESTAMP:
        return TimestampAndOffset(NO_TIMESTAMP, log.log_end_offset, cache.latest_epoch)
    if timestamp == LATEST_TIERED_TIMESTAMP:
        return TimestampAndOffset(NO_TIMESTAMP, -1, -1)
    if timestamp == MAX_TIMESTAMP:
        best = max(log.segments, key=lambda s: s.state.max_timestamp_so_far)  # first of ties
        found = segment_reads.offset_of_max_timestamp(best)
        if found is not None and faults.active(log, "list-offsets-max-timestamp-clamped"):
            return found._replace(offset=max(found.offset, log.log_start_offset))
        return found
    if timestamp < 0:
        raise ValueError(f"unsupported ListOffsets timestamp {timestamp}")
    start = log.log_start_offset
    if faults.active(log, "list-offsets-search-below-log-start"):
        start = (log.segments.first or log.active_segment).base_offset
    for segment in log.segments:
        if segment.largest_timestamp() >= timestamp:
            return segment_reads.find_offset_by_timestamp(segment, timestamp, start)
    return None


def offset_for_timestamp(
    log: PartitionLog,
    timestamp: int,
    *,
    isolation: IsolationLevel | None = IsolationLevel.READ_UNCOMMITTED,
    leader_epoch: int | None = None,
) -> TimestampAndOffset | None:
    """ListOffsets for one partition; None means "offset -1, timestamp -1".

    ``isolation`` None is a replica's request (bound: the LEO); ``leader_epoch``
    is the partition's current epoch, reported for LATEST (default: the
    latest cached epoch).
    """
    if isolation is IsolationLevel.READ_COMMITTED:
        last_fetchable = log.last_stable_offset
    elif isolation is IsolationLevel.READ_UNCOMMITTED:
        last_fetchable = log.high_watermark
    else:
        last_fetchable = log.log_end_offset
    if timestamp == LATEST_TIMESTAMP:
        epoch = leader_epoch if leader_epoch is not None else log.epoch_cache.latest_epoch
        return TimestampAndOffset(NO_TIMESTAMP, last_fetchable, epoch)
    found = fetch_offset_by_timestamp(log, timestamp)
    if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP, LATEST_TIERED_TIMESTAMP):
        return found
    return found if found is not None and found.offset < last_fetchable else None
