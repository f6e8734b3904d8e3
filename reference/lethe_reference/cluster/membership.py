"""One broker's part in an in-process cluster, and the questions handlers ask about it.

Theory of operation
-------------------
A broker started alone has no :class:`Member`; every function below then
answers as a single node that leads everything at epoch 0 (the behaviour the
whole single-broker suite pins), so handlers call them unconditionally; its
leader epochs are the topic registry's (raised by restarts, see
:mod:`lethe_reference.leadership`).

In a cluster (:mod:`lethe_reference.embedded_cluster`) each broker gets a
:class:`Member` in ``broker.extensions["cluster"]``. It is Kafka's
``ReplicaManager`` view of the metadata image:

* **role** per partition, from the shared
  :class:`~lethe_reference.cluster.controller.ClusterController`: leader
  (:attr:`Member.leading` holds a
  :class:`~lethe_reference.cluster.replication.LeaderState`), follower (a
  :class:`~lethe_reference.cluster.fetcher.PartitionFetcher` replicates from
  the leader), or neither. Leader-only requests (Produce, DeleteRecords,
  ListOffsets, a consumer's Fetch below v11, replica fetches) on a follower
  answer NOT_LEADER_OR_FOLLOWER (6) through :func:`leader_error`.
* **metadata deltas** (:meth:`Member.partition_changed`, then
  :meth:`Member.activate` once every member applied the change): create the
  local log of an assigned replica, become leader (reset follower states, the
  new epoch starts at the LEO in ``leader-epoch-checkpoint``) or
  follower (restart the fetcher at the new leader and epoch), and re-check
  delayed operations on the partition: all of them on its leader, only Fetch
  and Produce elsewhere (``completeDelayedOperationsWhenNotPartitionLeader``
  leaves DeleteRecords out), so a DeleteRecords waiting on a leader that lost
  leadership stays held until its TimeoutMs and is answered REQUEST_TIMED_OUT
  (7) with the low watermark of its arrival, as Kafka 4.0 answers it.
* **follower fetches** (:func:`on_replica_fetch`, from the Fetch handler):
  update the follower's state, expand the ISR, advance the HW, and when the HW
  or the low watermark went up re-check the purgatories (``tryCompleteDelayed
  Requests``).
* **ISR shrink**: the ``isr-expiration`` task every
  ``replica.lag.time.max.ms / 2`` removes followers that were not caught up
  for ``replica.lag.time.max.ms`` (the HW may then advance).
* **topic events** from :class:`~lethe_reference.broker.Broker`
  (:func:`cluster_event`): a topic created, deleted or reconfigured on one
  broker is applied to every broker's registry, then the controller places
  the partitions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference import faults
from lethe_reference.cluster.controller import ClusterController, PartitionState
from lethe_reference.cluster.replication import LeaderState

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.cluster.fetcher import PartitionFetcher
    from lethe_reference.metadata import TopicInfo
    from lethe_reference.storage.log import PartitionLog

__all__ = [
    "CLUSTER_KEY",
    "ISR_TASK",
    "Member",
    "cluster_brokers",
    "cluster_event",
    "follower_log_starts",
    "high_watermark_after_append",
    "leader_epoch",
    "leader_error",
    "low_watermark_of",
    "member_of",
    "on_replica_fetch",
]

_log = logging.getLogger(__name__)
CLUSTER_KEY = "cluster"
ISR_TASK = "isr-expiration"
TopicPartition = tuple[str, int]


class Member:
    """A broker's membership in an in-process cluster (module docstring)."""

    def __init__(
        self,
        broker: Broker,
        controller: ClusterController,
        peer: Callable[[int], Broker | None],
        wake: Callable[[int], None] = lambda _node: None,
    ) -> None:
        self.broker = broker
        self.node_id = broker.node_id
        self.controller = controller
        self.peer = peer
        #: Tell broker ``node``'s driver that its due times may have changed (an
        #: in-process request parked something there, or a retry was queued).
        self.wake = wake
        self.leading: dict[TopicPartition, LeaderState] = {}
        self.fetchers: dict[TopicPartition, PartitionFetcher] = {}
        #: Partitions whose fetching an operator paused (the broker stays alive).
        self.paused: set[TopicPartition] = set()

    def attach(self) -> None:
        """Install on the broker and queue the ISR check (the broker is started)."""
        self.broker.extensions[CLUSTER_KEY] = self
        period = max(1, self.broker.config.get_int("replica.lag.time.max.ms") // 2)
        self.broker.scheduler.schedule(ISR_TASK, period, self.shrink_isr, period_ms=period)

    def detach(self) -> None:
        """Stop fetching (shutdown)."""
        for fetcher in self.fetchers.values():
            fetcher.stop()
        self.fetchers.clear()
        self.leading.clear()
        self.broker.scheduler.cancel(ISR_TASK)

    # --- roles ------------------------------------------------------------------------

    def state(self, tp: TopicPartition) -> PartitionState | None:
        return self.controller.state(tp)

    def is_leader(self, tp: TopicPartition) -> bool:
        return tp in self.leading

    # --- metadata deltas --------------------------------------------------------------

    def partition_changed(
        self, tp: TopicPartition, old: PartitionState | None, new: PartitionState | None
    ) -> None:
        if new is None or self.node_id not in new.replicas:
            self._stop_fetcher(tp)
            self.leading.pop(tp, None)
            if new is not None and old is not None and self.node_id in old.replicas:
                self.broker.log_manager.delete_log(*tp)  # reassigned away: StopReplica(delete)
            return
        self._ensure_log(tp)
        if new.leader == self.node_id:
            self._stop_fetcher(tp)
            followers = [n for n in new.replicas if n != self.node_id]
            if tp not in self.leading or old is None or old.leader_epoch != new.leader_epoch:
                self.leading[tp] = LeaderState.reset(followers, self.broker.clock.now_ms())
                log = self.broker.log(*tp)  # makeLeader: the new epoch starts at the LEO
                if log is not None:
                    log.epoch_cache.assign(new.leader_epoch, log.log_end_offset)
            else:  # replicas added by a reassignment: followers not heard from yet
                self.leading[tp].track(followers, self.broker.clock.now_ms())
        else:
            self.leading.pop(tp, None)
            fetcher = self.fetchers.get(tp)
            if fetcher is not None and (fetcher.leader_id, fetcher.leader_epoch) != (
                new.leader,
                new.leader_epoch,
            ):
                self._stop_fetcher(tp)

    def activate(self, tp: TopicPartition) -> None:
        """Second phase of a change: start fetching, re-check delayed operations."""
        state = self.controller.state(tp)
        if (
            state is not None
            and state.leader >= 0
            and state.leader != self.node_id
            and self.node_id in state.replicas
            and tp not in self.fetchers
        ):
            from lethe_reference.cluster.fetcher import PartitionFetcher  # noqa: PLC0415

            fetcher = PartitionFetcher(self, tp, state.leader, state.leader_epoch)
            self.fetchers[tp] = fetcher
            if tp not in self.paused:
                fetcher.start()
        if tp in self.leading:
            _complete_delayed(self.broker, tp)
        else:
            _complete_delayed_not_leader(self.broker, tp)

    def _ensure_log(self, tp: TopicPartition) -> None:
        info = self.broker.metadata.get(tp[0])
        if info is not None and self.broker.log(*tp) is None:
            self.broker.log_manager.create_log(tp[0], tp[1], topic_id=info.topic_id)

    def _stop_fetcher(self, tp: TopicPartition) -> None:
        fetcher = self.fetchers.pop(tp, None)
        if fetcher is not None:
            fetcher.stop()

    # --- operator controls --------------------------------------------------------------

    def pause(self, tp: TopicPartition) -> None:
        """Stop fetching ``tp`` while staying alive (a stalled follower)."""
        self.paused.add(tp)
        fetcher = self.fetchers.get(tp)
        if fetcher is not None:
            fetcher.stop()
            del self.fetchers[tp]

    def resume(self, tp: TopicPartition) -> None:
        """Fetch ``tp`` again; a fetcher made while paused (the leader moved) never
        started, so it is replaced by one for the current leader."""
        self.paused.discard(tp)
        self._stop_fetcher(tp)
        self.activate(tp)

    # --- leader side ------------------------------------------------------------------

    def low_watermark(self, tp: TopicPartition, log: PartitionLog) -> int:
        state = self.leading.get(tp)
        if state is None:
            return log.log_start_offset
        return state.low_watermark(log.log_start_offset, self.controller.is_alive)

    def follower_fetched(
        self, follower: int, tp: TopicPartition, fetch_offset: int, log_start_offset: int
    ) -> None:
        """``updateFollowerFetchState`` and what follows from it (module docstring)."""
        state, log = self.leading.get(tp), self.broker.log(*tp)
        if state is None or log is None:
            return
        low_before = self.low_watermark(tp, log)
        updated = state.update(
            follower,
            fetch_offset=fetch_offset,
            log_start_offset=log_start_offset,
            leader_log_end_offset=log.log_end_offset,
            now_ms=self.broker.clock.now_ms(),
        )
        if updated is None:
            return
        self._maybe_expand_isr(tp, log)
        hw_moved = self.advance_high_watermark(tp, log)
        if hw_moved or self.low_watermark(tp, log) > low_before:
            _complete_delayed(self.broker, tp)

    def advance_high_watermark(self, tp: TopicPartition, log: PartitionLog) -> bool:
        """``maybeIncrementLeaderHW``: min LEO over the ISR; True if it moved."""
        state, partition = self.leading.get(tp), self.controller.state(tp)
        if state is None or partition is None:
            return False
        followers = [n for n in partition.isr if n != self.node_id]
        return log.maybe_increment_high_watermark(
            state.high_watermark(log.log_end_offset, followers)
        )

    def _maybe_expand_isr(self, tp: TopicPartition, log: PartitionLog) -> None:
        state, partition = self.leading.get(tp), self.controller.state(tp)
        if state is None or partition is None:
            return
        joining = state.caught_up(partition.isr, log.high_watermark)
        joining = {n for n in joining if self.controller.is_alive(n)}
        if joining:
            self.controller.set_isr(tp, (*partition.isr, *sorted(joining)))

    def shrink_isr(self) -> None:
        """The ``isr-expiration`` task (``maybeShrinkIsr`` of every partition led here)."""
        max_lag = self.broker.config.get_int("replica.lag.time.max.ms")
        now = self.broker.clock.now_ms()
        for tp, state in sorted(self.leading.items()):
            partition, log = self.controller.state(tp), self.broker.log(*tp)
            if partition is None or log is None:
                continue
            out = state.lagging(partition.isr, log.log_end_offset, now, max_lag)
            if out:
                _log.info("shrinking ISR of %s-%d: %s out", tp[0], tp[1], sorted(out))
                self.controller.set_isr(tp, tuple(n for n in partition.isr if n not in out))
                if self.advance_high_watermark(tp, log):
                    _complete_delayed(self.broker, tp)

    # --- topic events -----------------------------------------------------------------

    def topic_created(self, info: TopicInfo, replication_factor: int) -> None:
        for other in self._other_brokers():
            if info.name not in other.metadata:
                other.metadata.add(info)
        self.controller.assign(info.name, range(info.partitions), replication_factor)

    def partitions_created(self, info: TopicInfo) -> None:
        existing = {p for (t, p) in self.controller.partitions if t == info.name}
        factor = max(
            (len(s.replicas) for (t, _), s in self.controller.partitions.items() if t == info.name),
            default=1,
        )
        for other in self._other_brokers():
            if info.name in other.metadata:
                other.metadata.set_partitions(info.name, info.partitions)
        fresh = [p for p in range(info.partitions) if p not in existing]
        if fresh:
            self.controller.assign(info.name, range(min(fresh), info.partitions), factor)

    def topic_deleted(self, info: TopicInfo) -> None:
        self.controller.remove_topic(info.name)
        for other in self._other_brokers():
            if info.name in other.metadata:
                other.delete_topic(info.name)

    def configs_changed(self, info: TopicInfo) -> None:
        for other in self._other_brokers():
            if info.name in other.metadata:
                other.metadata.set_configs(info.name, info.configs)
                other.log_manager.update_settings(info.name)

    def _other_brokers(self) -> list[Broker]:
        found = [self.peer(n) for n in self.controller.node_ids if n != self.node_id]
        return [b for b in found if b is not None]


def _complete_delayed(broker: Broker, tp: TopicPartition) -> None:
    from lethe_reference.handlers.partition_ops.common import complete_delayed  # noqa: PLC0415

    complete_delayed(broker, *tp)


# --- what handlers ask (single broker: the answers of one node leading everything) ----------


def member_of(broker: Broker) -> Member | None:
    found = broker.extensions.get(CLUSTER_KEY)
    return found if isinstance(found, Member) else None


def cluster_brokers(broker: Broker) -> list[Broker]:
    """Every running broker of ``broker``'s in-process cluster (just ``broker`` when it
    runs alone): the ones that replay a metadata change, as every Kafka broker replays
    the controller's records."""
    member = member_of(broker)
    if member is None:
        return [broker]
    peers = (member.peer(n) for n in member.controller.node_ids)
    return [peer for peer in peers if peer is not None]


def leader_error(broker: Broker, topic: str, partition: int) -> ErrorCode | None:
    """NOT_LEADER_OR_FOLLOWER (6) when a cluster member does not lead the partition."""
    member = member_of(broker)
    if member is None or member.is_leader((topic, partition)):
        return None
    return ErrorCode.NOT_LEADER_OR_FOLLOWER


def leader_epoch(broker: Broker, topic: str, partition: int) -> int:
    """The partition's leader epoch: the cluster controller's in a cluster, the topic
    registry's on a single broker (its own controller)."""
    member = member_of(broker)
    state = None if member is None else member.state((topic, partition))
    return broker.metadata.leader_epoch(topic, partition) if state is None else state.leader_epoch


def follower_log_starts(broker: Broker, topic: str, partition: int) -> list[int]:
    """The last reported log start offsets of the live followers (none on one broker)."""
    member = member_of(broker)
    state = None if member is None else member.leading.get((topic, partition))
    if member is None or state is None:
        return []
    if faults.active(broker, "low-watermark-is-leader-log-start"):
        return []
    return [s.log_start_offset for n, s in state.followers.items() if member.controller.is_alive(n)]


def low_watermark_of(broker: Broker, log: PartitionLog, topic: str, partition: int) -> int:
    """``lowWatermarkIfLeader`` of a partition led here."""
    return min([log.log_start_offset, *follower_log_starts(broker, topic, partition)])


def high_watermark_after_append(
    broker: Broker, log: PartitionLog, topic: str, partition: int
) -> None:
    """After a leader append: one broker acknowledges at once (HW = LEO); a cluster
    leader advances the HW only as far as the ISR has replicated."""
    member = member_of(broker)
    if member is None:
        log.maybe_increment_high_watermark(log.log_end_offset)
    else:
        member.advance_high_watermark((topic, partition), log)


def on_replica_fetch(
    broker: Broker,
    replica_id: int,
    tp: TopicPartition,
    *,
    fetch_offset: int,
    log_start: int,
) -> None:
    """A follower's Fetch of one partition was read (no-op on a single broker)."""
    member = member_of(broker)
    if member is not None and replica_id >= 0:
        member.follower_fetched(replica_id, tp, fetch_offset, log_start)


def cluster_event(broker: Broker, event: str, *args: Any) -> None:
    """Hand a topic event of ``broker`` to its member (nothing on a single broker)."""
    member = member_of(broker)
    if member is not None:
        getattr(member, event)(*args)


def _complete_delayed_not_leader(broker: Broker, tp: TopicPartition) -> None:
    from lethe_reference.handlers.partition_ops.common import (  # noqa: PLC0415
        complete_delayed_not_leader,
    )

    complete_delayed_not_leader(broker, *tp)
