"""The cluster controller of an in-process cluster: assignments, leaders, ISR, liveness.

Theory of operation
-------------------
In KRaft Kafka the active controller owns the partition records (replicas,
leader, leader epoch, ISR) and broker registrations (fenced or not) and every
broker replays them from ``__cluster_metadata``. An in-process cluster of
reference brokers shares one :class:`ClusterController` instead: the brokers'
:class:`~lethe_reference.cluster.membership.Member` objects ask it who leads a
partition and tell it about changes, and it tells every live member when a
partition's state changed (:meth:`Member.partition_changed`), which stands for
brokers applying a metadata delta.

State, per partition (:class:`PartitionState`)::

    replicas      assigned brokers, in assignment order (the first is the preferred leader)
    leader        the broker that leads, -1 when no live in-sync replica is left
    leader_epoch  0 at creation, +1 on every leader change (Kafka's rule)
    isr           in-sync replicas, the leader always among them

Changes and who makes them:

* ``assign``: CreateTopics / CreatePartitions. Replicas are striped over the
  live brokers as ``StripedReplicaPlacer`` does without racks: partition ``p``
  starts at broker ``p mod n`` and takes the next ``rf - 1`` brokers.
* ``move_leader``: an operator's election (``kafka-leader-election``,
  reassignment); the new leader must be an assigned live replica.
* ``elect``: ElectLeaders, preferred or unclean (:mod:`.elections`).
* ``reassign``: AlterPartitionReassignments (:mod:`.reassignment`): the target
  replicas join, catch up and enter the ISR; then the ones left out are removed
  (a leader among them gives way). Every partition change re-checks whether a
  reassignment in progress can finish.
* ``set_isr``: the leader's AlterPartition (ISR shrink after
  ``replica.lag.time.max.ms``, expand when a follower caught up).
* ``remove_partitions``: a KIP-694 reduction deleted every replica of its
  removed partitions (:mod:`lethe_reference.cluster.reduction`).
* ``broker_stopped`` / ``broker_started``: a broker shut down (controlled
  shutdown: it leaves every ISR but never empties one, partitions it led elect
  a new leader from the rest of the ISR) or registered again (a leaderless
  partition whose ISR holds it elects it; otherwise it rejoins as a follower and
  the ISR takes it back once it has caught up).

Nothing here does I/O; the controller holds no broker state besides liveness.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster import elections
from lethe_reference.cluster import reassignment as moves

__all__ = ["ClusterController", "PartitionState", "StateListener"]

_log = logging.getLogger(__name__)
TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition as the controller records it (``PartitionRecord``)."""

    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]


class StateListener(Protocol):
    """What the controller calls on a member when partitions change."""

    node_id: int

    def partition_changed(
        self, tp: TopicPartition, old: PartitionState | None, new: PartitionState | None
    ) -> None: ...

    def activate(self, tp: TopicPartition) -> None: ...


