"""The transition table, and random client behaviour that must never break the coordinator."""

from __future__ import annotations

import pytest
from group_support import GROUP, RANGE, Harness
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from lethe_reference.cluster.group import (
    CommitOffset,
    GroupConfig,
    GroupEvent,
    GroupState,
    IllegalTransitionError,
    JoinResult,
    LeaveMember,
    OffsetCommitRequest,
    Pending,
    SyncResult,
)
from lethe_reference.cluster.group.state import TRANSITIONS, mermaid, next_state

S = GroupState

# Kafka 4.0 ClassicGroupState: each state's valid previous states.
KAFKA_VALID_PREVIOUS = {
    S.EMPTY: {S.PREPARING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
}


def test_table_allows_exactly_kafkas_moves() -> None:
    moves = {(source, target) for (source, _), target in TRANSITIONS.items()}
    kafka = {(p, target) for target, previous in KAFKA_VALID_PREVIOUS.items() for p in previous}
    assert moves == kafka


@pytest.mark.parametrize("state", list(GroupState))
@pytest.mark.parametrize("event", list(GroupEvent))
def test_event_without_transition_is_a_typed_error(state: GroupState, event: GroupEvent) -> None:
    if (state, event) in TRANSITIONS:
        assert next_state(state, event) is TRANSITIONS[state, event]
    else:
        with pytest.raises(IllegalTransitionError) as info:
            next_state(state, event)
        assert (info.value.state, info.value.event) == (state, event)


def test_diagram_is_generated_from_the_table() -> None:
    diagram = mermaid()
    assert diagram.count("-->") == len(TRANSITIONS) + 1
    assert "CompletingRebalance --> Stable: assignment-stored" in diagram


def test_failed_write_of_a_new_group_reverts_it() -> None:
    h = Harness(fail_with=6)  # NOT_LEADER_OR_FOLLOWER
    result = h.join("a")
    assert isinstance(result, JoinResult) and result.error_code == 16  # NOT_COORDINATOR
    assert h.coordinator.list_groups() == []


CLIENTS = st.sampled_from(["a", "b", "c"])


class RandomClients(RuleBasedStateMachine):
    """Three clients doing anything in any order, with time jumps and restarts."""

    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(GroupConfig(group_initial_rebalance_delay_ms=500))
        self.ids: dict[str, str] = {}
        self.generations: dict[str, int] = {}
        self.pendings: list[Pending[JoinResult] | Pending[SyncResult]] = []
        self.highest_generation = 0

    def _joined(self, client: str, result: JoinResult) -> None:
        if result.error_code in (0, 79):
            self.ids[client] = result.member_id
        if result.error_code == 0:
            self.generations[client] = result.generation_id
        elif result.error_code == 25:
            self.ids.pop(client, None)

    @rule(
        client=CLIENTS,
        session=st.sampled_from([6_000, 10_000, 60_000]),
        rebalance=st.sampled_from([1_000, 30_000]),
        extra=st.booleans(),
    )
    def join(self, client: str, session: int, rebalance: int, extra: bool) -> None:
        protocols = (("roundrobin", b"rr"), *RANGE) if extra else RANGE
        result = self.h.join(
            client, self.ids.get(client, ""), session_timeout_ms=session,
            rebalance_timeout_ms=rebalance, protocols=protocols,
        )  # fmt: skip
        if isinstance(result, Pending):
            self.pendings.append(result)
            result.add_done_callback(lambda r: self._joined(client, r))
        else:
            self._joined(client, result)

    @rule(client=CLIENTS)
    def sync(self, client: str) -> None:
        member = self.ids.get(client, "")
        assignment = {m: client.encode() for m in self.ids.values()}
        result = self.h.sync(member, self.generations.get(client, -1), assignment)
        if isinstance(result, Pending):
            self.pendings.append(result)

    @rule()
    def leader_syncs(self) -> None:
        """The leader's SyncGroup at the group's generation (steers toward Stable)."""
        group = self.h.coordinator.groups.get(GROUP)
        leader = next((c for c, m in self.ids.items() if group and m == group.leader_id), None)
        if leader is not None:
            self.generations[leader] = group.generation if group else -1
            self.sync(leader)

    @rule(client=CLIENTS)
    def heartbeat(self, client: str) -> None:
        code = self.h.coordinator.heartbeat(
            GROUP, self.ids.get(client, ""), self.generations.get(client, -1)
        )
        assert code in (0, 22, 25, 27)

    @rule(client=CLIENTS)
    def leave(self, client: str) -> None:
        self.h.coordinator.leave_group(GROUP, [LeaveMember(self.ids.pop(client, ""))])

    @rule(client=CLIENTS, offset=st.integers(0, 100), anonymous=st.booleans())
    def commit(self, client: str, offset: int, anonymous: bool) -> None:
        member = "" if anonymous else self.ids.get(client, "")
        generation = -1 if anonymous else self.generations.get(client, -1)
        request = OffsetCommitRequest(GROUP, {("t", 0): CommitOffset(offset)}, member, generation)
        errors = self.h.coordinator.commit_offsets(request)
        assert set(errors.values()) <= {0, 22, 25, 27, 69}

    @rule(ms=st.sampled_from([0, 1, 499, 500, 999, 5_999, 6_000, 10_000, 30_000, 61_000]))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    @rule()
    def restart(self) -> None:
        committed = self.h.coordinator.committed(GROUP)
        partition = self.h.coordinator.partition_for(GROUP)
        self.h.coordinator.load(partition, self.h.records())
        assert self.h.coordinator.committed(GROUP) == committed
        # A generation not yet written (no leader SyncGroup, no empty generation)
        # is lost on a restart, as in Kafka: the last written one comes back.
        reloaded = self.h.coordinator.groups.get(GROUP)
        self.highest_generation = 0 if reloaded is None else reloaded.generation

    @invariant()
    def group_is_consistent(self) -> None:
        group = self.h.coordinator.groups.get(GROUP)
        if group is None:
            return
        members = group.members.values()
        assert group.state is not S.DEAD
        if group.state is S.EMPTY:
            assert not group.members
        if group.members:
            assert group.leader_id in group.members
        if any(m.awaiting_join for m in members):
            assert group.state is S.PREPARING_REBALANCE
        if any(m.sync_pending is not None for m in members):
            assert group.state is S.COMPLETING_REBALANCE
        assert group.generation >= self.highest_generation
        self.highest_generation = group.generation

    @invariant()
    def no_reply_is_lost(self) -> None:
        group = self.h.coordinator.groups.get(GROUP)
        waiting = set()
        if group is not None:
            for m in group.members.values():
                waiting.update(id(p) for p in (m.join_pending, m.sync_pending) if p is not None)
        for pending in self.pendings:
            assert pending.done or id(pending) in waiting


RandomClients.TestCase.settings = settings(max_examples=80, stateful_step_count=50, deadline=None)
test_random_clients_never_break_the_coordinator = RandomClients.TestCase
