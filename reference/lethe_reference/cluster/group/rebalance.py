"""The rebalance machinery: starting, completing and timing out join and sync phases.

Theory of operation
-------------------
This is Kafka 4.0's classic-group logic (``GroupMetadataManager``), event by event:

* **prepare** (:meth:`RebalanceLogic._prepare_rebalance`): waiting SyncGroups are
  answered REBALANCE_IN_PROGRESS, the group fires ``rebalance``. From Empty it
  is the *initial* rebalance: the join phase waits
  ``group.initial.rebalance.delay.ms`` and, while new members keep arriving,
  extends by that delay until the rebalance timeout is used up. Otherwise it
  completes as soon as every member has rejoined, or after the rebalance
  timeout (the longest of the members').
* **complete join** (:meth:`RebalanceLogic._complete_join`): members that did
  not rejoin are dropped, the generation goes up; with members the group fires
  ``join-complete``, the most voted common protocol is chosen, every waiting
  JoinGroup is answered (the leader's with all members' metadata) and a sync
  deadline (the rebalance timeout) starts; without members it fires
  ``join-complete-empty`` and the empty generation is written.
* **session expiry**: each member has a heartbeat deadline (its session
  timeout; the new-member join timeout while a new member waits in JoinGroup).
  When it passes and the member is not parked in JoinGroup/SyncGroup, the member
  is removed, which rebalances the group (or completes the join phase).
* **sync expiry**: members that got their JoinGroup reply but sent no SyncGroup
  before the deadline are removed and the group rebalances.
"""

from __future__ import annotations

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import JoinResult, SyncResult
from lethe_reference.cluster.group.group import ClassicGroup, Member
from lethe_reference.cluster.group.persistence import group_record
from lethe_reference.cluster.group.runtime import CoordinatorRuntime
from lethe_reference.cluster.group.state import GroupEvent, GroupState

__all__ = ["RebalanceLogic"]

_S = GroupState


