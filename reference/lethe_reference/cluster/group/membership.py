"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup for classic groups.

Theory of operation
-------------------
Each request is checked the way Kafka 4.0 checks it, in Kafka's order, and the
first failing check is the answer. Then it is turned into events for the
rebalance logic. The JoinGroup of a known member in a group that is not
rebalancing, or of a follower whose metadata did not change, is answered at
once with the current generation; other joins wait (a :class:`Pending`). A
SyncGroup waits while the group is CompletingRebalance until the leader's
assignment is stored; the leader's SyncGroup stores it (a GroupMetadata record)
and answers every waiting member.

A member without an id is given ``<client_id>-<uuid>``. With JoinGroup v4+
(``require_known_member_id``) that id comes back with MEMBER_ID_REQUIRED and the
member must join again with it within its session timeout. Static members
(``group.instance.id``) are admitted without that round trip; a second member
with the same instance id replaces the first (Kafka's fencing of an old static
member on rejoin, without its "no rebalance" optimisation).
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import (
    JoinRequest,
    JoinResult,
    LeaveMember,
    LeaveResult,
    MemberLeft,
    SyncRequest,
    SyncResult,
)
from lethe_reference.cluster.group.group import ClassicGroup, Member
from lethe_reference.cluster.group.persistence import empty_group_record, group_record
from lethe_reference.cluster.group.rebalance import RebalanceLogic
from lethe_reference.cluster.group.state import GroupEvent, GroupState
from lethe_reference.cluster.group.support import Pending

__all__ = ["MembershipLogic"]

_S = GroupState


