"""Reading partitions for a Fetch (``ReplicaManager.readFromLog`` + ``DelayedFetch``).

Theory of operation
-------------------
**One partition** (:func:`read_partition`, ``Partition.fetchRecords`` /
``readRecords``): look the partition up, check ``current_leader_epoch``, note
HW, log start offset, LEO and last stable offset *before* reading, and read
from storage (:func:`lethe_reference.storage.log_reads.read`). Storage returns
bytes (a large read as a file region, sent unread with ``sendfile``:
:mod:`lethe_reference.storage.file_region`) from the start of the batch holding
the fetch offset, within one segment,
up to the byte limit; it may cut the last batch (Kafka slices the file by
bytes and clients drop a partial trailing batch). When even the first batch
does not fit and the partition may not exceed its limit, the records are
dropped (``checkFetchDataInfo``: "replace incomplete message sets with an
empty one").

Errors answer with HW, last stable offset and log start offset all -1 and no
records (``createLogReadResult``); notably a fetch offset below the log start
offset or above the LEO is OFFSET_OUT_OF_RANGE (1) with HW -1 and log start
offset -1, as the golden delete-records case shows. An offset between the HW
and the LEO reads nothing, without error. A negative byte limit (the
request's ``max_bytes`` or a partition's ``partition_max_bytes``) is not
clamped: Kafka passes it down and ``LogSegment.read`` throws
IllegalArgumentException as soon as a segment is actually read, which
``readFromLog`` logs and answers with UNKNOWN_SERVER_ERROR (-1) for that
partition; an offset at or past the upper bound reads no segment, so it
answers normally.

``aborted_transactions`` is null except for read_committed reads that did not
fail, where it lists the aborted transactions the storage's transaction indexes
report (possibly none). A v12+ ``last_fetched_epoch`` is checked against the
leader-epoch cache (``lastOffsetForLeaderEpoch``); a diverging log answers no
records and the epoch and end offset to truncate to.

**Followers** (in-process cluster): a consumer's Fetch v11+ may read a
follower's replica, up to its own HW (Kafka reads locally whenever the request
carries client metadata, i.e. from v11); ``leader_only`` is then False. Older
consumer fetches and replica fetches need the leader (NOT_LEADER_OR_FOLLOWER).

**Many partitions** (:func:`read_partitions`): the response budget
``max_bytes`` shrinks by what each partition returned; each partition reads at
most ``min(partition_max_bytes, budget left)``; until some partition returned
bytes, the first batch is returned even if larger than both limits
(``minOneMessage``), so a consumer always makes progress.

**Waiting** (:func:`fetch_satisfied`, ``DelayedFetch.tryComplete``): a parked
fetch completes when any partition errors now, its fetch offset is past the
end offset (truncation) or on an older segment than the end offset (a roll),
or when the bytes between fetch offset and end offset, each capped at the
partition's ``max_bytes``, add up to ``min_bytes``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lethe_formats.model import AbortedTxn
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference import faults
from lethe_reference.cluster.membership import leader_epoch
from lethe_reference.handlers.partition_ops.common import (
    NO_EPOCH,
    check_leader_epoch,
    error_code_of,
    lookup,
)
from lethe_reference.handlers.partition_ops.fetch_session import RequestedPartition
from lethe_reference.storage import log_reads, segment_reads
from lethe_reference.storage.errors import LogError, OffsetOutOfRangeError
from lethe_reference.storage.file_region import FileRegion
from lethe_reference.storage.log_reads import FetchIsolation

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.storage.log import PartitionLog

__all__ = ["PartitionRead", "fetch_satisfied", "read_partition", "read_partitions"]

TopicPartition = tuple[str, int]
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PartitionRead:
    """One partition's Fetch answer (``LogReadResult``)."""

    error: ErrorCode
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    #: a large read is a file region the server sends unread (``sendfile``)
    records: bytes | FileRegion = b""
    aborted_transactions: tuple[AbortedTxn, ...] | None = None
    #: ``(epoch, end offset)`` when the fetcher's log diverged, else None.
    diverging_epoch: tuple[int, int] | None = None


def _end_offset(log: PartitionLog, isolation: FetchIsolation) -> int:
    if isolation is FetchIsolation.LOG_END:
        return log.log_end_offset
    if isolation is FetchIsolation.HIGH_WATERMARK:
        return log.high_watermark
    return log.last_stable_offset