class RebalanceLogic(CoordinatorRuntime):
    """Join/sync phase transitions and their timers."""

    # -- starting -----------------------------------------------------------

    def _rebalance_or_complete(self, group: ClassicGroup) -> None:
        """Kafka's ``maybePrepareRebalanceOrCompleteJoin``."""
        if group.can_rebalance():
            self._prepare_rebalance(group)
        else:
            self._maybe_complete_join(group)

    def _prepare_rebalance(self, group: ClassicGroup) -> None:
        if group.is_(_S.COMPLETING_REBALANCE):
            self._reset_and_propagate(group, codes.REBALANCE_IN_PROGRESS)
        group.pending_sync.clear()
        self.timers.cancel(("sync", group.group_id))
        initial = group.is_(_S.EMPTY)
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_initial_join(group.group_id, delay, remaining)
        group.fire(GroupEvent.REBALANCE, self.now())
        if not initial:
            self._complete_join_or_schedule(group)

    def _schedule_initial_join(self, group_id: str, delay: int, remaining: int) -> None:
        self.timers.schedule(
            ("join", group_id),
            self.now() + delay,
            lambda: self._initial_join_due(group_id, delay, remaining),
        )

    def _initial_join_due(self, group_id: str, delay: int, remaining: int) -> None:
        group = self.groups.get(group_id)
        if group is None:
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            next_delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
            self._schedule_initial_join(group_id, next_delay, max(remaining - delay, 0))
        else:
            self._complete_join(group)

    def _complete_join_or_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self._complete_join(group)
        else:
            self._schedule_join_timeout(group)

    def _schedule_join_timeout(self, group: ClassicGroup) -> None:
        group_id = group.group_id
        self.timers.schedule(
            ("join", group_id),
            self.now() + group.rebalance_timeout_ms(),
            lambda: self._join_timeout_due(group_id),
        )

    def _join_timeout_due(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        if group is not None:
            self._complete_join(group)

    def _maybe_complete_join(self, group: ClassicGroup) -> None:
        """Kafka's ``maybeCompleteJoinPhase``: never early in an initial rebalance."""
        if not group.is_(_S.PREPARING_REBALANCE) or group.previous_state is _S.EMPTY:
            return
        if group.has_all_members_joined():
            self._complete_join(group)

    # -- completing ---------------------------------------------------------

    def _complete_join(self, group: ClassicGroup) -> None:
        self.timers.cancel(("join", group.group_id))
        if not group.is_(_S.PREPARING_REBALANCE):
            return  # a stale timer (Kafka: "Group ... is dead, skipping rebalance stage")
        for member in group.not_yet_rejoined():
            if member.group_instance_id is None:
                self._drop(group, member.member_id)
        if not self._elect_joined_leader(group) and group.members:
            self._schedule_join_timeout(group)  # nobody rejoined: wait for expiry
            return
        group.generation += 1
        now = self.now()
        if group.members:
            group.protocol_name = group.select_protocol()
            group.fire(GroupEvent.JOIN_COMPLETE, now)
        else:
            group.protocol_name = None
            group.fire(GroupEvent.JOIN_COMPLETE_EMPTY, now)
        group.pending_sync.clear()
        if group.is_(_S.EMPTY):
            # Kafka only warns if this write fails: an empty generation holds nothing.
            self._write(group.group_id, [group_record(group, {}, now)])
            return
        for member in list(group.members.values()):
            result = group.join_result(
                member.member_id, with_members=self._is_leader(group, member)
            )
            group.complete_join(member, result)
            self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        self._schedule_sync_expiry(group)

    @staticmethod
    def _is_leader(group: ClassicGroup, member: Member) -> bool:
        return group.leader_id == member.member_id

    @staticmethod
    def _elect_joined_leader(group: ClassicGroup) -> bool:
        """Kafka's ``maybeElectNewJoinedLeader``: a leader that did not rejoin
        hands over to the first member that did."""
        if group.leader_id is None or group.leader_id not in group.members:
            return False
        if group.members[group.leader_id].awaiting_join:
            return True
        for member in group.members.values():
            if member.awaiting_join:
                group.leader_id = member.member_id
                return True
        return False

    def _schedule_sync_expiry(self, group: ClassicGroup) -> None:
        group_id, generation = group.group_id, group.generation
        self.timers.schedule(
            ("sync", group_id),
            self.now() + group.rebalance_timeout_ms(),
            lambda: self._sync_expired(group_id, generation),
        )

    def _sync_expired(self, group_id: str, generation: int) -> None:
        group = self.groups.get(group_id)
        if group is None or group.generation != generation:
            return
        if group.is_(_S.COMPLETING_REBALANCE, _S.STABLE) and group.pending_sync:
            for member_id in list(group.pending_sync):
                self._drop(group, member_id)
            self._prepare_rebalance(group)

    # -- assignment ---------------------------------------------------------

    def _propagate(self, group: ClassicGroup, error: int) -> None:
        """Answer every waiting SyncGroup (with its assignment, or ``error``)."""
        ok = error == codes.NONE
        for member in group.members.values():
            if member.sync_pending is None:
                continue
            result = SyncResult(
                error_code=error,
                assignment=member.assignment,
                protocol_type=group.protocol_type if ok else None,
                protocol_name=group.protocol_name if ok else None,
            )
            self._complete_sync(member, result)
            self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    def _reset_and_propagate(self, group: ClassicGroup, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate(group, error)

    # -- members leaving ----------------------------------------------------

    def _drop(self, group: ClassicGroup, member_id: str) -> Member | None:
        """Remove a member with its timer; a reply it still waits for says
        UNKNOWN_MEMBER_ID (Kafka answers the JoinGroup so; the SyncGroup too here,
        where Kafka would leave it unanswered)."""
        self.timers.cancel(("heartbeat", group.group_id, member_id))
        member = group.members.get(member_id)
        if member is not None:
            group.complete_join(member, JoinResult(codes.UNKNOWN_MEMBER_ID, ""))
            self._complete_sync(member, SyncResult(codes.UNKNOWN_MEMBER_ID))
        return group.remove(member_id)

    def _remove_member_and_update(self, group: ClassicGroup, member_id: str) -> None:
        """Kafka's ``removeMemberAndUpdateClassicGroup`` (session expiry)."""
        self._drop(group, member_id)
        if group.is_(_S.STABLE, _S.COMPLETING_REBALANCE):
            self._rebalance_or_complete(group)
        elif group.is_(_S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(group)

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or group.is_(_S.DEAD):
            return
        if member_id in group.pending_members:
            group.remove(member_id)
            if group.is_(_S.PREPARING_REBALANCE) and group.has_all_members_joined():
                self._complete_join(group)
            return
        member = group.members.get(member_id)
        if member is not None and not member.has_satisfied_heartbeat():
            self._remove_member_and_update(group, member_id)
