"""ConsumerGroupHeartbeat: joining, heartbeating, leaving and fencing (KIP-848).

Theory of operation
-------------------
Kafka 4.0's ``GroupMetadataManager.consumerGroupHeartbeat``, in three steps per
heartbeat, after the request passed its checks (:func:`_validate`):

1. **Member.** Find or create the group and the member (epoch 0 joins; a
   static member rejoining with a new member id replaces its old incarnation
   only after that one left with epoch -2). The epoch sent must be the
   member's, or the previous one while the member's owned partitions are a
   subset of its assignment (the answer with the new epoch was lost); else
   FENCED_MEMBER_EPOCH. Changed fields are applied (null means unchanged).
2. **Group epoch and target.** A new group, a changed subscription or changed
   metadata of the subscribed topics moves the group epoch on; a group epoch
   ahead of the assignment epoch makes the assignor compute a new target.
3. **Reconcile** the member one step towards its target (see ``member``); a
   member left owing revocations gets its rebalance timeout.

Every heartbeat re-arms the member's session timeout
(``group.consumer.session.timeout.ms``); its expiry, or a missed rebalance
timeout, fences the member: it is removed and the group epoch moves on, so the
others get a new target at their next heartbeat. Epoch -1 leaves the same way;
-2 (static members) keeps the member and its partitions until its session
expires or it rejoins.

Every change is written to ``__consumer_offsets`` as Kafka's records 3-8
(``persistence``) before the answer, and read back by :meth:`load`. A group
with members of the other protocol is not converted (see the package
docstring).
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from lethe_formats.coordinator import (
    GroupMetadataKey,
    UnknownRecordTypeError,
    decode_record,
    encode_key,
)
from lethe_formats.model import Record
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.cleanup import CleanupLogic
from lethe_reference.cluster.group.consumer.api import (
    ConsumerConfig,
    ConsumerHeartbeat,
    ConsumerHeartbeatResult,
)
from lethe_reference.cluster.group.consumer.assignors import (
    ASSIGNORS,
    AssignmentSpec,
    MemberSpec,
    java_hash_order,
    java_string_hash,
    java_uuid_hash,
)
from lethe_reference.cluster.group.consumer.group import ConsumerGroup, member_topics
from lethe_reference.cluster.group.consumer.member import (
    ConsumerMember,
    MemberState,
    Partitions,
    reconcile,
)
from lethe_reference.cluster.group.consumer.persistence import Loaded, changes, snapshot
from lethe_reference.cluster.group.group import ClassicGroup
from lethe_reference.cluster.group.state import GroupState

__all__ = ["ConsumerError", "ConsumerHeartbeatLogic"]

LEAVE = -1
STATIC_LEAVE = -2
_log = logging.getLogger("lethe_reference.cluster.group.consumer")


class ConsumerError(Exception):
    """A heartbeat refused with Kafka error ``code`` (the ``ApiException`` Kafka throws)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _kafka_uuid() -> str:
    """``Uuid.randomUuid().toString()``: 22 characters of URL-safe base64."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


class ConsumerHeartbeatLogic(CleanupLogic):
    """Consumer-protocol groups beside the classic ones (see the module docstring)."""

    consumer_config = ConsumerConfig()
    #: the existing topics and their partition counts (the broker sets this)
    topic_partitions: Callable[[], Mapping[str, int]] = staticmethod(dict)
    #: the topics' ids, 16 bytes each (the broker sets this; they order the assignor's input)
    topic_ids: Callable[[], Mapping[str, bytes]] = staticmethod(dict)

    @property
    def consumer_groups(self) -> dict[str, ConsumerGroup]:
        groups: dict[str, ConsumerGroup] | None = getattr(self, "_consumer_groups", None)
        if groups is None:
            groups = {}
            self._consumer_groups = groups
        return groups

    def load(
        self, partition: int, records: Iterable[Record | tuple[bytes | None, bytes | None]]
    ) -> None:
        """Also rebuild the consumer groups of ``partition`` (see ``persistence``)."""
        records = list(records)
        super().load(partition, records)
        loaded = Loaded()
        for record in records:
            try:
                loaded.add(decode_record(record))
            except UnknownRecordTypeError:
                continue
        names = {raw: name for name, raw in self.topic_ids().items()}
        for group in loaded.groups(names):
            placeholder = self.groups.get(group.group_id)
            if placeholder is not None and not placeholder.members:
                del self.groups[group.group_id]  # made by the classic loader for its offsets
            self.consumer_groups[group.group_id] = group
            for member in group.members.values():
                self._session_timer(group.group_id, member.member_id)
                self._rebalance_timer(group, member)

    def unload(self, partition: int) -> None:
        """Also forget the consumer groups of ``partition`` (their members rejoin elsewhere)."""
        for group_id in [g for g in self.consumer_groups if self.partition_for(g) == partition]:
            for member_id in self.consumer_groups.pop(group_id).members:
                self._cancel_member_timers(group_id, member_id)
        super().unload(partition)

    # -- the request ----------------------------------------------------------------

    def consumer_heartbeat(self, request: ConsumerHeartbeat) -> ConsumerHeartbeatResult:
        """ConsumerGroupHeartbeat: the answer (errors as results, never raised).

        The group changes in memory, then the difference is written; a refused
        request or a failed write leaves the group as it was."""
        self._advance()
        group_id = request.group_id
        try:
            error = self._precheck(group_id) if group_id else codes.NONE
            if error:
                raise ConsumerError(error, "")
            self._validate(request)
        except ConsumerError as refused:
            return ConsumerHeartbeatResult(refused.code, refused.message or None)
        before, classic = snapshot(self.consumer_groups.get(group_id)), self.groups.get(group_id)
        try:
            if request.member_epoch in (LEAVE, STATIC_LEAVE):
                result = self._leave(request)
            else:
                result = self._heartbeat(request)
        except ConsumerError as refused:
            self._restore(group_id, before, classic)
            return ConsumerHeartbeatResult(refused.code, refused.message or None)
        error = self._persist(group_id, before, classic)
        if error:
            self._restore(group_id, before, classic)
            return ConsumerHeartbeatResult(codes.group_append_error(error))
        return result

    def _persist(
        self, group_id: str, before: ConsumerGroup | None, classic: ClassicGroup | None
    ) -> int:
        """Write what changed since ``before``; NONE or the append's error code."""
        records = changes(
            group_id, before, self.consumer_groups.get(group_id), self.topic_ids(), self.now()
        )
        if classic is not None and group_id not in self.groups:  # converted: Kafka's tombstone
            key = encode_key(GroupMetadataKey(group_id))
            records.insert(0, RecordSpec(key=key, value=None, timestamp=self.now()))
        return self._write(group_id, records) if records else codes.NONE

    def _restore(
        self, group_id: str, before: ConsumerGroup | None, classic: ClassicGroup | None
    ) -> None:
        if before is None:
            self.consumer_groups.pop(group_id, None)
        else:
            self.consumer_groups[group_id] = before
        if classic is not None:
            self.groups[group_id] = classic

    def _validate(self, r: ConsumerHeartbeat) -> None:
        def invalid(message: str) -> ConsumerError:
            return ConsumerError(ErrorCode.INVALID_REQUEST, message)

        if (r.api_version >= 1 or r.member_epoch > 0 or r.member_epoch == LEAVE) and (
            not r.member_id.strip()
        ):
            raise invalid("MemberId can't be empty.")
        if not r.group_id.strip():
            raise invalid("GroupId can't be empty.")
        if r.instance_id is not None and not r.instance_id.strip():
            raise invalid("InstanceId can't be empty.")
        if r.rack_id is not None and not r.rack_id.strip():
            raise invalid("RackId can't be empty.")
        if r.member_epoch == 0:
            if r.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if r.owned is None or r.owned:
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            if r.subscribed_topic_names is None and r.subscribed_topic_regex is None:
                raise invalid(
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null "
                    "when (re-)joining."
                )
        elif r.member_epoch == STATIC_LEAVE:
            if r.instance_id is None:
                raise invalid("InstanceId can't be null.")
        elif r.member_epoch < STATIC_LEAVE:
            raise invalid("MemberEpoch is invalid.")
        assignors = self.consumer_config.assignors
        if r.server_assignor is not None and r.server_assignor not in assignors:
            raise ConsumerError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {r.server_assignor} is not supported. "
                f"Supported assignors: {', '.join(assignors)}.",
            )
        if r.subscribed_topic_regex is not None:
            try:
                re.compile(r.subscribed_topic_regex)
            except re.error as error:
                raise ConsumerError(
                    ErrorCode.INVALID_REGULAR_EXPRESSION,
                    f"SubscribedTopicRegex `{r.subscribed_topic_regex}` is not a valid "
                    f"regular expression: {error}.",
                ) from None

    # -- step 1: group and member ----------------------------------------------------

    def _group(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.consumer_groups.get(group_id)
        if group is not None:
            return group
        classic = self.groups.get(group_id)
        if classic is not None:
            if create and classic.state is GroupState.EMPTY and not classic.members:
                del self.groups[group_id]  # an empty classic group becomes a consumer group
            elif create:
                raise ConsumerError(
                    codes.GROUP_ID_NOT_FOUND,
                    f"Cannot upgrade classic group {group_id} to consumer group because "
                    "online upgrade is disabled.",
                )
            else:
                raise ConsumerError(
                    codes.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group."
                )
        elif not create:
            raise ConsumerError(codes.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        group = self.consumer_groups[group_id] = ConsumerGroup(group_id)
        return group

    def _member(self, group: ConsumerGroup, r: ConsumerHeartbeat, member_id: str) -> ConsumerMember:
        create = r.member_epoch == 0
        if r.instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                if not create:
                    raise _unknown(member_id, group.group_id)
                return ConsumerMember(member_id)
            _check_epoch(member, r.member_epoch, r.owned)
            return member
        existing = group.static_member(r.instance_id)
        if create:
            if existing is None:
                return ConsumerMember(member_id)
            if existing.member_epoch != STATIC_LEAVE:
                raise ConsumerError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {r.instance_id} cannot join "
                    f"the group because the instance id is owned by {existing.member_id} member.",
                )
            self._replace_static(group, existing, member_id)
            return group.members[member_id]
        if existing is None:
            raise ConsumerError(codes.UNKNOWN_MEMBER_ID, f"Instance id {r.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise ConsumerError(
                codes.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {r.instance_id} is fenced by "
                f"existing member {existing.member_id}.",
            )
        _check_epoch(existing, r.member_epoch, r.owned)
        return existing

    def _replace_static(self, group: ConsumerGroup, old: ConsumerMember, member_id: str) -> None:
        """The static member's new incarnation takes over its partitions and target."""
        del group.members[old.member_id]
        self._cancel_member_timers(group.group_id, old.member_id)
        group.members[member_id] = replace(
            old, member_id=member_id, member_epoch=0, previous_member_epoch=0
        )
        if old.member_id in group.target:
            group.target[member_id] = group.target.pop(old.member_id)

    # -- the heartbeat ----------------------------------------------------------------

    def _heartbeat(self, r: ConsumerHeartbeat) -> ConsumerHeartbeatResult:
        group = self._group(r.group_id, r.member_epoch == 0)
        member_id = r.member_id or _kafka_uuid()
        if len(group.members) >= self.consumer_config.max_size and member_id not in group.members:
            raise ConsumerError(
                codes.GROUP_MAX_SIZE_REACHED,
                "The consumer group has reached its maximum capacity of "
                f"{self.consumer_config.max_size} members.",
            )
        member = self._member(group, r, member_id)
        updated = _updated(member, r)
        bump = group.group_epoch == 0 or (
            updated.subscribed_topic_names != member.subscribed_topic_names
            or updated.subscribed_topic_regex != member.subscribed_topic_regex
        )
        group.members[member_id] = updated
        self._refresh_epoch(group, bump)
        if group.group_epoch > group.assignment_epoch:
            self._assign(group)
        target = group.target.get(member_id, {})
        reconciled = updated
        if not updated.is_reconciled_to(group.assignment_epoch):
            reconciled = reconcile(
                updated, group.assignment_epoch, target, group.partition_epoch, r.owned
            )
            group.members[member_id] = reconciled
            if reconciled != updated:
                self._rebalance_timer(group, reconciled)
        self._session_timer(group.group_id, member_id)
        full = (
            r.rebalance_timeout_ms != -1
            and (r.subscribed_topic_names is not None or r.subscribed_topic_regex is not None)
            and r.owned is not None
        )
        send = r.member_epoch == 0 or full or reconciled.assigned != member.assigned
        return ConsumerHeartbeatResult(
            codes.NONE,
            member_id=member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self.consumer_config.heartbeat_interval_ms,
            assignment=dict(reconciled.assigned) if send else None,
        )

    def _refresh_epoch(self, group: ConsumerGroup, bump: bool) -> None:
        """Move the group epoch on when asked to or when the subscribed topics changed."""
        metadata = group.subscribed_topics(self.topic_partitions())
        if bump or metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            group.group_epoch += 1

    def _assign(self, group: ConsumerGroup) -> None:
        """A new target assignment, the input built in the orders Kafka's
        ``TargetAssignmentBuilder`` hands its assignor (see ``assignors``)."""
        topics = self.topic_partitions()
        ids = self.topic_ids()

        def topic_hash(name: str) -> int:
            raw = ids.get(name)
            return java_string_hash(name) if raw is None else java_uuid_hash(raw)

        default = self.consumer_config.assignors[0]
        assignor = ASSIGNORS[group.preferred_assignor(default)]
        members = java_hash_order(group.members.values(), lambda m: java_string_hash(m.member_id))
        specs = []
        for m in members:
            subscribed = sorted(member_topics(m, topics))
            current = group.target.get(m.member_id, {})
            specs.append(
                MemberSpec(
                    m.member_id,
                    m.instance_id,
                    tuple(java_hash_order(subscribed, topic_hash, presized=True)),
                    {t: current[t] for t in java_hash_order(sorted(current), topic_hash)},
                )
            )
        spec = AssignmentSpec(tuple(specs), group.subscribed_topics(topics))
        result = assignor.assign(spec)
        group.target = {
            member_id: {t: frozenset(p) for t, p in parts.items() if p}
            for member_id, parts in result.items()
        }
        group.assignment_epoch = group.group_epoch

    # -- leaving and fencing ----------------------------------------------------------

    def _leave(self, r: ConsumerHeartbeat) -> ConsumerHeartbeatResult:
        group = self._group(r.group_id, False)
        if r.instance_id is None:
            member = group.members.get(r.member_id)
            if member is None:
                raise _unknown(r.member_id, group.group_id)
        else:
            member = group.static_member(r.instance_id)
            if member is None:
                raise ConsumerError(
                    codes.UNKNOWN_MEMBER_ID, f"Instance id {r.instance_id} is unknown."
                )
            if member.member_id != r.member_id:
                raise ConsumerError(
                    codes.FENCED_INSTANCE_ID,
                    f"Static member {r.member_id} with instance id {r.instance_id} is fenced "
                    f"by existing member {member.member_id}.",
                )
            if r.member_epoch == STATIC_LEAVE:
                group.members[member.member_id] = replace(
                    member, member_epoch=STATIC_LEAVE, pending_revocation={}
                )
                return ConsumerHeartbeatResult(
                    codes.NONE, member_id=member.member_id, member_epoch=STATIC_LEAVE
                )
        self._fence(group, member.member_id)
        return ConsumerHeartbeatResult(codes.NONE, member_id=r.member_id, member_epoch=LEAVE)

    def _fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member; the group epoch moves on so the others are reassigned."""
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        group.subscription_metadata = group.subscribed_topics(self.topic_partitions())
        group.group_epoch += 1
        self._cancel_member_timers(group.group_id, member_id)

    # -- timers -------------------------------------------------------------------------

    def _session_timer(self, group_id: str, member_id: str) -> None:
        self.timers.schedule(
            ("consumer-session", group_id, member_id),
            self.now() + self.consumer_config.session_timeout_ms,
            lambda: self._expire(group_id, member_id, None),
        )

    def _rebalance_timer(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        key = ("consumer-rebalance", group.group_id, member.member_id)
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            self.timers.cancel(key)
            return
        epoch, group_id, member_id = member.member_epoch, group.group_id, member.member_id
        self.timers.schedule(
            key,
            self.now() + member.rebalance_timeout_ms,
            lambda: self._expire(group_id, member_id, epoch),
        )

    def _expire(self, group_id: str, member_id: str, epoch: int | None) -> None:
        """Session expiry (``epoch`` None) or a missed revocation at ``epoch``."""
        group = self.consumer_groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            return
        if epoch is not None and member.member_epoch != epoch:
            return
        before = snapshot(group)
        self._fence(group, member_id)
        if self._persist(group_id, before, None):
            _log.warning("fencing %s of %s was not written", member_id, group_id)

    def _cancel_member_timers(self, group_id: str, member_id: str) -> None:
        self.timers.cancel(("consumer-session", group_id, member_id))
        self.timers.cancel(("consumer-rebalance", group_id, member_id))


def _unknown(member_id: str, group_id: str) -> ConsumerError:
    return ConsumerError(
        codes.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}."
    )


def _subset(owned: Partitions | None, assigned: Partitions) -> bool:
    if owned is None:
        return False
    return all(parts <= assigned.get(topic, frozenset()) for topic, parts in owned.items())


def _check_epoch(member: ConsumerMember, received: int, owned: Partitions | None) -> None:
    """``throwIfConsumerGroupMemberEpochIsInvalid``."""
    current = member.member_epoch
    if received > current or (
        received < current
        and (received != member.previous_member_epoch or not _subset(owned, member.assigned))
    ):
        side = "greater" if received > current else "smaller"
        raise ConsumerError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a {side} member epoch ({received}) than the one "
            f"known by the group coordinator ({current}). The member must abandon all its "
            "partitions and rejoin.",
        )


def _updated(member: ConsumerMember, r: ConsumerHeartbeat) -> ConsumerMember:
    """The member with the fields the heartbeat changed (null: unchanged)."""

    def pick(new: object, old: object) -> object:
        return old if new is None else new

    return replace(
        member,
        instance_id=pick(r.instance_id, member.instance_id),  # type: ignore[arg-type]
        rack_id=pick(r.rack_id, member.rack_id),  # type: ignore[arg-type]
        rebalance_timeout_ms=(
            member.rebalance_timeout_ms if r.rebalance_timeout_ms == -1 else r.rebalance_timeout_ms
        ),
        server_assignor=pick(r.server_assignor, member.server_assignor),  # type: ignore[arg-type]
        subscribed_topic_names=(
            member.subscribed_topic_names
            if r.subscribed_topic_names is None
            else tuple(sorted(set(r.subscribed_topic_names)))
        ),
        subscribed_topic_regex=pick(r.subscribed_topic_regex, member.subscribed_topic_regex),  # type: ignore[arg-type]
        client_id=r.client_id,
        client_host=r.client_host,
    )
