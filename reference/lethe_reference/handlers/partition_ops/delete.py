"""KIP-107 DeleteRecords on one partition, and the delayed answer (``DelayedDeleteRecords``).

Theory of operation
-------------------
For each requested ``(topic, partition, offset)``, in Kafka's order (kafka-facts 1.2):

1. not in the metadata: UNKNOWN_TOPIC_OR_PARTITION (3);
2. an internal topic (``__consumer_offsets``, ``__transaction_state``):
   INVALID_TOPIC_EXCEPTION (17), "Cannot delete records of internal topic X";
3. not hosted here: 3 again;
4. ``cleanup.policy`` without ``delete``: POLICY_VIOLATION (44);
5. offset -1 becomes the high watermark; a converted offset below 0:
   OFFSET_OUT_OF_RANGE (1);
6. ``maybeIncrementLogStartOffset(offset, ClientRecordDeletion)``: above the HW
   is OFFSET_OUT_OF_RANGE (1); at or below the current log start offset it
   changes nothing and succeeds; otherwise the log start offset moves (storage
   lifts HW and recovery point if needed and trims the leader-epoch cache).
   No file is touched: the retention pass removes whole segments below the new
   log start offset later (kafka-facts 1.3, 1.5).
7. any other (unexpected) exception on the way is caught for this partition
   alone, logged, and answered UNKNOWN_SERVER_ERROR (-1) with low watermark -1
   (``deleteRecordsOnLocalLog``'s ``case t: Throwable``, ``Errors.forException``):
   the other partitions of the request are answered as usual and the connection
   stays open. An injected ``delete-error`` (:mod:`lethe_reference.injected_failures`)
   is such an exception.

A success reports the **low watermark** (:func:`low_watermark`): the minimum
log start offset over the leader and every live follower; on one broker that
is the leader's, so a delete below the current start reports the current one
(golden: 17 answers 19). A failure reports -1. In an in-process cluster the
followers are the last log start offsets they reported in their fetches
(:func:`~lethe_reference.cluster.membership.follower_log_starts`).

**Waiting.** Kafka answers at once unless some error-free partition has a low
watermark below its requested offset (followers lagging). Then the request is
parked as :class:`DelayedDeleteRecords`: every error-free partition starts as
REQUEST_TIMED_OUT (7) with its current low watermark, and is satisfied once its
low watermark reaches the requested offset (rechecked when a follower reports,
or the HW moves); at the deadline whatever is still pending stays 7 with the
low watermark computed on arrival. A partition whose leadership moved away
meanwhile completes with NOT_LEADER_OR_FOLLOWER (6) and -1 (:func:`lookup`).
With one broker the condition never holds; a cluster follower that has not yet
adopted the new log start offset makes it wait.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_records import HIGH_WATERMARK, INVALID_LOW_WATERMARK

from lethe_reference import faults
from lethe_reference.cluster.membership import follower_log_starts
from lethe_reference.handlers.partition_ops.common import (
    error_code_of,
    is_internal,
    lookup,
    partition_exists,
)
from lethe_reference.injected_failures import raise_if_delete_error
from lethe_reference.purgatory import Deferred
from lethe_reference.retention.policies import delete_log_start_offset_breached_segments
from lethe_reference.storage.errors import LogError
from lethe_reference.storage.log import LogStartOffsetIncrementReason

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.storage.log import PartitionLog

__all__ = [
    "DelayedDeleteRecords",
    "PartitionDelete",
    "delayed_required",
    "delete_records_on_partition",
    "low_watermark",
]

TopicPartition = tuple[str, int]
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PartitionDelete:
    """One partition's outcome (``LogDeleteRecordsResult``)."""

    error: ErrorCode
    requested_offset: int = -1
    low_watermark: int = INVALID_LOW_WATERMARK
    message: str | None = None


def low_watermark(log: PartitionLog, follower_log_start_offsets: Iterable[int] = ()) -> int:
    """``Partition.lowWatermarkIfLeader``: min of the leader's and live followers' log start."""
    return min([log.log_start_offset, *follower_log_start_offsets])


