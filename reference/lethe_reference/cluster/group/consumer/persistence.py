"""A consumer group's records in ``__consumer_offsets`` (types 3-8), written and read back.

Theory of operation
-------------------
Kafka keeps a consumer group durable as records keyed by group (and member)::

    3 ConsumerGroupMetadata               group epoch
    4 ConsumerGroupPartitionMetadata      the subscribed topics: id, name, partitions
    5 ConsumerGroupMemberMetadata         a member's client, subscription, assignor
    6 ConsumerGroupTargetAssignmentMetadata   the assignment epoch
    7 ConsumerGroupTargetAssignmentMember     a member's target partitions
    8 ConsumerGroupCurrentMemberAssignment    a member's epochs, state, partitions

The request logic changes a group in memory and :func:`changes` turns the
difference between the group before and after into these records, in the order
Kafka's ``GroupMetadataManager`` emits them (member, subscription metadata,
group epoch, target members, assignment epoch, current assignments; a removed
member's 8, 7 and 5 as tombstones first; a deleted group's 6, 4 and 3 last). The
coordinator writes them as one batch before it answers, and puts the group back
as it was when the write fails, as Kafka applies records only once written.

:class:`Loaded` folds a partition's records (last value per key, a tombstone
deletes) and rebuilds the groups; topic ids are turned into names with the
broker's topics (an id it no longer knows is dropped, as a deleted topic's
partitions leave Kafka's assignments).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from lethe_formats.coordinator import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    CoordinatorKey,
    CoordinatorRecord,
    encode_key,
    encode_value,
)
from lethe_formats.coordinator.consumer_group import (
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataValue,
    TopicMetadata,
    TopicPartitions,
)
from lethe_formats.records.builder import RecordSpec
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference.cluster.group.consumer.group import ConsumerGroup
from lethe_reference.cluster.group.consumer.member import ConsumerMember, MemberState, Partitions

__all__ = ["CONSUMER_KEYS", "Loaded", "changes", "snapshot"]

CONSUMER_KEYS = (
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupCurrentMemberAssignmentKey,
)
_NO_ID = KafkaUuid(bytes(16))


def snapshot(group: ConsumerGroup | None) -> ConsumerGroup | None:
    """A copy to compare with (and to restore when the write fails)."""
    return copy.deepcopy(group)


class _Out:
    def __init__(self, group_id: str, ids: Mapping[str, bytes], now_ms: int) -> None:
        self.group_id, self.ids, self.now = group_id, ids, now_ms
        self.records: list[RecordSpec] = []

    def add(self, key: CoordinatorKey, value: object | None) -> None:
        encoded = None if value is None else encode_value(value)  # type: ignore[arg-type]
        self.records.append(RecordSpec(key=encode_key(key), value=encoded, timestamp=self.now))

    def partitions(self, parts: Partitions) -> tuple[TopicPartitions, ...]:
        return tuple(
            TopicPartitions(self.topic_id(t), tuple(sorted(p))) for t, p in sorted(parts.items())
        )

    def topic_id(self, name: str) -> KafkaUuid:
        raw = self.ids.get(name)
        return _NO_ID if raw is None else KafkaUuid(raw)


def _member_value(m: ConsumerMember) -> ConsumerGroupMemberMetadataValue:
    return ConsumerGroupMemberMetadataValue(
        client_id=m.client_id,
        client_host=m.client_host,
        subscribed_topic_names=m.subscribed_topic_names,
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        subscribed_topic_regex=m.subscribed_topic_regex,
        rebalance_timeout_ms=m.rebalance_timeout_ms,
        server_assignor=m.server_assignor,
    )


def _current_value(out: _Out, m: ConsumerMember) -> ConsumerGroupCurrentMemberAssignmentValue:
    return ConsumerGroupCurrentMemberAssignmentValue(
        member_epoch=m.member_epoch,
        previous_member_epoch=m.previous_member_epoch,
        state=m.state.value,
        assigned_partitions=out.partitions(m.assigned),
        partitions_pending_revocation=out.partitions(m.pending_revocation),
    )


def changes(
    group_id: str,
    before: ConsumerGroup | None,
    after: ConsumerGroup | None,
    ids: Mapping[str, bytes],
    now_ms: int,
) -> list[RecordSpec]:
    """The records that take the stored group from ``before`` to ``after`` (None: absent)."""
    out = _Out(group_id, ids, now_ms)
    old = before or ConsumerGroup(group_id)
    new = after or ConsumerGroup(group_id)

    def moved(attribute: str) -> bool:
        return after is not None and (
            before is None or getattr(old, attribute) != getattr(new, attribute)
        )

    _removed_members(out, old, new)
    for member_id, m in new.members.items():
        was = old.members.get(member_id)
        if was is None or _member_value(was) != _member_value(m):
            out.add(ConsumerGroupMemberMetadataKey(group_id, member_id), _member_value(m))
    if moved("subscription_metadata"):
        topics = tuple(
            TopicMetadata(out.topic_id(topic), topic, count)
            for topic, count in sorted(new.subscription_metadata.items())
        )
        value4 = ConsumerGroupPartitionMetadataValue(topics)
        out.add(ConsumerGroupPartitionMetadataKey(group_id), value4)
    if moved("group_epoch"):
        out.add(ConsumerGroupMetadataKey(group_id), ConsumerGroupMetadataValue(new.group_epoch))
    _targets(out, old, new)
    if moved("assignment_epoch"):
        value6 = ConsumerGroupTargetAssignmentMetadataValue(new.assignment_epoch)
        out.add(ConsumerGroupTargetAssignmentMetadataKey(group_id), value6)
    for member_id, m in new.members.items():
        was = old.members.get(member_id)
        if was is None or _current_value(out, was) != _current_value(out, m):
            key = ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id)
            out.add(key, _current_value(out, m))
    if after is None and before is not None:
        out.add(ConsumerGroupTargetAssignmentMetadataKey(group_id), None)
        out.add(ConsumerGroupPartitionMetadataKey(group_id), None)
        out.add(ConsumerGroupMetadataKey(group_id), None)
    return out.records


def _removed_members(out: _Out, old: ConsumerGroup, new: ConsumerGroup) -> None:
    """Kafka's ``removeMember``: tombstones of 8, 7 and 5."""
    g = out.group_id
    for member_id in [m for m in old.members if m not in new.members]:
        out.add(ConsumerGroupCurrentMemberAssignmentKey(g, member_id), None)
        out.add(ConsumerGroupTargetAssignmentMemberKey(g, member_id), None)
        out.add(ConsumerGroupMemberMetadataKey(g, member_id), None)


