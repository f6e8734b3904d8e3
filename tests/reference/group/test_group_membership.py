"""Join, sync, heartbeat, leave and the timers, as Kafka 4.0's classic coordinator does them."""

from __future__ import annotations

from group_support import GROUP, RANGE, Harness, done
from lethe_reference.cluster.group import (
    GroupConfig,
    JoinResult,
    LeaveMember,
    Pending,
    SyncResult,
)

NONE, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 0, 22, 25, 27
NOT_COORDINATOR, INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT, MEMBER_ID_REQUIRED = 16, 24, 26, 79
INCONSISTENT_GROUP_PROTOCOL = 23


def stable_single(h: Harness) -> str:
    """One member that joined, synced and is Stable at generation 1."""
    member = h.new_member("a")
    joined = done(h.join("a", member))
    assert (joined.error_code, joined.generation_id, joined.leader) == (NONE, 1, member)
    assert done(h.sync(member, 1, {member: b"p0"})) == SyncResult(NONE, b"p0", "consumer", "range")
    return member


def state(h: Harness) -> str:
    return h.coordinator.describe_group(GROUP).state


def test_unknown_member_gets_member_id_required_with_client_id_prefix() -> None:
    h = Harness()
    result = h.join("my-client")
    assert result == JoinResult(MEMBER_ID_REQUIRED, "my-client-uuid1")
    assert state(h) == "Empty"


def test_join_without_known_member_id_requirement_joins_directly() -> None:
    h = Harness()
    result = done(h.join("old-client", require_known_member_id=False))
    assert (result.error_code, result.member_id, result.generation_id) == (
        NONE,
        "old-client-uuid1",
        1,
    )


def test_two_members_rebalance_and_share_the_leaders_assignment() -> None:
    h = Harness()
    a = stable_single(h)
    b = h.new_member("b")
    b_join = h.join("b", b)
    assert isinstance(b_join, Pending) and not b_join.done
    assert state(h) == "PreparingRebalance"
    assert h.coordinator.heartbeat(GROUP, a, 1) == REBALANCE_IN_PROGRESS
    a_join = done(h.join("a", a))  # the last member rejoins: the join phase completes
    b_result = b_join.result()
    assert (a_join.generation_id, b_result.generation_id) == (2, 2)
    assert a_join.leader == b_result.leader == a
    assert [m.member_id for m in a_join.members] == [a, b]
    assert [m.metadata for m in a_join.members] == [b"range-meta", b"range-meta"]
    assert b_result.members == ()
    b_sync = h.sync(b, 2)
    assert isinstance(b_sync, Pending) and not b_sync.done
    assert state(h) == "CompletingRebalance"
    a_sync = done(h.sync(a, 2, {a: b"p0", b: b"p1"}))
    assert (a_sync.assignment, b_sync.result().assignment) == (b"p0", b"p1")
    assert state(h) == "Stable"
    assert h.coordinator.heartbeat(GROUP, b, 2) == NONE


def test_stale_follower_sync_during_rebalance_is_told_to_rejoin() -> None:
    h = Harness()
    a = stable_single(h)
    b = h.new_member("b")
    h.join("b", b)
    assert done(h.sync(a, 1)) == SyncResult(REBALANCE_IN_PROGRESS)


def test_follower_without_changes_gets_current_generation_at_once() -> None:
    h = Harness()
    a = stable_single(h)
    b = h.new_member("b")
    b_join = h.join("b", b)
    done(h.join("a", a))
    h.sync(b, 2)
    done(h.sync(a, 2, {a: b"x", b: b"y"}))
    again = h.join("b", b)
    assert isinstance(again, JoinResult)
    assert (again.generation_id, again.members) == (2, ())
    assert isinstance(b_join, Pending) and b_join.done
    assert state(h) == "Stable"


def test_leader_rejoin_in_stable_starts_a_new_generation() -> None:
    h = Harness()
    a = stable_single(h)
    assert done(h.join("a", a)).generation_id == 2


def test_session_expiry_removes_the_member_and_empties_the_group() -> None:
    h = Harness()
    a = stable_single(h)
    h.advance(9_999)
    assert h.coordinator.heartbeat(GROUP, a, 1) == NONE  # resets the 10 s session
    h.advance(9_999)
    assert state(h) == "Stable"
    h.advance(1)
    described = h.coordinator.describe_group(GROUP)
    assert (described.state, described.members) == ("Empty", ())
    assert h.coordinator.heartbeat(GROUP, a, 1) == UNKNOWN_MEMBER_ID
    last = h.written()[-1].value
    assert (last.generation, last.protocol, last.leader, last.members) == (2, None, None, ())


def test_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout() -> None:
    h = Harness()
    a = stable_single(h)
    b = h.new_member("b")
    b_join = h.join("b", b)
    h.advance(9_000)
    h.coordinator.heartbeat(GROUP, a, 1)  # alive, but never rejoins
    h.advance(21_000)  # rebalance timeout 30 s after the rebalance began
    result = b_join.result() if isinstance(b_join, Pending) else b_join
    assert (result.error_code, result.generation_id, result.leader) == (NONE, 2, b)
    assert [m.member_id for m in result.members] == [b]
    assert h.coordinator.heartbeat(GROUP, a, 1) == UNKNOWN_MEMBER_ID


def test_pending_member_id_expires_after_its_session_timeout() -> None:
    h = Harness()
    stable_single(h)
    b = h.new_member("b")
    h.advance(10_000)
    assert done(h.join("b", b)).error_code == UNKNOWN_MEMBER_ID


