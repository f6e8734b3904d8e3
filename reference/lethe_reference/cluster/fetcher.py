"""A follower replicating one partition from its leader (``ReplicaFetcherThread``), sans-IO.

Theory of operation
-------------------
A :class:`PartitionFetcher` sends the leader real Fetch requests, as Kafka
4.0's replica fetcher does at Fetch v17: ``ReplicaState`` carries the
follower's id (a replica fetch, read up to the LEO), the topic is named by id,
``CurrentLeaderEpoch`` is the epoch the follower follows, ``FetchOffset`` its
LEO and ``LogStartOffset`` its own log start offset (which the leader uses in
the low watermark). The request goes through the leader broker's own
:func:`~lethe_reference.handlers.dispatch.dispatch`, in process, so every rule
of the Fetch handler applies, long poll included::

    send Fetch(max_wait 500 ms, min_bytes 1)
      answered now  -> process, send the next one at once
      parked        -> the leader's fetch purgatory completes it when data is
                       appended or at the deadline -> process, send the next one
      error         -> retry after replica.fetch.backoff.ms (a scheduler task)

OFFSET_OUT_OF_RANGE (the replica was away while its leader deleted records
past its end): ask the leader's earliest offset with a replica's ListOffsets
and, when it lies beyond this replica's LEO, truncate fully and restart there
(``fetchOffsetAndTruncate`` / ``truncateFullyAndStartAt``).

Processing a partition's answer (``processPartitionData``): append the records
with their offsets (``appendAsFollower``; an empty replica whose first batch
starts below its end, because the leader's log start offset falls inside that
batch, restarts at the batch's base offset first, as Kafka does), set the HW
to ``min(leader's HW, own LEO)``, then raise the log start offset to the leader's
(``maybeIncrementLogStartOffset(leaderLogStartOffset, LeaderOffsetIncremented)``:
max of the two; segments wholly below it go at the follower's next retention
pass, as on the leader).

Because a parked fetch completes inside the request that appended the data,
a follower has the records (and the leader its new HW, from the follower's
next fetch) before that Produce is answered: replication needs no clock
advance, while everything that waits in Kafka (the long poll, the retry
backoff) waits on the broker clock, so a virtual clock keeps it
deterministic.

Truncation (KIP-101/279, and KIP-595's truncation on fetch, which Kafka 4.0's
``RemoteLeaderEndPoint`` uses: ``isTruncationOnFetchSupported``). Each Fetch sends
``LastFetchedEpoch``, the latest epoch in this replica's leader-epoch cache. The
leader looks that epoch up as OffsetForLeaderEpoch does (``lastOffsetForLeaderEpoch``)
and, when its own log ends that epoch earlier than this replica's fetch offset or
knows only an older epoch, answers ``DivergingEpoch`` (epoch, end offset) instead of
records. The replica then cuts its log (``getOffsetTruncationState``): at
``min(leader's end, own end of that epoch)`` when it knows the epoch, at its own end
of the older epoch it knows when it does not (the next Fetch then carries that older
epoch and may cut again), at the leader's end when it has no end for it (an empty
cache); and fetches on from there. Kafka 4.0's replica fetcher therefore never sends
OffsetForLeaderEpoch to a remote leader (``fetchEpochEndOffsets`` serves partitions in
the ``Truncating`` state, which with truncation on fetch only the alter-log-dirs thread
uses); a replica without any epoch truncates to its high watermark instead, which a
reference broker's v2 logs never need.

The long poll is the broker's ``replica.fetch.wait.max.ms`` (Kafka's default
:data:`WAIT_MAX_MS`, 500); Kafka's defaults stand for the other
``replica.fetch.*`` settings. Simplifications: one fetcher per partition
(Kafka shares one fetch session per source broker), no fetch session.
"""

from __future__ import annotations

import functools
import logging
import uuid
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    ReplicaState,
)
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)

from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import dispatch
from lethe_reference.purgatory import Deferred
from lethe_reference.storage.errors import LogError
from lethe_reference.storage.log import LogStartOffsetIncrementReason
from lethe_reference.storage.truncation import truncate_to

if TYPE_CHECKING:
    from lethe_reference.cluster.membership import Member
    from lethe_reference.storage.log import PartitionLog

__all__ = ["FETCH_VERSION", "WAIT_MAX_MS", "PartitionFetcher"]