def _targets(out: _Out, old: ConsumerGroup, new: ConsumerGroup) -> None:
    for member_id, target in new.target.items():
        if old.target.get(member_id) != target or member_id not in old.members:
            value = ConsumerGroupTargetAssignmentMemberValue(out.partitions(target))
            out.add(ConsumerGroupTargetAssignmentMemberKey(out.group_id, member_id), value)


@dataclass(slots=True)
class _Stored:
    epoch: ConsumerGroupMetadataValue | None = None
    topics: ConsumerGroupPartitionMetadataValue | None = None
    assignment_epoch: ConsumerGroupTargetAssignmentMetadataValue | None = None
    members: dict[str, ConsumerGroupMemberMetadataValue | None] = field(default_factory=dict)
    targets: dict[str, ConsumerGroupTargetAssignmentMemberValue | None] = field(
        default_factory=dict
    )
    current: dict[str, ConsumerGroupCurrentMemberAssignmentValue | None] = field(
        default_factory=dict
    )


class Loaded:
    """Consumer-group records of one partition, folded in log order."""

    def __init__(self) -> None:
        self._groups: dict[str, _Stored] = {}

    def add(self, record: CoordinatorRecord) -> bool:
        """Fold ``record``; False when it is not a consumer-group record."""
        key, value = record.key, record.value
        if not isinstance(key, CONSUMER_KEYS):
            return False
        stored = self._groups.setdefault(key.group_id, _Stored())
        if isinstance(key, ConsumerGroupMetadataKey):
            stored.epoch = value  # type: ignore[assignment]
        elif isinstance(key, ConsumerGroupPartitionMetadataKey):
            stored.topics = value  # type: ignore[assignment]
        elif isinstance(key, ConsumerGroupTargetAssignmentMetadataKey):
            stored.assignment_epoch = value  # type: ignore[assignment]
        elif isinstance(key, ConsumerGroupMemberMetadataKey):
            stored.members[key.member_id] = value  # type: ignore[assignment]
        elif isinstance(key, ConsumerGroupTargetAssignmentMemberKey):
            stored.targets[key.member_id] = value  # type: ignore[assignment]
        else:
            stored.current[key.member_id] = value  # type: ignore[assignment]
        return True

    def groups(self, names: Mapping[bytes, str]) -> list[ConsumerGroup]:
        """The groups still present, topic ids named with ``names`` (id bytes -> name)."""
        return [
            _group(group_id, stored, names)
            for group_id, stored in self._groups.items()
            if stored.epoch is not None
        ]


def _parts(listed: tuple[TopicPartitions, ...], names: Mapping[bytes, str]) -> Partitions:
    return {
        names[tp.topic_id.raw]: frozenset(tp.partitions)
        for tp in listed
        if tp.topic_id.raw in names and tp.partitions
    }


def _group(group_id: str, stored: _Stored, names: Mapping[bytes, str]) -> ConsumerGroup:
    group = ConsumerGroup(group_id)
    assert stored.epoch is not None
    group.group_epoch = stored.epoch.epoch
    if stored.assignment_epoch is not None:
        group.assignment_epoch = stored.assignment_epoch.assignment_epoch
    if stored.topics is not None:
        group.subscription_metadata = {t.topic_name: t.num_partitions for t in stored.topics.topics}
    for member_id, meta in stored.members.items():
        if meta is None:
            continue
        current = stored.current.get(member_id)
        member = ConsumerMember(
            member_id,
            client_id=meta.client_id,
            client_host=meta.client_host,
            instance_id=meta.instance_id,
            rack_id=meta.rack_id,
            rebalance_timeout_ms=meta.rebalance_timeout_ms,
            subscribed_topic_names=meta.subscribed_topic_names,
            subscribed_topic_regex=meta.subscribed_topic_regex,
            server_assignor=meta.server_assignor,
        )
        if current is not None:
            member = replace(
                member,
                member_epoch=current.member_epoch,
                previous_member_epoch=current.previous_member_epoch,
                state=_state(current.state),
                assigned=_parts(current.assigned_partitions, names),
                pending_revocation=_parts(current.partitions_pending_revocation, names),
            )
        group.members[member_id] = member
    for member_id, target in stored.targets.items():
        if target is not None and member_id in group.members:
            group.target[member_id] = _parts(target.topic_partitions, names)
    return group


def _state(value: int) -> MemberState:
    try:
        return MemberState(value)
    except ValueError:
        return MemberState.UNKNOWN