def delete_records_on_partition(
    broker: Broker, topic: str, partition: int, offset: int
) -> PartitionDelete:
    """Steps 1-6 of the module docstring."""
    if not partition_exists(broker, topic, partition):
        return PartitionDelete(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if is_internal(topic) and not faults.active(broker, "delete-records-on-internal-topic"):
        return PartitionDelete(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            message=f"Cannot delete records of internal topic {topic}",
        )
    found = lookup(broker, topic, partition)
    if isinstance(found, ErrorCode):
        return PartitionDelete(found)
    log = found
    if not log.settings.delete and not faults.active(
        broker, "delete-records-ignores-cleanup-policy"
    ):
        return PartitionDelete(
            ErrorCode.POLICY_VIOLATION,
            message=f"Records of partition {topic}-{partition} can not be deleted due to the "
            "configured policy",
        )
    converted = log.high_watermark if offset == HIGH_WATERMARK else offset
    if faults.active(broker, "delete-records-minus-one-literal"):
        converted = offset
    if faults.active(broker, "delete-records-above-high-watermark"):
        converted = min(converted, log.high_watermark)
    if converted < 0:
        return PartitionDelete(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            message=f"The offset {converted} for partition {topic}-{partition} is not valid",
        )
    try:
        raise_if_delete_error(broker, topic, partition)
        log.maybe_increment_log_start_offset(
            converted, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION
        )
    except LogError as error:
        return PartitionDelete(error_code_of(error), message=error.message)
    except Exception as error:  # step 7: Kafka's `case t: Throwable`, per partition
        _log.error(
            "Error processing delete records operation on partition %s-%d: %s",
            topic,
            partition,
            error,
        )
        return PartitionDelete(ErrorCode.UNKNOWN_SERVER_ERROR, message=str(error))
    if faults.active(broker, "delete-records-deletes-segments-at-once"):
        delete_log_start_offset_breached_segments(log)
    if faults.active(broker, "low-watermark-is-requested-offset"):
        return PartitionDelete(ErrorCode.NONE, converted, converted)
    followers = follower_log_starts(broker, topic, partition)
    return PartitionDelete(ErrorCode.NONE, converted, low_watermark(log, followers))


def delayed_required(results: Iterable[PartitionDelete]) -> bool:
    """``delayedDeleteRecordsRequired``."""
    return any(r.error is ErrorCode.NONE and r.low_watermark < r.requested_offset for r in results)


Results = dict[TopicPartition, PartitionDelete]
R = TypeVar("R")


class DelayedDeleteRecords(Deferred[R]):
    """A DeleteRecords waiting for low watermarks (module docstring); ``build``
    turns the per-partition results into the response."""

    def __init__(
        self,
        broker: Broker,
        results: Results,
        build: Callable[[Results], R],
        followers: Callable[[str, int], Iterable[int]] | None = None,
    ) -> None:
        super().__init__()
        self.broker = broker
        self.build = build
        self.followers = followers or (lambda t, p: follower_log_starts(broker, t, p))
        self.pending = {tp for tp, r in results.items() if r.error is ErrorCode.NONE}
        self.results = {
            tp: replace(r, error=ErrorCode.REQUEST_TIMED_OUT) if tp in self.pending else r
            for tp, r in results.items()
        }

    def try_complete(self) -> R | None:
        for tp in sorted(self.pending):
            status = self.results[tp]
            found = lookup(self.broker, *tp)
            if isinstance(found, ErrorCode):
                self.results[tp] = replace(status, error=found, low_watermark=INVALID_LOW_WATERMARK)
                self.pending.discard(tp)
                continue
            mark = low_watermark(found, self.followers(*tp))
            if mark >= status.requested_offset:
                self.results[tp] = replace(status, error=ErrorCode.NONE, low_watermark=mark)
                self.pending.discard(tp)
        return None if self.pending else self.build(dict(self.results))

    def on_expire(self) -> R:
        return self.build(dict(self.results))