def test_follower_that_never_syncs_is_removed_at_the_sync_deadline() -> None:
    h = Harness()
    a = stable_single(h)
    b = h.new_member("b")
    h.join("b", b, session_timeout_ms=60_000)  # outlives the 30 s sync deadline
    done(h.join("a", a))
    done(h.sync(a, 2, {a: b"x", b: b"y"}))
    for _ in range(5):
        h.advance(5_999)
        assert h.coordinator.heartbeat(GROUP, a, 2) == NONE
    h.advance(30_000 - 5 * 5_999 - 1)
    assert state(h) == "Stable"
    h.advance(1)
    assert state(h) == "PreparingRebalance"
    assert [m.member_id for m in h.coordinator.describe_group(GROUP).members] == [a]


def test_illegal_generation_for_heartbeat_and_sync() -> None:
    h = Harness()
    a = stable_single(h)
    assert h.coordinator.heartbeat(GROUP, a, 0) == ILLEGAL_GENERATION
    assert done(h.sync(a, 7)) == SyncResult(ILLEGAL_GENERATION)
    assert h.coordinator.heartbeat(GROUP, "nobody", 1) == UNKNOWN_MEMBER_ID
    assert h.coordinator.heartbeat("no-such-group", a, 1) == UNKNOWN_MEMBER_ID


def test_initial_rebalance_delay_waits_and_extends_for_new_members() -> None:
    h = Harness(GroupConfig(group_initial_rebalance_delay_ms=3_000))
    a = h.new_member("a")
    a_join = h.join("a", a)
    assert isinstance(a_join, Pending)
    h.advance(2_000)
    b = h.new_member("b")
    b_join = h.join("b", b)  # a new member during the delay extends it by 3 s
    h.advance(1_000)
    assert not a_join.done
    h.advance(2_999)
    assert not a_join.done
    h.advance(1)
    assert isinstance(b_join, Pending) and b_join.done and a_join.done
    assert a_join.result().generation_id == b_join.result().generation_id == 1


def test_leave_group_answers_per_member_and_rebalances() -> None:
    h = Harness()
    a = stable_single(h)
    result = h.coordinator.leave_group(GROUP, [LeaveMember(a), LeaveMember("ghost")])
    assert result.error_code == NONE
    assert [(m.member_id, m.error_code) for m in result.members] == [
        (a, NONE),
        ("ghost", UNKNOWN_MEMBER_ID),
    ]
    assert state(h) == "Empty"
    assert h.coordinator.leave_group("unknown", [LeaveMember(a)]).error_code == UNKNOWN_MEMBER_ID


def test_leaving_pending_member_is_accepted() -> None:
    h = Harness()
    b = h.new_member("b")
    result = h.coordinator.leave_group(GROUP, [LeaveMember(b)])
    assert [m.error_code for m in result.members] == [NONE]
    assert done(h.join("b", b)).error_code == UNKNOWN_MEMBER_ID


def test_requests_rejected_before_touching_the_group() -> None:
    h = Harness()
    assert done(h.join("a", group_id="")).error_code == INVALID_GROUP_ID
    assert done(h.join("a", session_timeout_ms=5_999)).error_code == INVALID_SESSION_TIMEOUT
    assert done(h.join("a", session_timeout_ms=1_800_001)).error_code == INVALID_SESSION_TIMEOUT
    a = stable_single(h)
    other = done(h.join("c", protocol_type="connect"))
    assert other.error_code == INCONSISTENT_GROUP_PROTOCOL
    assert done(h.join("c", protocols=(("sticky", b""),))).error_code == INCONSISTENT_GROUP_PROTOCOL
    assert h.coordinator.heartbeat(GROUP, a, 1) == NONE


def test_group_in_an_unloaded_partition_is_not_coordinated_here() -> None:
    h = Harness(GroupConfig(group_initial_rebalance_delay_ms=3_000))
    a = h.new_member("a")
    pending = h.join("a", a)
    assert isinstance(pending, Pending) and not pending.done
    h.coordinator.unload(h.coordinator.partition_for(GROUP))
    assert done(pending).error_code == NOT_COORDINATOR
    assert done(h.join("a")).error_code == NOT_COORDINATOR
    assert h.coordinator.heartbeat(GROUP, a, 1) == NOT_COORDINATOR
    assert h.coordinator.describe_group(GROUP).error_code == NOT_COORDINATOR


def test_describe_and_list_groups() -> None:
    h = Harness()
    a = stable_single(h)
    described = h.coordinator.describe_group(GROUP)
    assert (described.state, described.protocol_type, described.protocol_data) == (
        "Stable",
        "consumer",
        "range",
    )
    (member,) = described.members
    assert (member.member_id, member.client_id, member.client_host) == (a, "a", "/10.0.0.1")
    assert (member.metadata, member.assignment) == (RANGE[0][1], b"p0")
    unknown = h.coordinator.describe_group("nope")
    assert (unknown.state, unknown.error_code, unknown.exists) == ("Dead", NONE, False)
    listed = h.coordinator.list_groups()
    assert [(g.group_id, g.protocol_type, g.state) for g in listed] == [
        (GROUP, "consumer", "Stable")
    ]
    assert h.coordinator.list_groups(states=["empty"]) == []
    assert len(h.coordinator.list_groups(states=["STABLE"], types=["Classic"])) == 1
    assert h.coordinator.list_groups(types=["consumer"]) == []


def test_full_group_refuses_new_members() -> None:
    h = Harness(GroupConfig(group_initial_rebalance_delay_ms=0, group_max_size=1))
    a = stable_single(h)
    assert done(h.join("b")) == JoinResult(81, "")  # GROUP_MAX_SIZE_REACHED
    assert done(h.join("a", a)).generation_id == 2  # the member itself may rejoin