_log = logging.getLogger(__name__)
#: The Fetch version Kafka 4.0's replica fetcher uses.
FETCH_VERSION = 17
#: ListOffsets for a replica's EARLIEST (``ListOffsetsRequest.EARLIEST_TIMESTAMP``).
LIST_OFFSETS_VERSION = 9
EARLIEST = -2
#: ``replica.fetch.wait.max.ms`` (Kafka's default; the broker config's value is used),
#: ``replica.fetch.min.bytes``, ``replica.fetch.max.bytes``,
#: ``replica.fetch.response.max.bytes``, ``replica.fetch.backoff.ms`` (Kafka's defaults).
WAIT_MAX_MS = 500
MIN_BYTES = 1
PARTITION_MAX_BYTES = 1_048_576
RESPONSE_MAX_BYTES = 10_485_760
BACKOFF_MS = 1000
TopicPartition = tuple[str, int]
#: Byte positions in a v2 batch header: magic, lastOffsetDelta.
_MAGIC_AT = 16
_LAST_OFFSET_DELTA_AT = 23


def _append(log: PartitionLog, records: bytes) -> None:
    """``appendRecordsToFollowerOrFutureReplica``: an empty replica whose first fetched
    batch starts below its end (the leader's log start offset falls inside that batch,
    after a DeleteRecords) restarts at the batch's base offset, then appends."""
    bounds = _first_batch_bounds(records)
    end = log.log_end_offset
    if bounds is not None and end == log.log_start_offset and bounds[0] < end <= bounds[1]:
        log.truncate_fully_and_start_at(bounds[0])
    log.append_as_follower(records)


def _first_batch_bounds(records: bytes) -> tuple[int, int] | None:
    """(base offset, last offset) of the first v2 batch (kafka-facts 3.1), else None."""
    if len(records) < _LAST_OFFSET_DELTA_AT + 4 or records[_MAGIC_AT] != 2:
        return None
    base = int.from_bytes(records[0:8], "big", signed=True)
    delta = int.from_bytes(records[_LAST_OFFSET_DELTA_AT : _LAST_OFFSET_DELTA_AT + 4], "big")
    return base, base + delta


