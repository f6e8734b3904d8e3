"""The in-memory consumer group (KIP-848): epochs, members, target assignment, state.

Theory of operation
-------------------
Kafka's ``ConsumerGroup``, reduced to what the coordinator decides with:

* ``group_epoch`` moves on whenever what the assignor would see changes (a
  member joins, leaves or changes its subscription; a subscribed topic appears
  or changes its partition count); ``assignment_epoch`` is the epoch the
  target assignment was computed for. The target is computed lazily, by the
  next heartbeat of any member after the group epoch moved, as in Kafka.
* ``target`` is each member's partitions in the target assignment; each
  member's current ``assigned`` partitions move towards it through
  :func:`~lethe_reference.cluster.group.consumer.member.reconcile`.
* A partition is *held* by the member that has it assigned or pending
  revocation; no other member gets it until it is released.
* The state is derived, never stored (``maybeUpdateGroupState``): Empty with no
  member, Assigning while the group epoch is ahead of the assignment epoch,
  Reconciling while a member is not yet stable at the assignment epoch, else
  Stable.
* The assignor is the one most members asked for (``ServerAssignor``), else
  the first of ``group.consumer.assignors`` (``uniform``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from lethe_reference.cluster.group.consumer.member import ConsumerMember, Partitions

__all__ = ["ConsumerGroup"]


class ConsumerGroup:
    """One consumer-protocol group (see the module docstring)."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict[str, Partitions] = {}
        #: partitions per subscribed topic when the group epoch last moved
        self.subscription_metadata: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"ConsumerGroup({self.group_id!r}, {self.state}, epoch={self.group_epoch})"

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def partition_epoch(self, topic: str, partition: int) -> int:
        """Epoch of the member holding ``topic``-``partition``; -1 when none does."""
        for member in self.members.values():
            if partition in member.assigned.get(topic, ()) or partition in (
                member.pending_revocation.get(topic, ())
            ):
                return member.member_epoch
        return -1

    def preferred_assignor(self, default: str) -> str:
        votes = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        if not votes:
            return default
        return votes.most_common(1)[0][0]

    def subscribed_topics(self, topics: Mapping[str, int]) -> dict[str, int]:
        """Every existing topic some member subscribes to (by name or regex), with its
        partition count: the subscription metadata Kafka keeps for the group."""
        out: dict[str, int] = {}
        for member in self.members.values():
            out.update({t: topics[t] for t in member_topics(member, topics)})
        return out


def member_topics(member: ConsumerMember, topics: Mapping[str, int]) -> frozenset[str]:
    """The existing topics ``member`` subscribes to. A regex matches whole names
    (RE2J's ``matches``), internal topics included, as Kafka 4.0 resolves it; Python's
    ``re`` stands in for RE2J (the syntax both accept means the same)."""
    names = {t for t in member.subscribed_topic_names if t in topics}
    if member.subscribed_topic_regex:
        pattern = re.compile(member.subscribed_topic_regex)
        names.update(t for t in topics if pattern.fullmatch(t))
    return frozenset(names)