class MembershipLogic(RebalanceLogic):
    """The membership requests (see the module docstring)."""

    def _validate_member(self, group: ClassicGroup, member_id: str, instance: str | None) -> int:
        if instance is not None:
            owner = next(
                (m.member_id for m in group.members.values() if m.group_instance_id == instance),
                None,
            )
            if owner is None:
                return codes.UNKNOWN_MEMBER_ID
            if owner != member_id:
                return codes.FENCED_INSTANCE_ID
        return codes.NONE if member_id in group.members else codes.UNKNOWN_MEMBER_ID

    def _precheck(self, group_id: str) -> int:
        if not group_id:
            return codes.INVALID_GROUP_ID
        if self._not_coordinator(group_id):
            return codes.NOT_COORDINATOR
        return codes.NONE

    # -- JoinGroup ------------------------------------------------------------

    def join_group(self, request: JoinRequest) -> JoinResult | Pending[JoinResult]:
        """JoinGroup: an immediate result, or a pending one completed by the rebalance."""
        self._advance()
        error = self._precheck(request.group_id)
        timeout = request.session_timeout_ms
        cfg = self.config
        # GroupCoordinatorService.joinGroup checks the timeout before it routes the request
        # to the group's partition: it wins over NOT_COORDINATOR, not over INVALID_GROUP_ID.
        if error != codes.INVALID_GROUP_ID and not (
            cfg.group_min_session_timeout_ms <= timeout <= cfg.group_max_session_timeout_ms
        ):
            error = codes.INVALID_SESSION_TIMEOUT
        if error:
            return JoinResult(error, request.member_id)
        pending: Pending[JoinResult] = Pending(f"JoinGroup {request.group_id}")
        self._join(request, pending)
        self._advance()
        return pending.result() if pending.done else pending

    def _join(self, request: JoinRequest, pending: Pending[JoinResult]) -> None:
        group = self.groups.get(request.group_id)
        unknown = request.member_id == ""
        if group is None:
            if not unknown:
                pending.complete(JoinResult(codes.UNKNOWN_MEMBER_ID, request.member_id))
                return
            group = self.groups[request.group_id] = ClassicGroup(request.group_id, self.now())
            self._write_new_group(group, pending)
            if pending.done:
                return
        if not self._accepts(group, request.member_id):
            group.remove(request.member_id)
            pending.complete(JoinResult(codes.GROUP_MAX_SIZE_REACHED, ""))
        elif unknown:
            self._join_new_member(group, request, pending)
        else:
            self._join_existing_member(group, request, pending)

    def _write_new_group(self, group: ClassicGroup, pending: Pending[JoinResult]) -> None:
        error = self._write(group.group_id, [empty_group_record(group, self.now())])
        if error:  # Kafka reverts the new group and answers with the write's error
            del self.groups[group.group_id]
            pending.complete(JoinResult(codes.group_append_error(error), ""))

    def _accepts(self, group: ClassicGroup, member_id: str) -> bool:
        limit = self.config.group_max_size
        member = group.members.get(member_id)
        if group.is_(_S.EMPTY, _S.DEAD):
            return True
        if group.is_(_S.PREPARING_REBALANCE):
            return (
                member is not None and member.awaiting_join
            ) or group.awaiting_join_count < limit
        return member is not None or len(group.members) < limit

    def _join_new_member(
        self, group: ClassicGroup, request: JoinRequest, pending: Pending[JoinResult]
    ) -> None:
        if group.is_(_S.DEAD):
            pending.complete(JoinResult(codes.COORDINATOR_NOT_AVAILABLE, ""))
        elif not group.supports_protocols(request.protocol_type, _names(request)):
            pending.complete(JoinResult(codes.INCONSISTENT_GROUP_PROTOCOL, ""))
        else:
            prefix = request.group_instance_id or request.client_id
            member_id = f"{prefix}-{self._new_uuid()}"
            if request.group_instance_id is not None:
                self._fence_static_member(group, request.group_instance_id)
                self._add_member(group, request, member_id, pending)
            elif request.require_known_member_id:
                group.pending_members.add(member_id)
                self._schedule_heartbeat(group, member_id, request.session_timeout_ms)
                pending.complete(JoinResult(codes.MEMBER_ID_REQUIRED, member_id))
            else:
                self._add_member(group, request, member_id, pending)

    def _fence_static_member(self, group: ClassicGroup, instance: str) -> None:
        for member in list(group.members.values()):
            if member.group_instance_id == instance:
                group.complete_join(member, JoinResult(codes.FENCED_INSTANCE_ID, member.member_id))
                self._drop(group, member.member_id)

    def _join_existing_member(
        self, group: ClassicGroup, request: JoinRequest, pending: Pending[JoinResult]
    ) -> None:
        member_id = request.member_id
        if group.is_(_S.DEAD):
            pending.complete(JoinResult(codes.COORDINATOR_NOT_AVAILABLE, member_id))
        elif not group.supports_protocols(request.protocol_type, _names(request)):
            pending.complete(JoinResult(codes.INCONSISTENT_GROUP_PROTOCOL, member_id))
        elif member_id in group.pending_members:
            self._add_member(group, request, member_id, pending)
        elif error := self._validate_member(group, member_id, request.group_instance_id):
            pending.complete(JoinResult(error, member_id))
        else:
            self._rejoin(group, group.members[member_id], request, pending)

    def _rejoin(
        self,
        group: ClassicGroup,
        member: Member,
        request: JoinRequest,
        pending: Pending[JoinResult],
    ) -> None:
        same = member.protocols == request.protocols
        leader = group.leader_id == member.member_id
        if group.is_(_S.COMPLETING_REBALANCE) and same:
            pending.complete(group.join_result(member.member_id, with_members=leader))
        elif group.is_(_S.STABLE) and same and not leader:
            pending.complete(group.join_result(member.member_id, with_members=False))
        elif group.is_(_S.PREPARING_REBALANCE, _S.COMPLETING_REBALANCE, _S.STABLE):
            self._update_member(group, member, request, pending)
        else:
            pending.complete(JoinResult(codes.UNKNOWN_MEMBER_ID, member.member_id))

    def _add_member(
        self,
        group: ClassicGroup,
        request: JoinRequest,
        member_id: str,
        pending: Pending[JoinResult],
    ) -> None:
        member = Member(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=request.client_id,
            client_host=request.client_host,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=request.protocols,
            join_pending=pending,
            is_new=True,
        )
        if group.is_(_S.PREPARING_REBALANCE) and group.previous_state is _S.EMPTY:
            group.new_member_added = True
        group.add(member)
        self._schedule_heartbeat(group, member_id, self.config.new_member_join_timeout_ms)
        self._rebalance_or_complete(group)

    def _update_member(
        self,
        group: ClassicGroup,
        member: Member,
        request: JoinRequest,
        pending: Pending[JoinResult],
    ) -> None:
        group.update_protocols(member, request.protocols)
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        superseded, member.join_pending = member.join_pending, pending
        if superseded is not None:  # a retried JoinGroup replaces the one still waiting
            superseded.complete(JoinResult(codes.REBALANCE_IN_PROGRESS, member.member_id))
        self._rebalance_or_complete(group)

    # -- SyncGroup ------------------------------------------------------------

    def sync_group(self, request: SyncRequest) -> SyncResult | Pending[SyncResult]:
        """SyncGroup: the member's assignment, now or once the leader has sent it."""
        self._advance()
        error = self._precheck(request.group_id)
        group = self.groups.get(request.group_id)
        if not error:
            error = codes.UNKNOWN_MEMBER_ID if group is None else self._check_sync(group, request)
        if error or group is None:
            return SyncResult(error)
        member = group.members[request.member_id]
        if group.is_(_S.STABLE):
            group.pending_sync.discard(member.member_id)
            return SyncResult(
                codes.NONE, member.assignment, group.protocol_type, group.protocol_name
            )
        pending: Pending[SyncResult] = Pending(f"SyncGroup {request.group_id}")
        self._complete_sync(member, SyncResult(codes.REBALANCE_IN_PROGRESS))  # a retry
        member.sync_pending = pending
        group.pending_sync.discard(member.member_id)
        if group.leader_id == member.member_id:
            self._store_assignment(group, dict(request.assignments))
        self._advance()
        return pending.result() if pending.done else pending

    def _check_sync(self, group: ClassicGroup, request: SyncRequest) -> int:
        if group.is_(_S.DEAD):
            return codes.COORDINATOR_NOT_AVAILABLE
        if error := self._validate_member(group, request.member_id, request.group_instance_id):
            return error
        if request.generation_id != group.generation:
            return codes.ILLEGAL_GENERATION
        if _differs(request.protocol_type, group.protocol_type) or _differs(
            request.protocol_name, group.protocol_name
        ):
            return codes.INCONSISTENT_GROUP_PROTOCOL
        if group.is_(_S.PREPARING_REBALANCE):
            return codes.REBALANCE_IN_PROGRESS
        return codes.NONE

    def _store_assignment(self, group: ClassicGroup, assignment: dict[str, bytes]) -> None:
        full = {member_id: assignment.get(member_id, b"") for member_id in group.members}
        error = self._write(group.group_id, [group_record(group, full, self.now())])
        if error:
            self._reset_and_propagate(group, codes.group_append_error(error))
            self._rebalance_or_complete(group)
            return
        for member_id, data in full.items():
            group.members[member_id].assignment = data
        self._propagate(group, codes.NONE)
        group.fire(GroupEvent.ASSIGNMENT_STORED, self.now())

    # -- Heartbeat ------------------------------------------------------------

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None = None,
    ) -> int:
        """Heartbeat: the error code of the response."""
        self._advance()
        error = self._precheck(group_id)
        group = self.groups.get(group_id)
        if error:
            return error
        if group is None:
            return codes.UNKNOWN_MEMBER_ID
        if group.is_(_S.DEAD):
            return codes.COORDINATOR_NOT_AVAILABLE
        if error := self._validate_member(group, member_id, group_instance_id):
            return error
        if generation_id != group.generation:
            return codes.ILLEGAL_GENERATION
        if group.is_(_S.EMPTY):
            return codes.UNKNOWN_MEMBER_ID
        member = group.members[member_id]
        self._schedule_heartbeat(group, member_id, member.session_timeout_ms)
        if group.is_(_S.PREPARING_REBALANCE):
            return codes.REBALANCE_IN_PROGRESS
        return codes.NONE

    # -- LeaveGroup -----------------------------------------------------------

    def leave_group(self, group_id: str, members: Sequence[LeaveMember]) -> LeaveResult:
        """LeaveGroup (v3+ shape: several members, an error per member)."""
        self._advance()
        error = self._precheck(group_id)
        group = self.groups.get(group_id)
        if error:
            return LeaveResult(error)
        if group is None:
            return LeaveResult(codes.UNKNOWN_MEMBER_ID)
        if group.is_(_S.DEAD):
            return LeaveResult(codes.COORDINATOR_NOT_AVAILABLE)
        answers = tuple(self._leave_one(group, leaving) for leaving in members)
        if any(answer.error_code == codes.NONE for answer in answers):
            if group.is_(_S.STABLE, _S.COMPLETING_REBALANCE):
                self._rebalance_or_complete(group)
            elif group.is_(_S.PREPARING_REBALANCE):
                self._maybe_complete_join(group)
        self._advance()
        return LeaveResult(codes.NONE, answers)

    def _leave_one(self, group: ClassicGroup, leaving: LeaveMember) -> MemberLeft:
        member_id, instance = leaving.member_id, leaving.group_instance_id
        if member_id == "":
            owner = next(
                (m.member_id for m in group.members.values() if m.group_instance_id == instance),
                None,
            )
            if instance is None or owner is None:
                return MemberLeft(member_id, instance, codes.UNKNOWN_MEMBER_ID)
            self._drop(group, owner)
        elif member_id in group.pending_members:
            group.remove(member_id)
            self.timers.cancel(("heartbeat", group.group_id, member_id))
        elif error := self._validate_member(group, member_id, instance):
            return MemberLeft(member_id, instance, error)
        else:
            self._drop(group, member_id)
        return MemberLeft(member_id, instance, codes.NONE)


def _names(request: JoinRequest) -> tuple[str, ...]:
    return tuple(name for name, _ in request.protocols)


def _differs(requested: str | None, current: str | None) -> bool:
    """Kafka's ``isProtocolInconsistent``: both known and different."""
    return requested is not None and current is not None and requested != current
