"""OffsetDelete and DeleteGroups: removing committed offsets and whole groups.

Theory of operation
-------------------
Kafka 4.0's group coordinator (``OffsetMetadataManager.deleteOffsets``,
``GroupCoordinatorShard.deleteGroups``, ``ClassicGroup.validateOffsetDelete`` /
``validateDeleteGroup``) answers both requests from the same state the
OffsetCommit logic keeps, and makes the removal durable the way a commit is
made durable: by appending records to the group's ``__consumer_offsets``
partition, here *tombstones* (the key, a null value)::

    OffsetDelete(group, partitions)
      group unknown or Dead                      -> GROUP_ID_NOT_FOUND (no topics)
      members and protocol type not "consumer"   -> NON_EMPTY_GROUP    (no topics)
      per partition: topic in the group's subscription -> GROUP_SUBSCRIBED_TO_TOPIC
                     else NONE, and a tombstone when an offset is stored
      tombstones appended as one batch; only then forgotten

    DeleteGroups(groups), each on its own:
      unknown or Dead -> GROUP_ID_NOT_FOUND; any member -> NON_EMPTY_GROUP
      else a tombstone per committed offset plus the group metadata tombstone,
      one batch; then the group and its offsets are gone

A classic ``consumer`` group's subscription is the union of the topics its
members' subscriptions name (``ConsumerProtocolSubscription`` of the selected
protocol); an Empty group subscribes to nothing; metadata that does not decode
subscribes to nothing either (Kafka's ``computeSubscribedTopics`` gives up and
``isSubscribedToTopic`` answers false).

A failed append leaves everything as it was (the records never reached the
log) and answers the append error as Kafka's ``handleOperationException`` maps
it (``codes.group_append_error``). Once an offset is forgotten, consumed
retention (KIP-68, ``retention.committed``) stops counting it, as OffsetFetch
stops returning it (catalog KIP68-MCO-4).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from lethe_formats.coordinator import GroupMetadataKey, OffsetCommitKey, encode_key
from lethe_formats.coordinator.consumer_protocol import decode_subscription
from lethe_formats.errors import FormatError
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import TopicPartition
from lethe_reference.cluster.group.group import ClassicGroup
from lethe_reference.cluster.group.offsets import OffsetLogic
from lethe_reference.cluster.group.state import GroupState

__all__ = ["DeletionLogic", "OffsetDeleteResult", "known_subscription", "subscribed_topics"]

_S = GroupState
_CONSUMER = "consumer"
NON_EMPTY_GROUP = ErrorCode.NON_EMPTY_GROUP
GROUP_SUBSCRIBED_TO_TOPIC = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
_MEMBERS = (_S.STABLE, _S.PREPARING_REBALANCE, _S.COMPLETING_REBALANCE)


@dataclass(frozen=True, slots=True)
class OffsetDeleteResult:
    """``error_code`` for the group; when NONE, one code per requested partition."""

    error_code: int
    partitions: dict[TopicPartition, int] = field(default_factory=dict)


def known_subscription(group: ClassicGroup) -> frozenset[str] | None:
    """Kafka's ``computeSubscribedTopics``: None when the coordinator cannot know
    (not a ``consumer`` group, no protocol chosen, metadata that does not decode)."""
    if group.protocol_type != _CONSUMER:
        return None
    if not group.members:
        return frozenset()
    if group.protocol_name is None:
        return None
    topics: set[str] = set()
    for member in group.members.values():
        try:
            topics.update(decode_subscription(member.metadata(group.protocol_name)).topics)
        except FormatError:
            return None
    return frozenset(topics)


def subscribed_topics(group: ClassicGroup) -> frozenset[str]:
    """The topics a classic group subscribes to (see the module docstring)."""
    return known_subscription(group) or frozenset()


class DeletionLogic(OffsetLogic):
    """OffsetDelete and DeleteGroups (see the module docstring)."""

    def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> OffsetDeleteResult:
        """OffsetDelete for one group."""
        self._advance()
        wanted = list(partitions)
        error = self._precheck(group_id) or self._check_offset_delete(self.groups.get(group_id))
        if error:
            return OffsetDeleteResult(error)
        return self._delete_unsubscribed(group_id, wanted, subscribed_topics(self.groups[group_id]))

    def _delete_unsubscribed(
        self, group_id: str, wanted: list[TopicPartition], subscribed: Collection[str]
    ) -> OffsetDeleteResult:
        """Tombstone the stored offsets of ``wanted`` outside ``subscribed``."""
        stored = self.offsets.get(group_id, {})
        answers: dict[TopicPartition, int] = {
            tp: GROUP_SUBSCRIBED_TO_TOPIC if tp[0] in subscribed else codes.NONE for tp in wanted
        }
        gone = [tp for tp in dict.fromkeys(wanted) if tp[0] not in subscribed and tp in stored]
        if gone:
            error = self._write(group_id, [self._offset_tombstone(group_id, tp) for tp in gone])
            if error:
                return OffsetDeleteResult(codes.group_append_error(error))
            self._forget(group_id, gone)
        return OffsetDeleteResult(codes.NONE, answers)

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        """DeleteGroups: an error code per group id (a repeated id is answered once)."""
        self._advance()
        return {group_id: self._delete_group(group_id) for group_id in dict.fromkeys(group_ids)}

    # -- internals ----------------------------------------------------------------------

    @staticmethod
    def _check_offset_delete(group: ClassicGroup | None) -> int:
        if group is None or group.is_(_S.DEAD):
            return codes.GROUP_ID_NOT_FOUND
        if group.is_(*_MEMBERS) and group.protocol_type != _CONSUMER:
            return NON_EMPTY_GROUP
        return codes.NONE

    def _delete_group(self, group_id: str) -> int:
        error = self._precheck(group_id)
        if error:
            return error
        group = self.groups.get(group_id)
        if group is None or group.is_(_S.DEAD):
            return codes.GROUP_ID_NOT_FOUND
        if group.is_(*_MEMBERS):
            return NON_EMPTY_GROUP
        stored = list(self.offsets.get(group_id, {}))
        records = [self._offset_tombstone(group_id, tp) for tp in stored]
        now = self.now()
        key = encode_key(GroupMetadataKey(group_id))
        records.append(RecordSpec(key=key, value=None, timestamp=now))
        error = self._write(group_id, records)
        if error:
            return codes.group_append_error(error)
        self.offsets.pop(group_id, None)
        del self.groups[group_id]
        return codes.NONE

    def _offset_tombstone(self, group_id: str, tp: TopicPartition) -> RecordSpec:
        key = encode_key(OffsetCommitKey(group_id, tp[0], tp[1]))
        return RecordSpec(key=key, value=None, timestamp=self.now())

    def _forget(self, group_id: str, gone: Iterable[TopicPartition]) -> None:
        stored = self.offsets.get(group_id, {})
        for tp in gone:
            stored.pop(tp, None)
        if not stored:
            self.offsets.pop(group_id, None)
