"""Group handlers: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
DescribeGroups, ListGroups, checked against Kafka 4.0's recorded answers and rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from group_handlers_support import (
    HANDLERS,
    advance,
    call,
    clock,
    exchanges,
    find,
    join_request,
    new_broker,
    swap_strings,
    sync_request,
    without_throttle,
)
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_groups import DescribeGroupsRequest
from lethe_formats.protocol.messages.find_coordinator import FindCoordinatorRequest
from lethe_formats.protocol.messages.heartbeat import HeartbeatRequest
from lethe_formats.protocol.messages.leave_group import (
    LeaveGroupMemberIdentity,
    LeaveGroupRequest,
)
from lethe_formats.protocol.messages.list_groups import ListGroupsRequest
from lethe_reference.broker import Broker
from lethe_reference.cluster.group_runtime import TICK_TASK
from lethe_reference.purgatory import Deferred

CONSUMERS = ("golden-rdk-consumer", "golden-kpy-consumer")
#: Kafka was still loading __consumer_offsets-N after creating it and answered
#: NOT_COORDINATOR; lethe loads inside the request that notices the topic.
LOADING_ON_KAFKA = {51, 55}
#: Asked, but the client closed the connection before Kafka's answer arrived.
UNANSWERED = {36}
REPLAYED = [
    ex.seq
    for ex in exchanges()
    if ex.client_id in CONSUMERS and ex.api_key in HANDLERS and ex.seq not in LOADING_ON_KAFKA
]


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Any, Any]]:
    """Both consumers' group exchanges against one broker at the recorded times:
    seq -> (our response with our member ids swapped for Kafka's, Kafka's)."""
    broker = new_broker(tmp_path_factory.mktemp("golden"))
    broker.create_topic("wire-rd-events", 1)  # the admin phases created these
    broker.create_topic("wire-kp-events", 1)
    ours_to_kafkas: dict[str, str] = {}
    out: dict[int, tuple[Any, Any]] = {}
    for ex in exchanges():
        if ex.seq not in REPLAYED:
            continue
        clock(broker).set(ex.request_ms)
        broker.run_due()
        kafkas_to_ours = {kafka: ours for ours, kafka in ours_to_kafkas.items()}
        ours = call(
            broker, ex.api_key, ex.version, swap_strings(ex.request, kafkas_to_ours), ex.client_id
        )
        assert not isinstance(ours, Deferred), f"#{ex.seq} waited where Kafka answered at once"
        kafka: Any = ex.response
        if kafka is not None and getattr(kafka, "error_code", 0) == 79:
            ours_to_kafkas[ours.member_id] = kafka.member_id
        out[ex.seq] = (swap_strings(ours, ours_to_kafkas), ex.response)
    return out


@pytest.mark.parametrize("seq", REPLAYED)
def test_golden_consumer_exchange_gets_kafkas_answer(
    replay: dict[int, tuple[Any, Any]], seq: int
) -> None:
    ours, kafka = replay[seq]
    if seq in UNANSWERED:  # getCoordinator: the offsets topic is being created
        assert (ours.error_code, ours.node_id, ours.host, ours.port) == (15, -1, "", -1)
        assert ours.error_message == "The coordinator is not available."
        return
    assert without_throttle(ours) == without_throttle(kafka)


# -- FindCoordinator ------------------------------------------------------------------------


def test_first_group_lookup_creates_compacted_offsets_topic_and_is_retried(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    first = find(broker, 3, ("g",))
    assert (first.error_code, first.node_id, first.host, first.port) == (15, -1, "", -1)
    info = broker.metadata.get("__consumer_offsets")
    assert info is not None and info.partitions == 50 and info.internal
    assert info.configs["cleanup.policy"] == "compact"
    assert info.configs["segment.bytes"] == str(100 * 1024 * 1024)
    second = find(broker, 3, ("g",))
    assert (second.error_code, second.error_message) == (0, "NONE")
    assert (second.node_id, second.host, second.port) == (1, "127.0.0.1", 19092)


def test_batched_lookup_answers_each_key(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    created = find(broker, 4, ("a", "b"))
    assert [(c.key, c.error_code, c.node_id, c.port) for c in created.coordinators] == [
        ("a", 15, -1, -1),
        ("b", 15, -1, -1),
    ]
    found = find(broker, 6, ("a", "b"))
    assert [
        (c.key, c.error_code, c.node_id, c.host, c.port, c.error_message)
        for c in found.coordinators
    ] == [
        ("a", 0, 1, "127.0.0.1", 19092, ""),
        ("b", 0, 1, "127.0.0.1", 19092, ""),
    ]


def test_default_offsets_replication_factor_cannot_be_placed_on_one_broker(tmp_path: Path) -> None:
    broker = new_broker(tmp_path, {"offsets.topic.replication.factor": "3"})
    for _ in range(2):
        assert find(broker, 3, ("g",)).error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert broker.metadata.get("__consumer_offsets") is None


@pytest.mark.parametrize("version", [1, 4])
def test_transaction_coordinator_is_unavailable_and_not_created(
    tmp_path: Path, version: int
) -> None:
    broker = new_broker(tmp_path)
    for _ in range(2):
        answer = find(broker, version, ("tx",), key_type=1)
        code = answer.error_code if version < 4 else answer.coordinators[0].error_code
        assert code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert broker.metadata.get("__transaction_state") is None


def test_share_and_unknown_key_types_are_invalid_requests(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    share = find(broker, 6, ("s",), key_type=2).coordinators[0]
    assert (share.error_code, share.node_id, share.error_message) == (42, -1, "")
    unknown = find(broker, 6, ("x", "y"), key_type=7).coordinators
    assert [(c.key, c.error_code) for c in unknown] == [("x", 42), ("y", 42)]
    assert unknown[0].error_message == ErrorCode.INVALID_REQUEST.message
    old = find(broker, 2, ("x",), key_type=7)
    assert (old.error_code, old.node_id, old.error_message) == (
        42,
        -1,
        ErrorCode.INVALID_REQUEST.message,
    )


# -- JoinGroup / SyncGroup / Heartbeat ------------------------------------------------------


def ready(tmp_path: Path, settings: dict[str, str] | None = None) -> Broker:
    broker = new_broker(tmp_path, settings)
    find(broker, 3, ("g",))
    return broker


def joined(broker: Broker, client: str = "c1", version: int = 7) -> Any:
    """A member through MEMBER_ID_REQUIRED and its second JoinGroup."""
    first = call(broker, ApiKey.JOIN_GROUP, version, join_request(), client)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert first.member_id.startswith(f"{client}-")
    return call(broker, ApiKey.JOIN_GROUP, version, join_request(first.member_id), client)


def test_join_before_the_offsets_topic_exists_is_not_coordinator(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    answer = call(broker, ApiKey.JOIN_GROUP, 5, join_request("someone"))
    assert (answer.error_code, answer.member_id, answer.protocol_name) == (16, "", "")
    later = call(broker, ApiKey.JOIN_GROUP, 7, join_request())
    assert (later.error_code, later.protocol_name) == (16, None)


def test_join_below_v4_admits_a_new_member_at_once(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    answer = call(broker, ApiKey.JOIN_GROUP, 3, join_request(), "old")
    assert (answer.error_code, answer.generation_id, answer.protocol_name) == (0, 1, "range")
    assert answer.leader == answer.member_id and answer.member_id.startswith("old-")
    assert answer.protocol_type is None  # not in the v3 response


def test_join_v7_names_protocol_type_and_v9_keeps_skip_assignment(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    answer = joined(broker, version=9)
    assert (answer.protocol_type, answer.protocol_name, answer.skip_assignment) == (
        "consumer",
        "range",
        False,
    )
    assert [m.metadata for m in answer.members] == [join_request().protocols[0].metadata]


def test_session_timeout_outside_broker_limits_is_refused(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    answer = call(broker, ApiKey.JOIN_GROUP, 7, join_request("m", session_ms=5999))
    assert (answer.error_code, answer.member_id) == (ErrorCode.INVALID_SESSION_TIMEOUT, "m")


def test_initial_rebalance_delay_completes_join_on_the_broker_scheduler(tmp_path: Path) -> None:
    broker = ready(tmp_path, {"group.initial.rebalance.delay.ms": "3000"})
    waiting = joined(broker)
    assert isinstance(waiting, Deferred) and not waiting.done
    assert broker.scheduler.is_scheduled(TICK_TASK)
    advance(broker, 2999)
    assert not waiting.done
    advance(broker, 1)
    answer = waiting.result()
    assert (answer.error_code, answer.generation_id, answer.leader) == (0, 1, answer.member_id)


def test_second_member_waits_for_the_leader_to_rejoin_then_for_its_assignment(
    tmp_path: Path,
) -> None:
    broker = ready(tmp_path)
    leader = joined(broker, "c1")
    call(
        broker,
        ApiKey.SYNC_GROUP,
        5,
        sync_request(leader.member_id, 1, {}, protocol=("consumer", "range")),
    )
    follower_join = joined(broker, "c2")
    assert isinstance(follower_join, Deferred) and not follower_join.done
    beat = HeartbeatRequest(group_id="g", generation_id=1, member_id=leader.member_id)
    assert call(broker, ApiKey.HEARTBEAT, 4, beat).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = call(broker, ApiKey.JOIN_GROUP, 7, join_request(leader.member_id))
    assert (rejoin.generation_id, len(rejoin.members)) == (2, 2)
    follower = follower_join.result()
    assert (follower.generation_id, follower.leader, follower.members) == (2, leader.member_id, ())
    follower_sync = call(broker, ApiKey.SYNC_GROUP, 3, sync_request(follower.member_id, 2))
    assert isinstance(follower_sync, Deferred) and not follower_sync.done
    plan = {leader.member_id: b"A", follower.member_id: b"B"}
    mine = call(broker, ApiKey.SYNC_GROUP, 3, sync_request(leader.member_id, 2, plan))
    assert (mine.error_code, mine.assignment, mine.protocol_name) == (0, b"A", None)
    assert (follower_sync.result().error_code, follower_sync.result().assignment) == (0, b"B")


def test_sync_v5_without_protocol_is_inconsistent(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    member = joined(broker)
    answer = call(broker, ApiKey.SYNC_GROUP, 5, sync_request(member.member_id, 1, {}))
    assert answer.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_member_without_heartbeats_expires_on_the_scheduler(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    member = joined(broker)
    call(broker, ApiKey.SYNC_GROUP, 3, sync_request(member.member_id, 1, {member.member_id: b""}))
    advance(broker, 9_999)
    assert describe(broker, 5)[0].group_state == "Stable"
    advance(broker, 1)
    assert describe(broker, 5)[0].group_state == "Empty"
    beat = HeartbeatRequest(group_id="g", generation_id=1, member_id=member.member_id)
    assert call(broker, ApiKey.HEARTBEAT, 3, beat).error_code == ErrorCode.UNKNOWN_MEMBER_ID


# -- LeaveGroup -----------------------------------------------------------------------------


def test_leave_unknown_group_answers_each_member(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    old = call(broker, ApiKey.LEAVE_GROUP, 1, LeaveGroupRequest(group_id="g", member_id="m"))
    assert old.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    batch = LeaveGroupRequest(group_id="g", members=(LeaveGroupMemberIdentity("m", "i"),))
    new = call(broker, ApiKey.LEAVE_GROUP, 5, batch)
    assert new.error_code == 0
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in new.members] == [
        ("m", "i", ErrorCode.UNKNOWN_MEMBER_ID)
    ]


def test_leave_batch_reports_per_member_and_group_errors_at_top(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    member = joined(broker)
    identities = (LeaveGroupMemberIdentity(member.member_id), LeaveGroupMemberIdentity("ghost"))
    answer = call(
        broker, ApiKey.LEAVE_GROUP, 3, LeaveGroupRequest(group_id="g", members=identities)
    )
    assert (answer.error_code, [m.error_code for m in answer.members]) == (0, [0, 25])
    assert describe(broker, 5)[0].group_state == "Empty"
    invalid = call(broker, ApiKey.LEAVE_GROUP, 2, LeaveGroupRequest(group_id="", member_id="x"))
    assert invalid.error_code == ErrorCode.INVALID_GROUP_ID


# -- DescribeGroups / ListGroups ------------------------------------------------------------


def describe(broker: Broker, version: int, *ids: str, operations: bool = False) -> Any:
    request = DescribeGroupsRequest(groups=ids or ("g",), include_authorized_operations=operations)
    return call(broker, ApiKey.DESCRIBE_GROUPS, version, request).groups


def test_describe_stable_group_shows_members_with_protocol_data(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    member = joined(broker, "c1")
    call(broker, ApiKey.SYNC_GROUP, 3, sync_request(member.member_id, 1, {member.member_id: b"x"}))
    (group,) = describe(broker, 5, operations=True)
    assert (group.error_code, group.group_state, group.protocol_type, group.protocol_data) == (
        0,
        "Stable",
        "consumer",
        "range",
    )
    (m,) = group.members
    assert (m.member_id, m.client_id, m.client_host) == (member.member_id, "c1", "/127.0.0.1")
    assert (m.member_metadata, m.member_assignment) == (join_request().protocols[0].metadata, b"x")
    assert (
        group.authorized_operations == 3400
    )  # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS


def test_describe_unknown_group_is_dead_until_v6(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    (dead,) = describe(broker, 5, "nope")
    assert (dead.error_code, dead.group_state, dead.members) == (0, "Dead", ())
    assert dead.authorized_operations == -(1 << 31)
    (missing,) = describe(broker, 6, "nope", operations=True)
    assert (missing.error_code, missing.error_message, missing.group_state) == (
        69,
        "Group nope not found.",
        "Dead",  # a real Kafka 4.0.0 answered DescribeGroups v6 so (DEAD.toString())
    )
    assert missing.authorized_operations == -(1 << 31)


def test_describe_without_offsets_topic_is_not_coordinator(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    (group,) = describe(broker, 0, "g")
    assert (group.error_code, group.group_state) == (16, "")


def test_list_groups_filters_trimmed_states_and_types(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    joined(broker)

    def listed(version: int, states: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> Any:
        request = ListGroupsRequest(states_filter=states, types_filter=types)
        answer = call(broker, ApiKey.LIST_GROUPS, version, request)
        assert answer.error_code == 0
        return [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in answer.groups]

    everything = [("g", "consumer", "CompletingRebalance", "classic")]
    assert listed(0) == everything
    assert listed(4, (" completingrebalance ",)) == everything
    assert listed(4, ("Stable",)) == []
    assert listed(5, types=("Classic",)) == everything
    assert listed(5, types=("consumer",)) == []


# -- every answer encodes at every version --------------------------------------------------


@pytest.mark.parametrize(
    ("api_key", "versions"),
    [
        (ApiKey.JOIN_GROUP, range(2, 10)),
        (ApiKey.SYNC_GROUP, range(0, 6)),
        (ApiKey.LEAVE_GROUP, range(0, 6)),
        (ApiKey.DESCRIBE_GROUPS, range(0, 7)),
        (ApiKey.LIST_GROUPS, range(0, 6)),
        (ApiKey.FIND_COORDINATOR, range(0, 7)),
        (ApiKey.HEARTBEAT, range(0, 5)),
    ],
)
def test_answers_encode_at_every_version(tmp_path: Path, api_key: ApiKey, versions: range) -> None:
    for version in versions:
        broker = ready(tmp_path / str(version), {"offsets.topic.num.partitions": "1"})
        member = joined(broker, version=max(version, 4)) if api_key != ApiKey.JOIN_GROUP else None
        requests: dict[ApiKey, Any] = {
            ApiKey.SYNC_GROUP: sync_request(
                member.member_id if member else "", 1, {}, protocol=("consumer", "range")
            ),
            ApiKey.LEAVE_GROUP: LeaveGroupRequest(
                group_id="g", member_id="x", members=(LeaveGroupMemberIdentity("x"),)
            )
            if version >= 3
            else LeaveGroupRequest(group_id="g", member_id="x"),
            ApiKey.DESCRIBE_GROUPS: DescribeGroupsRequest(groups=("g", "h")),
            ApiKey.LIST_GROUPS: ListGroupsRequest(),
            ApiKey.FIND_COORDINATOR: FindCoordinatorRequest(key="g")
            if version < 4
            else FindCoordinatorRequest(coordinator_keys=("g",)),
            ApiKey.HEARTBEAT: HeartbeatRequest(group_id="g", generation_id=1, member_id="x"),
        }
        if api_key == ApiKey.JOIN_GROUP:
            answers = [call(broker, api_key, version, join_request(), "c")]
            answers.append(call(broker, api_key, version, join_request(answers[0].member_id), "c"))
        else:
            answers = [call(broker, api_key, version, requests[api_key])]
        for answer in answers:
            assert encode(answer, version)