class ClusterController:
    """Assignments and liveness of an in-process cluster (module docstring)."""

    def __init__(self, node_ids: tuple[int, ...]) -> None:
        self.node_ids = tuple(sorted(node_ids))
        self.alive: set[int] = set()
        self.partitions: dict[TopicPartition, PartitionState] = {}
        #: partitions being reassigned (``PartitionRegistration.adding/removingReplicas``)
        self.reassignments: dict[TopicPartition, moves.Reassignment] = {}
        self._members: dict[int, StateListener] = {}

    # --- members ----------------------------------------------------------------------

    def register(self, member: StateListener) -> None:
        """A broker started: it is alive and hears about changes from now on."""
        self._members[member.node_id] = member
        self.alive.add(member.node_id)

    def members(self) -> Iterator[StateListener]:
        return (self._members[n] for n in sorted(self._members) if n in self.alive)

    def is_alive(self, node_id: int) -> bool:
        return node_id in self.alive

    # --- reads ------------------------------------------------------------------------

    def state(self, tp: TopicPartition) -> PartitionState | None:
        return self.partitions.get(tp)

    def leader_of(self, tp: TopicPartition) -> int:
        state = self.partitions.get(tp)
        return -1 if state is None else state.leader

    # --- changes ----------------------------------------------------------------------

    def assign(self, topic: str, partitions: range, replication_factor: int) -> None:
        """Place new partitions (striped over the live brokers) and announce them."""
        live = [n for n in self.node_ids if n in self.alive]
        if not live:
            raise ValueError("no live broker to place replicas on")
        factor = min(max(1, replication_factor), len(live))
        for partition in partitions:
            if (topic, partition) in self.partitions:
                continue
            replicas = tuple(live[(partition + i) % len(live)] for i in range(factor))
            self._set((topic, partition), PartitionState(replicas, replicas[0], 0, replicas))

    def remove_topic(self, topic: str) -> None:
        for tp in [tp for tp in self.partitions if tp[0] == topic]:
            self._set(tp, None)

    def remove_partitions(self, topic: str, partitions: list[int]) -> None:
        """KIP-694: the removed partitions of a reduction leave every broker's view."""
        for partition in partitions:
            if (topic, partition) in self.partitions:
                self._set((topic, partition), None)

    def move_leader(self, tp: TopicPartition, new_leader: int) -> PartitionState:
        """Elect ``new_leader`` (an assigned live replica); the leader epoch goes up by one."""
        state = self._require(tp)
        if new_leader not in state.replicas or new_leader not in self.alive:
            raise ValueError(f"broker {new_leader} is not a live replica of {tp}")
        if new_leader == state.leader:
            return state
        isr = state.isr if new_leader in state.isr else (*state.isr, new_leader)
        new = replace(state, leader=new_leader, leader_epoch=state.leader_epoch + 1, isr=isr)
        self._set(tp, new)
        return new

    def elect(self, tp: TopicPartition, election_type: int) -> ErrorCode:
        """ElectLeaders for one partition (:mod:`.elections`); the partition must exist."""
        outcome = elections.elect(self._require(tp), election_type, self.is_alive)
        if outcome.state is not None:
            self._set(tp, outcome.state)
        return outcome.error

    def reassign(self, tp: TopicPartition, target: tuple[int, ...] | None) -> None:
        """Start (or with None cancel) a reassignment of ``tp``; raises KafkaError."""
        state = self._require(tp)
        ongoing = self.reassignments.pop(tp, None)
        if target is None:
            if ongoing is None:
                raise error_for_code(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)
            self._set(tp, moves.cancelled(state, ongoing, self.is_alive))
            return
        moves.check_target(target, self.node_ids)
        # a new target replaces an ongoing one, counted from the replicas as they are now
        new, pending = moves.started(state, target, self.is_alive)
        if pending is not None:
            self.reassignments[tp] = pending
        if new != self.partitions.get(tp):
            self._set(tp, new)

    def set_isr(self, tp: TopicPartition, isr: tuple[int, ...]) -> PartitionState:
        """The leader's AlterPartition: a new ISR, same leader and epoch."""
        state = self._require(tp)
        # in the order the leader sent it: a replica that joins is appended (Kafka's
        # ``Partition.maybeExpandIsr``), so ``Isr: 3,2`` is possible for replicas 2,3
        ordered = tuple(dict.fromkeys(n for n in isr if n in state.replicas))
        if state.leader not in ordered:
            raise ValueError(f"the ISR of {tp} must hold its leader {state.leader}")
        new = replace(state, isr=ordered)
        if new != state:
            self._set(tp, new)
        return new

    def broker_stopped(self, node_id: int) -> None:
        """Controlled shutdown: leave every ISR; partitions it led elect from the rest."""
        self.alive.discard(node_id)
        for tp, state in sorted(self.partitions.items()):
            if node_id not in state.isr and state.leader != node_id:
                continue
            # the ISR never loses its last member (``PartitionChangeBuilder`` without
            # ELR): a partition whose in-sync replicas all stopped keeps the last one
            isr = tuple(n for n in state.isr if n != node_id) or state.isr
            if state.leader == node_id:
                candidates = [n for n in isr if n in self.alive]
                leader = candidates[0] if candidates else -1
                new = PartitionState(state.replicas, leader, state.leader_epoch + 1, isr)
            else:
                new = replace(state, isr=isr)
            self._set(tp, new)
        self._members.pop(node_id, None)

    def broker_started(self, member: StateListener) -> None:
        """A broker registered again: alive, a follower of what it is assigned."""
        self.register(member)
        for tp, state in sorted(self.partitions.items()):
            if state.leader == -1 and member.node_id in state.isr:
                # ``handleBrokerUnfenced``: a leaderless partition elects the broker when it
                # is in the ISR; one that is not waits for an unclean election
                elected = replace(state, leader=member.node_id, leader_epoch=state.leader_epoch + 1)
                self._set(tp, elected)
            elif member.node_id in state.replicas:
                member.partition_changed(tp, None, state)
                member.activate(tp)

    # --- internals --------------------------------------------------------------------

    def _require(self, tp: TopicPartition) -> PartitionState:
        state = self.partitions.get(tp)
        if state is None:
            raise KeyError(f"unknown partition {tp[0]}-{tp[1]}")
        return state

    def _set(self, tp: TopicPartition, new: PartitionState | None) -> None:
        old = self.partitions.get(tp)
        if new is None:
            self.partitions.pop(tp, None)
            self.reassignments.pop(tp, None)
        else:
            self.partitions[tp] = new
        _log.info("partition %s-%d: %s -> %s", tp[0], tp[1], old, new)
        members = list(self.members())
        for member in members:  # every member applies the change first (logs, roles) ...
            member.partition_changed(tp, old, new)
        for member in members:  # ... then followers start fetching from a ready leader
            member.activate(tp)
        self._maybe_finish_reassignment(tp)

    def _maybe_finish_reassignment(self, tp: TopicPartition) -> None:
        ongoing, state = self.reassignments.get(tp), self.partitions.get(tp)
        if ongoing is None or state is None:
            return
        done = moves.finished(state, ongoing, self.is_alive)
        if done is not None:
            del self.reassignments[tp]
            self._set(tp, done)