def _diverging(log: PartitionLog, requested: RequestedPartition) -> tuple[int, int] | None:
    """``readRecords``' last-fetched-epoch check; raises out-of-range as Kafka does."""
    epoch, end = log.epoch_cache.end_offset_for(requested.last_fetched_epoch, log.log_end_offset)
    if epoch < 0 or end < 0:
        raise OffsetOutOfRangeError(
            "Could not determine the end offset of the last fetched epoch "
            f"{requested.last_fetched_epoch} from the request"
        )
    if requested.fetch_offset < log.log_start_offset:
        raise OffsetOutOfRangeError(
            f"Received request for offset {requested.fetch_offset} for partition {log.name}, "
            f"but we only have log segments in the range {log.log_start_offset} to "
            f"{log.log_end_offset}."
        )
    if epoch < requested.last_fetched_epoch or end < requested.fetch_offset:
        return epoch, end
    return None


def read_partition(
    broker: Broker,
    tp: TopicPartition,
    requested: RequestedPartition,
    limit: int,
    *,
    isolation: FetchIsolation,
    min_one_message: bool,
    leader_only: bool = True,
) -> PartitionRead:
    """Read one partition (module docstring); never raises for bad offsets."""
    found = lookup(broker, *tp, leader_only=leader_only)
    if isinstance(found, ErrorCode):
        return PartitionRead(found)
    epoch_error = check_leader_epoch(requested.current_leader_epoch, leader_epoch(broker, *tp))
    if epoch_error is not ErrorCode.NONE:
        return PartitionRead(epoch_error)
    log = found
    hw, start, stable = log.high_watermark, log.log_start_offset, log.last_stable_offset
    max_bytes = min(requested.max_bytes, limit)
    try:
        if requested.last_fetched_epoch != NO_EPOCH:
            diverging = _diverging(log, requested)
            if diverging is not None:
                return PartitionRead(ErrorCode.NONE, hw, stable, start, diverging_epoch=diverging)
        data = log_reads.read(
            log,
            requested.fetch_offset,
            max_bytes,
            isolation=isolation,
            min_one_message=min_one_message,
            as_region=True,
        )
    except LogError as error:
        if faults.active(broker, "fetch-out-of-range-keeps-offsets"):
            return PartitionRead(error_code_of(error), hw, stable, start)
        return PartitionRead(error_code_of(error))
    except OSError:
        return PartitionRead(ErrorCode.KAFKA_STORAGE_ERROR)
    except ValueError as error:  # a negative max size (module docstring)
        _log.error(
            "Error processing fetch with max size %d on partition %s-%d: %s", max_bytes, *tp, error
        )
        return PartitionRead(ErrorCode.UNKNOWN_SERVER_ERROR)
    if data.first_entry_incomplete:
        return PartitionRead(ErrorCode.NONE, hw, stable, start)
    committed = isolation is FetchIsolation.TXN_COMMITTED
    aborted = tuple(data.aborted_transactions) if committed else None
    return PartitionRead(ErrorCode.NONE, hw, stable, start, data.records, aborted)


def read_partitions(
    broker: Broker,
    partitions: Sequence[tuple[TopicPartition, RequestedPartition]],
    max_bytes: int,
    *,
    isolation: FetchIsolation,
    leader_only: bool = True,
) -> list[PartitionRead]:
    """``readFromLog``: read in order within the response budget ``max_bytes``."""
    budget, min_one_message = max_bytes, True
    results = []
    for tp, requested in partitions:
        result = read_partition(
            broker,
            tp,
            requested,
            budget,
            isolation=isolation,
            min_one_message=min_one_message,
            leader_only=leader_only,
        )
        if result.records:
            min_one_message = False
        budget = max(0, budget - len(result.records))
        results.append(result)
    return results


def _position(log: PartitionLog, offset: int) -> tuple[int, int]:
    """(segment base offset, byte position) of the batch holding ``offset``."""
    if offset >= log.log_end_offset:
        return log.active_segment.base_offset, log.active_segment.size
    segment = log.segments.floor(offset)
    if segment is None:
        return -1, 0
    found = segment_reads.translate_offset(segment, offset)
    return segment.base_offset, segment.size if found is None else found.position


def fetch_satisfied(
    broker: Broker,
    partitions: Sequence[tuple[TopicPartition, RequestedPartition]],
    min_bytes: int,
    *,
    isolation: FetchIsolation,
    leader_only: bool = True,
) -> bool:
    """``DelayedFetch.tryComplete`` (module docstring)."""
    accumulated = 0
    for tp, requested in partitions:
        found = lookup(broker, *tp, leader_only=leader_only)
        if isinstance(found, ErrorCode):
            return True
        epoch = leader_epoch(broker, *tp)
        if check_leader_epoch(requested.current_leader_epoch, epoch) is not ErrorCode.NONE:
            return True
        end = _end_offset(found, isolation)
        offset = requested.fetch_offset
        if offset > end:
            return True
        if offset == end:
            continue
        fetch_base, fetch_position = _position(found, offset)
        end_base, end_position = _position(found, end)
        if fetch_base < end_base:
            return True
        accumulated += min(max(0, end_position - fetch_position), requested.max_bytes)
    return accumulated >= min_bytes
