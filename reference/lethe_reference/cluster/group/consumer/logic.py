"""Consumer groups beside classic ones: describe, list, offsets, deletion, JoinGroup.

Theory of operation
-------------------
Kafka 4.0 keeps one namespace of groups per coordinator; a group id is a
classic group or a consumer group, never both. The classic request logic works
on ``groups`` (classic only); this layer answers for ids in
``consumer_groups`` as Kafka's ``GroupMetadataManager`` does and hands every
other id down unchanged:

* ConsumerGroupDescribe: a consumer group's epochs, assignor, members with
  their current and target assignments; GROUP_ID_NOT_FOUND "Group <id> not
  found." for an unknown id and "Group <id> is not a consumer group." for a
  classic one.
* DescribeGroups of a consumer group: as for an unknown classic group (Dead, and
  from v6 GROUP_ID_NOT_FOUND "Group <id> is not a classic group."), as a real
  Kafka 4.0.0 answered.
* Cleanup: the periodic job expires a consumer group's offsets of topics no member
  subscribes to, ``offsets.retention.minutes`` after their commit, and removes an
  Empty group with none left (its records tombstoned), in the same append as the
  classic groups' (``ConsumerGroup.offsetExpirationCondition``, ``maybeDeleteGroup``).
* ListGroups: consumer groups have protocol type "consumer", type "consumer"
  and their state; both filters apply.
* OffsetCommit (``ConsumerGroup.validateOffsetCommit``): epoch -1 on an empty
  group is accepted (admin tools); otherwise the member must exist
  (UNKNOWN_MEMBER_ID), speak OffsetCommit v9+ (UNSUPPORTED_VERSION) and send its
  current epoch (STALE_MEMBER_EPOCH).
* OffsetFetch (``validateOffsetFetch``): without member id and epoch accepted;
  otherwise the same member and epoch checks.
* OffsetDelete: any state; a topic the group subscribes to (by name or through
  a regex) answers GROUP_SUBSCRIBED_TO_TOPIC, the others are deleted.
* DeleteGroups: only an Empty consumer group (NON_EMPTY_GROUP otherwise).
* JoinGroup on a consumer group: an empty one is dropped and the classic group
  created in its place (Kafka converts empty groups both ways); one with
  members answers INCONSISTENT_GROUP_PROTOCOL (no mixed groups, see
  ``heartbeat``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import (
    DescribedGroup,
    JoinRequest,
    JoinResult,
    ListedGroup,
    OffsetCommitRequest,
    OffsetFetchResult,
    TopicPartition,
)
from lethe_reference.cluster.group.cleanup import offset_expired
from lethe_reference.cluster.group.consumer.api import (
    DescribedConsumerGroup,
    DescribedConsumerMember,
)
from lethe_reference.cluster.group.consumer.group import ConsumerGroup
from lethe_reference.cluster.group.consumer.heartbeat import ConsumerHeartbeatLogic
from lethe_reference.cluster.group.consumer.persistence import changes
from lethe_reference.cluster.group.deletion import OffsetDeleteResult
from lethe_reference.cluster.group.support import Pending

__all__ = ["CONSUMER_PROTOCOL_TYPE", "ConsumerGroupLogic"]

CONSUMER_PROTOCOL_TYPE = "consumer"


class ConsumerGroupLogic(ConsumerHeartbeatLogic):
    """Consumer groups in the shared requests (see the module docstring)."""

    def describe_consumer_group(self, group_id: str) -> DescribedConsumerGroup:
        """ConsumerGroupDescribe for one group."""
        self._advance()
        error = self._precheck(group_id)
        if error:
            return DescribedConsumerGroup(group_id, error_code=error)
        group = self.consumer_groups.get(group_id)
        if group is None:
            message = (
                f"Group {group_id} is not a consumer group."
                if group_id in self.groups
                else f"Group {group_id} not found."
            )
            return DescribedConsumerGroup(group_id, codes.GROUP_ID_NOT_FOUND, message)
        members = tuple(
            DescribedConsumerMember(
                m.member_id,
                m.instance_id,
                m.rack_id,
                m.member_epoch,
                m.client_id,
                m.client_host,
                m.subscribed_topic_names,
                m.subscribed_topic_regex,
                dict(m.assigned),
                dict(group.target.get(m.member_id, {})),
            )
            for m in group.members.values()
        )
        return DescribedConsumerGroup(
            group_id,
            state=group.state,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=group.preferred_assignor(self.consumer_config.assignors[0]),
            members=members,
        )

    def is_consumer_group(self, group_id: str) -> bool:
        return group_id in self.consumer_groups

    # -- shared requests ----------------------------------------------------------------

    def describe_group(self, group_id: str) -> DescribedGroup:
        if group_id in self.consumer_groups and not self._not_coordinator(group_id):
            return DescribedGroup(
                group_id, missing_message=f"Group {group_id} is not a classic group."
            )
        return super().describe_group(group_id)

    def list_groups(
        self, states: Iterable[str] = (), types: Iterable[str] = ()
    ) -> list[ListedGroup]:
        states, types = list(states), list(types)
        listed = super().list_groups(states, types)
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in types}
        if wanted_types and CONSUMER_PROTOCOL_TYPE not in wanted_types:
            return listed
        for group in self.consumer_groups.values():
            if wanted_states and group.state.lower() not in wanted_states:
                continue
            listed.append(
                ListedGroup(
                    group.group_id, CONSUMER_PROTOCOL_TYPE, group.state, CONSUMER_PROTOCOL_TYPE
                )
            )
        return listed

    def commit_offsets(self, request: OffsetCommitRequest) -> dict[TopicPartition, int]:
        group = self.consumer_groups.get(request.group_id)
        if group is None:
            return super().commit_offsets(request)
        self._advance()
        error = self._precheck(request.group_id)
        if not error and not (request.generation_id < 0 and not group.members):
            member = group.members.get(request.member_id)
            if member is None:
                error = codes.UNKNOWN_MEMBER_ID
            elif request.api_version < 9:
                error = ErrorCode.UNSUPPORTED_VERSION
            elif request.generation_id != member.member_epoch:
                error = ErrorCode.STALE_MEMBER_EPOCH
        if error:
            return dict.fromkeys(request.offsets, error)
        return self._store(request)

    def fetch_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition] | None = None,
        member_id: str | None = None,
        member_epoch: int = -1,
        *,
        require_stable: bool = False,
    ) -> OffsetFetchResult:
        group = self.consumer_groups.get(group_id)
        if group is None:
            return super().fetch_offsets(group_id, partitions, require_stable=require_stable)
        self._advance()
        error = self._precheck(group_id)
        if not error and not (member_id is None and member_epoch < 0):
            member = group.members.get(member_id or "")
            if member is None:
                error = codes.UNKNOWN_MEMBER_ID
            elif member.member_epoch != member_epoch:
                error = ErrorCode.STALE_MEMBER_EPOCH
        if error:
            return OffsetFetchResult(error)
        stored = self.offsets.get(group_id, {})
        return self._offsets_answer(group_id, stored, partitions, require_stable)

    def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> OffsetDeleteResult:
        group = self.consumer_groups.get(group_id)
        if group is None:
            return super().delete_offsets(group_id, partitions)
        self._advance()
        error = self._precheck(group_id)
        if error:
            return OffsetDeleteResult(error)
        return self._delete_unsubscribed(group_id, list(partitions), self._subscribed(group))

    def _cleanup_others(
        self, partition: int, now: int
    ) -> tuple[list[RecordSpec], Callable[[], None]]:
        """The cleanup run's part for consumer groups (see :mod:`..cleanup`)."""
        records: list[RecordSpec] = []
        expired: dict[str, list[TopicPartition]] = {}
        removed: list[str] = []
        retention = self.config.offsets_retention_ms
        for group_id, group in self.consumer_groups.items():
            if self.partition_for(group_id) != partition:
                continue
            stored = self.offsets.get(group_id, {})
            subscribed = self._subscribed(group)
            gone = [
                tp
                for tp, committed in stored.items()
                if tp[0] not in subscribed and offset_expired(committed, None, now, retention)
            ]
            if gone:
                expired[group_id] = gone
                records += [self._offset_tombstone(group_id, tp) for tp in gone]
            if len(gone) == len(stored) and not group.members:
                records += changes(group_id, group, None, self.topic_ids(), now)
                removed.append(group_id)

        def forget() -> None:
            for group_id, gone in expired.items():
                self._forget(group_id, gone)
            for group_id in removed:
                self.offsets.pop(group_id, None)
                del self.consumer_groups[group_id]

        return records, forget

    def _subscribed(self, group: ConsumerGroup) -> set[str]:
        """Topics the group's members subscribe to, by name or through a regex."""
        subscribed = set(group.subscribed_topics(self.topic_partitions()))
        subscribed.update(t for m in group.members.values() for t in m.subscribed_topic_names)
        return subscribed

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        ids = list(dict.fromkeys(group_ids))
        answers = super().delete_groups(i for i in ids if i not in self.consumer_groups)
        for group_id in ids:
            if group_id in self.consumer_groups:
                answers[group_id] = self._delete_consumer_group(group_id)
        return {group_id: answers[group_id] for group_id in ids}

    def _delete_consumer_group(self, group_id: str) -> int:
        error = self._precheck(group_id)
        if error:
            return error
        group = self.consumer_groups[group_id]
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        stored = list(self.offsets.get(group_id, {}))
        records = [self._offset_tombstone(group_id, tp) for tp in stored]
        records += changes(group_id, group, None, self.topic_ids(), self.now())
        error = self._write(group_id, records)
        if error:
            return codes.group_append_error(error)
        self.offsets.pop(group_id, None)
        del self.consumer_groups[group_id]
        return codes.NONE

    def join_group(self, request: JoinRequest) -> JoinResult | Pending[JoinResult]:
        group = self.consumer_groups.get(request.group_id)
        if group is not None and not self._not_coordinator(request.group_id):
            if group.members:
                return JoinResult(codes.INCONSISTENT_GROUP_PROTOCOL, request.member_id)
            del self.consumer_groups[request.group_id]
        return super().join_group(request)