class PartitionFetcher:
    """Replicates ``tp`` from ``leader_id`` at ``leader_epoch`` (module docstring)."""

    def __init__(
        self, member: Member, tp: TopicPartition, leader_id: int, leader_epoch: int
    ) -> None:
        self.member = member
        self.tp = tp
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.stopped = False
        self.in_flight: Deferred[FetchResponse] | None = None
        self.fetches = 0
        self._task = f"replica-fetcher-{member.node_id}-{tp[0]}-{tp[1]}"

    def start(self) -> None:
        self._run()

    def stop(self) -> None:
        """Stop for good; a parked fetch's answer is then ignored."""
        self.stopped = True
        self.in_flight = None
        self.member.broker.scheduler.cancel(self._task)

    # --- the loop -----------------------------------------------------------------------

    def _run(self) -> None:
        while not self.stopped:
            result = self._send()
            if result is None:
                self._back_off()
                return
            if isinstance(result, Deferred):
                if not result.done:
                    self.in_flight = result
                    result.add_callback(functools.partial(self._answered, result))
                    return
                result = result.result()
            if not self._process(result):
                self._back_off()
                return

    def _answered(self, sent: Deferred[FetchResponse], response: FetchResponse) -> None:
        if self.stopped or self.in_flight is not sent:
            return
        self.in_flight = None
        if self._process(response):
            self._run()
        else:
            self._back_off()

    def _back_off(self) -> None:
        scheduler = self.member.broker.scheduler
        if not self.stopped and not scheduler.is_scheduled(self._task):
            scheduler.schedule(self._task, BACKOFF_MS, self._run)
            self.member.wake(self.member.node_id)

    # --- one request ---------------------------------------------------------------------

    def _send(self) -> FetchResponse | Deferred[FetchResponse] | None:
        leader = self.member.peer(self.leader_id)
        log = self.member.broker.log(*self.tp)
        info = self.member.broker.metadata.get(self.tp[0])
        if leader is None or not leader.started or log is None or info is None:
            return None
        self.fetches += 1
        request = self.request(log, uuid.UUID(bytes=info.topic_id.raw))
        ctx = RequestContext(
            api_key=int(ApiKey.FETCH),
            api_version=FETCH_VERSION,
            correlation_id=self.fetches,
            client_id=f"broker-{self.member.node_id}-fetcher-0",
            connection_id=-self.member.node_id,
        )
        result = dispatch(leader, ctx, request)
        self.member.wake(self.leader_id)  # a parked fetch has a deadline there
        if isinstance(result, FetchResponse | Deferred):
            return result
        return None

    def request(self, log: PartitionLog, topic_id: uuid.UUID) -> FetchRequest:
        """The Fetch a follower sends for this partition (module docstring)."""
        latest = log.epoch_cache.latest_epoch
        partition = FetchPartition(
            partition=self.tp[1],
            current_leader_epoch=self.leader_epoch,
            fetch_offset=log.log_end_offset,
            last_fetched_epoch=-1 if latest is None else latest,
            log_start_offset=log.log_start_offset,
            partition_max_bytes=PARTITION_MAX_BYTES,
        )
        return FetchRequest(
            replica_state=ReplicaState(replica_id=self.member.node_id, replica_epoch=-1),
            max_wait_ms=self.member.broker.config.get_int("replica.fetch.wait.max.ms"),
            min_bytes=MIN_BYTES,
            max_bytes=RESPONSE_MAX_BYTES,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            topics=(FetchTopic(topic=self.tp[0], topic_id=topic_id, partitions=(partition,)),),
        )

    def _out_of_range(self, log: PartitionLog) -> bool:
        """``fetchOffsetAndTruncate``: when the leader's log starts past this replica's
        end (records deleted while it was away), drop everything and restart at the
        leader's log start offset; True when fetching can go on at once."""
        start = self._leader_earliest()
        if start is None or start <= log.log_end_offset:
            return False
        log.truncate_fully_and_start_at(start)
        return True

    def _leader_earliest(self) -> int | None:
        """The leader's log start offset, asked as a replica asks (ListOffsets, EARLIEST)."""
        leader = self.member.peer(self.leader_id)
        if leader is None:
            return None
        partition = ListOffsetsPartition(
            self.tp[1], current_leader_epoch=self.leader_epoch, timestamp=EARLIEST
        )
        request = ListOffsetsRequest(
            replica_id=self.member.node_id,
            isolation_level=0,
            topics=(ListOffsetsTopic(self.tp[0], (partition,)),),
        )
        ctx = RequestContext(int(ApiKey.LIST_OFFSETS), LIST_OFFSETS_VERSION, 0, None, -1)
        answer = dispatch(leader, ctx, request)
        if not isinstance(answer, ListOffsetsResponse):
            return None
        found = [p for t in answer.topics for p in t.partitions]
        if len(found) != 1 or found[0].error_code != ErrorCode.NONE:
            return None
        return found[0].offset

    def _truncate(self, log: PartitionLog, leader_epoch: int, leader_end: int) -> bool:
        """``maybeTruncateToEpochEndOffsets`` / ``getOffsetTruncationState`` on the
        leader's epoch end offset for this replica's last fetched epoch: cut at the
        lower of the two ends (module docstring); the next Fetch goes on from there."""
        end = log.log_end_offset
        own_epoch, own_end = log.epoch_cache.end_offset_for(leader_epoch, end)
        if own_end == -1:  # no end known here for that epoch (an empty cache): the leader's
            target = min(leader_end, end)
        elif own_epoch != leader_epoch:  # an epoch this replica never saw: cut to its own
            target = min(own_end, end)  # end of the epoch before; the next Fetch says more
        else:
            target = min(own_end, leader_end, end)
        _log.info(
            "follower %s-%d: leader %d has epoch %d ending at %d; truncating %d -> %d",
            *self.tp,
            self.leader_id,
            leader_epoch,
            leader_end,
            end,
            target,
        )
        try:
            truncate_to(log, target)
        except (LogError, OSError) as error:
            _log.warning("follower %s-%d: %s", *self.tp, error)
            return False
        return True

    def _process(self, response: FetchResponse) -> bool:
        """``processPartitionData``; False when the answer was an error (back off)."""
        log = self.member.broker.log(*self.tp)
        answers = [p for t in response.responses for p in t.partitions]
        if response.error_code != ErrorCode.NONE or len(answers) != 1 or log is None:
            return False
        data = answers[0]
        if data.error_code == ErrorCode.NONE and data.diverging_epoch.epoch != -1:
            return self._truncate(log, data.diverging_epoch.epoch, data.diverging_epoch.end_offset)
        if data.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            return self._out_of_range(log)
        if data.error_code != ErrorCode.NONE:
            _log.info(
                "fetch of %s-%d from %d failed: %d", *self.tp, self.leader_id, data.error_code
            )
            return False
        try:
            if data.records:
                _append(log, bytes(data.records))  # a region read from the leader's file
            log.update_high_watermark(min(data.high_watermark, log.log_end_offset))
            if data.log_start_offset > log.log_start_offset:
                log.maybe_increment_log_start_offset(
                    data.log_start_offset, LogStartOffsetIncrementReason.LEADER_OFFSET_INCREMENTED
                )
        except (LogError, OSError) as error:
            _log.warning("follower %s-%d: %s", *self.tp, error)
            return False
        return True
