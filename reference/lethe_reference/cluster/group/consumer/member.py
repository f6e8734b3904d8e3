"""A consumer-group member and its reconciliation (Kafka's ``CurrentAssignmentBuilder``).

Theory of operation
-------------------
A member holds what it was last given (``assigned``), what it must give back
(``pending_revocation``), its epoch and the epoch before it. Reconciling moves
it one step towards the group's target assignment (:func:`reconcile`), as
Kafka 4.0 does:

* **Stable**, target epoch unchanged: nothing to do.
* Otherwise compute, per topic: keep = assigned ∩ target; revoke = assigned -
  keep; add = target - keep, minus partitions another member still holds
  (*unreleased*: their current epoch is set).
* Something to revoke that the member still reports owning: stay at the epoch,
  state **UnrevokedPartitions**, assigned = keep. The member is asked to give
  them up and must do so within its rebalance timeout.
* Else something to add: take the target epoch, assigned = keep + add, state
  **UnreleasedPartitions** if some partition is still held elsewhere, else
  **Stable**.
* Else: the target epoch, **UnreleasedPartitions** or **Stable**.

From UnrevokedPartitions a member moves on (epoch + 1 first, then the steps
above) only when its heartbeat no longer lists any revoked partition; a
heartbeat without the owned list (null) counts as still owning them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

__all__ = ["ConsumerMember", "MemberState", "Partitions", "reconcile"]

#: ``{topic name: partitions}``
Partitions = Mapping[str, frozenset[int]]


class MemberState(enum.Enum):
    """Kafka's ``MemberState`` (the value is the int8 of the current-assignment record)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


@dataclass(frozen=True, slots=True)
class ConsumerMember:
    member_id: str
    client_id: str = ""
    client_host: str = ""
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Partitions = field(default_factory=dict)
    pending_revocation: Partitions = field(default_factory=dict)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def with_epoch(self, epoch: int) -> ConsumerMember:
        """``updateMemberEpoch``: the old epoch becomes the previous one."""
        return replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch)


#: (topic, partition) -> epoch of the member holding it, -1 when free
PartitionEpoch = Callable[[str, int], int]


def _owns_any(owned: Partitions | None, partitions: Partitions) -> bool:
    if owned is None:
        return True
    return any(partitions.get(topic, frozenset()) & parts for topic, parts in owned.items())


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Partitions,
    partition_epoch: PartitionEpoch,
    owned: Partitions | None,
) -> ConsumerMember:
    """One reconciliation step of ``member`` towards ``target`` at ``target_epoch``."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(
            member, member.member_epoch, _Target(target_epoch, target, partition_epoch), owned
        )
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        return _next(
            member, member.member_epoch + 1, _Target(target_epoch, target, partition_epoch), owned
        )
    return _next(member, member.member_epoch, _Target(target_epoch, target, partition_epoch), owned)


@dataclass(frozen=True, slots=True)
class _Target:
    epoch: int
    partitions: Partitions
    partition_epoch: PartitionEpoch


def _next(
    member: ConsumerMember, epoch: int, goal: _Target, owned: Partitions | None
) -> ConsumerMember:
    target, target_epoch, partition_epoch = goal.partitions, goal.epoch, goal.partition_epoch
    keep: dict[str, frozenset[int]] = {}
    revoke: dict[str, frozenset[int]] = {}
    add: dict[str, frozenset[int]] = {}
    unreleased = False
    for topic in set(target) | set(member.assigned):
        wanted = target.get(topic, frozenset())
        current = member.assigned.get(topic, frozenset())
        kept = current & wanted
        gone = current - kept
        new = {p for p in wanted - kept if partition_epoch(topic, p) == -1}
        unreleased = unreleased or len(new) < len(wanted - kept)
        if kept:
            keep[topic] = kept
        if gone:
            revoke[topic] = gone
        if new:
            add[topic] = frozenset(new)
    if revoke and _owns_any(owned, revoke):
        return replace(
            member.with_epoch(epoch),
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=keep,
            pending_revocation=revoke,
        )
    for topic, parts in add.items():
        keep[topic] = keep.get(topic, frozenset()) | parts
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return replace(
        member.with_epoch(target_epoch), state=state, assigned=keep, pending_revocation={}
    )
