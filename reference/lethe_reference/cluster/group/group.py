"""The in-memory classic group: members, generation, protocol, waiting replies.

Theory of operation
-------------------
A :class:`ClassicGroup` holds what Kafka's ``ClassicGroup`` holds and answers
the questions the rebalance logic asks (do all members support a protocol, have
all members rejoined, which protocol wins the vote). It never decides what to do
next: the coordinator does, and it moves the group only through
:meth:`ClassicGroup.fire`, which consults the transition table in ``state``.

Members keep their JoinGroup/SyncGroup :class:`Pending` replies while they wait
(``join_pending`` / ``sync_pending``); a member with a ``join_pending`` is
"awaiting join". ``pending_members`` are ids handed out with MEMBER_ID_REQUIRED
that have not joined yet; ``pending_sync`` are members that got their JoinGroup
reply for this generation and have not sent SyncGroup yet.

Not task-safe: the coordinator is single-threaded (sans-IO), as Kafka runs each
``__consumer_offsets`` partition's coordinator on one thread at a time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import (
    JoinMember,
    JoinResult,
    Protocols,
    SyncResult,
)
from lethe_reference.cluster.group.state import GroupEvent, GroupState, next_state
from lethe_reference.cluster.group.support import Pending

__all__ = ["ClassicGroup", "Member"]


@dataclass(slots=True, eq=False)
class Member:
    """One member of a classic group."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    join_pending: Pending[JoinResult] | None = None
    sync_pending: Pending[SyncResult] | None = None
    #: joined during the current rebalance and never got a JoinGroup reply
    is_new: bool = False

    @property
    def awaiting_join(self) -> bool:
        return self.join_pending is not None

    @property
    def protocol_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.protocols)

    def metadata(self, protocol: str) -> bytes:
        """This member's metadata for ``protocol`` (b"" if it does not support it)."""
        return next((data for name, data in self.protocols if name == protocol), b"")

    def vote(self, candidates: set[str]) -> str:
        """Its most preferred protocol among ``candidates``."""
        return next(name for name in self.protocol_names if name in candidates)

    def has_satisfied_heartbeat(self) -> bool:
        """Kafka's rule: members parked in JoinGroup/SyncGroup need no heartbeat,
        except new members (they can be expired while awaiting join)."""
        if self.is_new:
            return False
        return self.awaiting_join or self.sync_pending is not None


class ClassicGroup:
    """A classic group's state (see the module docstring)."""

    def __init__(self, group_id: str, now_ms: int, state: GroupState = GroupState.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state: GroupState | None = None
        self.state_timestamp = now_ms
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.pending_members: set[str] = set()
        self.pending_sync: set[str] = set()
        self.new_member_added = False
        self._supported: Counter[str] = Counter()

    def __repr__(self) -> str:
        return (
            f"ClassicGroup({self.group_id!r}, {self.state.value}, gen={self.generation}, "
            f"members={list(self.members)})"
        )

    def fire(self, event: GroupEvent, now_ms: int) -> None:
        """Move along the transition table (IllegalTransitionError if not allowed)."""
        target = next_state(self.state, event)
        self.previous_state, self.state = self.state, target
        self.state_timestamp = now_ms

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

    # -- members ------------------------------------------------------------

    def add(self, member: Member) -> None:
        """Add a member (its protocol type becomes the group's if it is the first)."""
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._supported.update(member.protocol_names)
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        """Drop a member or pending member; the leader passes to the next member."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self._supported.subtract(member.protocol_names)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def update_protocols(self, member: Member, protocols: Protocols) -> None:
        self._supported.subtract(member.protocol_names)
        member.protocols = protocols
        self._supported.update(member.protocol_names)

    def supports_protocols(self, protocol_type: str, names: tuple[str, ...]) -> bool:
        """Whether a member with these protocols may join (Kafka's rule)."""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and any(
            self._supported[name] == len(self.members) for name in names
        )

    def select_protocol(self) -> str:
        """The protocol all members support that most members prefer.

        Ties go to the protocol the leader prefers most (Kafka leaves ties to
        hash order; any choice among them is valid)."""
        candidates = {name for name, count in self._supported.items() if count == len(self.members)}
        votes = Counter(member.vote(candidates) for member in self.members.values())
        best = max(votes.values())
        leader = self.members.get(self.leader_id or "")
        order = leader.protocol_names if leader else tuple(votes)
        return next(name for name in (*order, *votes) if votes.get(name) == best)

    # -- rebalance questions ------------------------------------------------

    @property
    def awaiting_join_count(self) -> int:
        return sum(1 for member in self.members.values() if member.awaiting_join)

    def has_all_members_joined(self) -> bool:
        return self.awaiting_join_count == len(self.members) and not self.pending_members

    def not_yet_rejoined(self) -> list[Member]:
        return [member for member in self.members.values() if not member.awaiting_join]

    def rebalance_timeout_ms(self) -> int:
        """The longest rebalance timeout of the members (0 for no member)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def can_rebalance(self) -> bool:
        return self.state in (GroupState.EMPTY, GroupState.STABLE, GroupState.COMPLETING_REBALANCE)

    def join_members(self) -> tuple[JoinMember, ...]:
        """What the leader's JoinGroup response lists: every member's metadata."""
        protocol = self.protocol_name or ""
        return tuple(
            JoinMember(m.member_id, m.group_instance_id, m.metadata(protocol))
            for m in self.members.values()
        )

    def join_result(self, member_id: str, *, with_members: bool) -> JoinResult:
        """A successful JoinGroup reply for the current generation."""
        return JoinResult(
            error_code=codes.NONE,
            member_id=member_id,
            generation_id=self.generation,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader=self.leader_id or "",
            members=self.join_members() if with_members else (),
        )

    def complete_join(self, member: Member, result: JoinResult) -> bool:
        """Hand a waiting member its JoinGroup reply; False if it was not waiting."""
        pending, member.join_pending = member.join_pending, None
        if pending is None:
            return False
        pending.complete(result)
        return True
