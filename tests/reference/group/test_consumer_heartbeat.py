"""ConsumerGroupHeartbeat and friends on the sans-IO coordinator.

Expected values come from Kafka 4.0's ``GroupMetadataManager`` and ``ConsumerGroup``
(request checks, epoch checks, leave, static members, timers, offsets) as read in
its source; the assignments from the assignor rules pinned in test_consumer_assignors.
"""

from __future__ import annotations

from typing import Any

import pytest
from group_support import Harness
from lethe_formats.coordinator import decode_record
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.error_codes import ErrorCode as E
from lethe_formats.records.scan import read_log
from lethe_reference.cluster.group import CommitOffset, OffsetCommitRequest
from lethe_reference.cluster.group.api import JoinRequest
from lethe_reference.cluster.group.consumer import ConsumerHeartbeat, ConsumerHeartbeatResult

G = "cg"
TOPICS = {"orders": 4, "audit": 2}


@pytest.fixture
def h() -> Harness:
    harness = Harness()
    harness.coordinator.topic_partitions = lambda: TOPICS
    return harness


def beat(h: Harness, member_id: str, epoch: int, **changes: Any) -> ConsumerHeartbeatResult:
    return h.coordinator.consumer_heartbeat(ConsumerHeartbeat(G, member_id, epoch, **changes))


def join(h: Harness, member_id: str, topics: tuple[str, ...] = ("orders",), **changes: Any):
    fields: dict[str, Any] = {
        "rebalance_timeout_ms": 30_000,
        "subscribed_topic_names": topics,
        "owned": {},
        **changes,
    }
    return beat(h, member_id, 0, **fields)


def owned(result: ConsumerHeartbeatResult) -> dict[str, frozenset[int]]:
    assert result.assignment is not None
    return dict(result.assignment)


def test_first_member_gets_everything_at_epoch_1(h: Harness) -> None:
    r = join(h, "m1")
    assert (r.error_code, r.member_id, r.member_epoch, r.heartbeat_interval_ms) == (
        0,
        "m1",
        1,
        5000,
    )
    assert owned(r) == {"orders": frozenset({0, 1, 2, 3})}
    described = h.coordinator.describe_consumer_group(G)
    assert (described.state, described.group_epoch, described.assignment_epoch) == ("Stable", 1, 1)
    assert described.assignor_name == "uniform"


def test_a_steady_heartbeat_carries_no_assignment(h: Harness) -> None:
    join(h, "m1")
    r = beat(h, "m1", 1)
    assert (r.error_code, r.member_epoch, r.assignment) == (0, 1, None)


def test_second_member_waits_for_the_revocation(h: Harness) -> None:
    join(h, "m1")
    second = join(h, "m2")
    # m2 is at the new epoch, but every partition it should get is still held by m1
    assert (second.member_epoch, owned(second)) == (2, {})
    assert h.coordinator.describe_consumer_group(G).state == "Reconciling"
    revoke = beat(h, "m1", 1)
    target_m1 = h.coordinator.describe_consumer_group(G).members[0].target_assignment
    assert revoke.member_epoch == 1 and owned(revoke) == target_m1
    assert len(target_m1["orders"]) == 2
    # until m1 stops reporting the revoked partitions, it stays at epoch 1
    still = beat(h, "m1", 1, owned={"orders": frozenset({0, 1, 2, 3})})
    assert (still.member_epoch, still.assignment) == (1, None)
    done = beat(h, "m1", 1, owned=target_m1)
    assert done.member_epoch == 2
    got = beat(h, "m2", 2)
    assert owned(got) == {"orders": frozenset({0, 1, 2, 3}) - target_m1["orders"]}
    assert h.coordinator.describe_consumer_group(G).state == "Stable"


def test_leaving_member_hands_its_partitions_to_the_other(h: Harness) -> None:
    join(h, "m1")
    join(h, "m2")
    target = h.coordinator.describe_consumer_group(G).members[0].target_assignment
    beat(h, "m1", 1)
    beat(h, "m1", 1, owned=target)
    beat(h, "m2", 2)
    left = beat(h, "m2", -1)
    assert (left.error_code, left.member_id, left.member_epoch) == (0, "m2", -1)
    r = beat(h, "m1", 2)
    assert r.member_epoch == 3 and owned(r) == {"orders": frozenset({0, 1, 2, 3})}


@pytest.mark.parametrize(
    ("changes", "code", "message"),
    [
        ({"rebalance_timeout_ms": -1}, E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided"),
        ({"owned": None}, E.INVALID_REQUEST, "TopicPartitions must be empty"),
        ({"owned": {"orders": frozenset({1})}}, E.INVALID_REQUEST, "TopicPartitions must be"),
        ({"subscribed_topic_names": None}, E.INVALID_REQUEST, "Either SubscribedTopicNames"),
        ({"instance_id": ""}, E.INVALID_REQUEST, "InstanceId can't be empty."),
        ({"rack_id": " "}, E.INVALID_REQUEST, "RackId can't be empty."),
        ({"server_assignor": "sticky"}, E.UNSUPPORTED_ASSIGNOR, "ServerAssignor sticky is not"),
        (
            {"subscribed_topic_regex": "orders("},
            E.INVALID_REGULAR_EXPRESSION,
            "SubscribedTopicRegex `orders(` is not a valid regular expression",
        ),
    ],
)
def test_invalid_joins_are_refused_as_kafka_refuses_them(h, changes, code, message) -> None:
    r = join(h, "m1", **changes)
    assert r.error_code == code
    assert r.error_message is not None and r.error_message.startswith(message)
    assert G not in h.coordinator.consumer_groups


def test_member_id_and_epoch_checks(h: Harness) -> None:
    assert beat(
        h, "", 0, rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}
    ).error_code == (
        E.INVALID_REQUEST  # v1 requires the client's own member id (KIP-1082)
    )
    assert beat(h, "m1", -3).error_code == E.INVALID_REQUEST
    assert beat(h, "m1", 1).error_code == E.GROUP_ID_NOT_FOUND
    join(h, "m1")
    assert beat(h, "m9", 1).error_code == E.UNKNOWN_MEMBER_ID
    assert beat(h, "m1", 2).error_code == E.FENCED_MEMBER_EPOCH  # ahead
    join(h, "m2")
    beat(h, "m1", 1)
    beat(h, "m1", 1, owned={})  # m1 -> epoch 2, previous 1
    # the previous epoch with owned partitions within the assignment: the answer was lost
    assert beat(h, "m1", 1, owned={}).error_code == E.NONE
    assert beat(h, "m1", 1).error_code == E.FENCED_MEMBER_EPOCH  # owned not sent
    assert beat(
        h, "m1", 0, rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}
    ).error_code == (
        E.FENCED_MEMBER_EPOCH  # rejoining under a live id
    )


def test_v0_lets_the_coordinator_pick_the_member_id(h: Harness) -> None:
    r = beat(h, "", 0, rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}, api_version=0)
    assert r.error_code == 0 and r.member_id is not None and len(r.member_id) == 22


def test_session_expiry_fences_the_member(h: Harness) -> None:
    join(h, "m1")
    join(h, "m2")
    h.clock.advance(44_999)
    beat(h, "m1", 1)
    h.clock.advance(1)
    h.coordinator.tick()
    described = h.coordinator.describe_consumer_group(G)
    assert [m.member_id for m in described.members] == ["m1"]
    assert beat(h, "m2", 2).error_code == E.UNKNOWN_MEMBER_ID


def test_a_member_that_does_not_revoke_in_time_is_fenced(h: Harness) -> None:
    join(h, "m1", rebalance_timeout_ms=10_000)
    join(h, "m2")
    beat(h, "m1", 1)  # asked to revoke
    h.clock.advance(10_000)
    h.coordinator.tick()
    assert [m.member_id for m in h.coordinator.describe_consumer_group(G).members] == ["m2"]
    r = beat(h, "m2", 2)
    assert owned(r) == {"orders": frozenset({0, 1, 2, 3})}


def test_static_member_leaves_for_a_while_and_comes_back(h: Harness) -> None:
    join(h, "m1", instance_id="i1")
    left = beat(h, "m1", -2, instance_id="i1")
    assert (left.error_code, left.member_epoch) == (0, -2)
    assert join(h, "m1b", instance_id="i1").error_code == 0  # replaces the released instance
    members = h.coordinator.describe_consumer_group(G).members
    assert [(m.member_id, m.instance_id) for m in members] == [("m1b", "i1")]


def test_static_instance_ids_are_guarded(h: Harness) -> None:
    join(h, "m1", instance_id="i1")
    assert join(h, "m2", instance_id="i1").error_code == E.UNRELEASED_INSTANCE_ID
    assert beat(h, "m2", 1, instance_id="i1").error_code == E.FENCED_INSTANCE_ID
    assert beat(h, "m2", 1, instance_id="i9").error_code == E.UNKNOWN_MEMBER_ID
    assert beat(h, "m1", -2).error_code == E.INVALID_REQUEST  # -2 needs the instance id


def test_range_when_the_members_ask_for_it(h: Harness) -> None:
    join(h, "b", server_assignor="range")
    join(h, "a", server_assignor="range")
    assert h.coordinator.describe_consumer_group(G).assignor_name == "range"
    targets = {
        m.member_id: m.target_assignment for m in h.coordinator.describe_consumer_group(G).members
    }
    assert targets == {"a": {"orders": frozenset({0, 1})}, "b": {"orders": frozenset({2, 3})}}


def test_regex_subscription_matches_whole_topic_names(h: Harness) -> None:
    r = join(h, "m1", topics=(), subscribed_topic_regex="ord.*")
    assert owned(r) == {"orders": frozenset({0, 1, 2, 3})}
    r2 = join(h, "m2", topics=(), subscribed_topic_regex="aud")
    assert owned(r2) == {}
    assert h.coordinator.describe_consumer_group(G).members[1].target_assignment == {}


def test_new_partitions_move_the_group_epoch(h: Harness) -> None:
    join(h, "m1")
    grown = {**TOPICS, "orders": 6}
    h.coordinator.topic_partitions = lambda: grown
    r = beat(h, "m1", 1)
    assert r.member_epoch == 2 and owned(r) == {"orders": frozenset(range(6))}


def test_offsets_of_a_consumer_group_follow_the_member_epoch(h: Harness) -> None:
    join(h, "m1")
    offsets = {("orders", 0): CommitOffset(5)}

    def commit(member_id: str, epoch: int, version: int = 9) -> int:
        request = OffsetCommitRequest(G, offsets, member_id, epoch, api_version=version)
        return h.coordinator.commit_offsets(request)[("orders", 0)]

    assert commit("m1", 1) == E.NONE
    assert commit("m1", 0) == E.STALE_MEMBER_EPOCH
    assert commit("m9", 1) == E.UNKNOWN_MEMBER_ID
    assert commit("m1", 1, version=8) == E.UNSUPPORTED_VERSION
    assert commit("", -1) == E.UNKNOWN_MEMBER_ID  # the group is not empty
    fetched = h.coordinator.fetch_offsets(G, [("orders", 0)], "m1", 1)
    assert (fetched.error_code, fetched.offsets[("orders", 0)].offset) == (0, 5)
    assert h.coordinator.fetch_offsets(G, None, "m1", 7).error_code == E.STALE_MEMBER_EPOCH
    assert h.coordinator.fetch_offsets(G, None).offsets[("orders", 0)].offset == 5
    beat(h, "m1", -1)
    assert commit("", -1) == E.NONE  # admin tools commit to an empty group


def test_list_describe_and_delete_see_the_consumer_group(h: Harness) -> None:
    join(h, "m1")
    listed = h.coordinator.list_groups()
    assert [(g.group_id, g.protocol_type, g.state, g.group_type) for g in listed] == [
        (G, "consumer", "Stable", "consumer")
    ]
    assert h.coordinator.list_groups(types=["classic"]) == []
    assert h.coordinator.list_groups(states=["empty"]) == []
    assert not h.coordinator.describe_group(G).exists  # DescribeGroups: not a classic group
    assert h.coordinator.delete_groups([G]) == {G: E.NON_EMPTY_GROUP}
    beat(h, "m1", -1)
    assert h.coordinator.delete_groups([G]) == {G: E.NONE}
    assert h.coordinator.describe_consumer_group(G).error_code == E.GROUP_ID_NOT_FOUND


def test_classic_and_consumer_groups_do_not_mix(h: Harness) -> None:
    join(h, "m1")
    classic = JoinRequest(G, "", "consumer", (("range", b""),), 10_000, 30_000, "c", "/h")
    result = h.coordinator.join_group(classic)
    assert getattr(result, "error_code", None) == E.INCONSISTENT_GROUP_PROTOCOL
    h.coordinator.join_group(h.request("c", group_id="classic", require_known_member_id=False))
    assert h.coordinator.groups["classic"].members  # a classic group with a member
    r = h.coordinator.consumer_heartbeat(
        ConsumerHeartbeat(
            "classic", "m1", 0, rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}
        )
    )
    assert r.error_code == E.GROUP_ID_NOT_FOUND
    assert h.coordinator.describe_consumer_group("classic").error_message == (
        "Group classic is not a consumer group."
    )


# -- persistence ---------------------------------------------------------------------------


def read_records(batch: bytes) -> list[Any]:
    return [r for entry in read_log(batch) if isinstance(entry, RecordBatch) for r in entry.records]


def stored(h: Harness) -> list[tuple[int, str, str | None]]:
    """(record type, member id or "", value class or None) of every record written."""
    out = []
    for _, batch in h.batches:
        for record in read_records(batch):
            decoded = decode_record(record)
            member = getattr(decoded.key, "member_id", "")
            value = None if decoded.value is None else type(decoded.value).__name__
            out.append((decoded.key.version, member, value))
    return out


def test_a_join_writes_kafkas_records_in_kafkas_order(h: Harness) -> None:
    join(h, "m1")
    assert stored(h) == [
        (5, "m1", "ConsumerGroupMemberMetadataValue"),
        (4, "", "ConsumerGroupPartitionMetadataValue"),
        (3, "", "ConsumerGroupMetadataValue"),
        (7, "m1", "ConsumerGroupTargetAssignmentMemberValue"),
        (6, "", "ConsumerGroupTargetAssignmentMetadataValue"),
        (8, "m1", "ConsumerGroupCurrentMemberAssignmentValue"),
    ]
    h.batches.clear()
    beat(h, "m1", 1)
    assert stored(h) == []  # nothing changed, nothing written
    beat(h, "m1", -1)
    assert stored(h) == [
        (8, "m1", None),
        (7, "m1", None),
        (5, "m1", None),
        (4, "", "ConsumerGroupPartitionMetadataValue"),
        (3, "", "ConsumerGroupMetadataValue"),
    ]


def test_a_reloaded_coordinator_has_the_same_groups(h: Harness) -> None:
    ids = {"orders": b"o" * 16, "audit": b"a" * 16}
    h.coordinator.topic_ids = lambda: ids
    join(h, "m1", instance_id="i1", rack_id="r1")
    join(h, "m2", server_assignor="range")
    beat(h, "m1", 1)  # m1 now owes a revocation
    again = Harness()
    again.coordinator.topic_partitions = lambda: TOPICS
    again.coordinator.topic_ids = lambda: ids
    partition = h.coordinator.partition_for(G)
    records = [r for p, batch in h.batches if p == partition for r in read_records(batch)]
    again.coordinator.load(partition, records)
    reloaded = again.coordinator.describe_consumer_group(G)
    assert reloaded == h.coordinator.describe_consumer_group(G)
    assert reloaded.state == "Reconciling" and len(reloaded.members) == 2
    # the reloaded members heartbeat on, and expire without one
    assert beat(again, "m2", 2).error_code == E.NONE
    again.clock.advance(45_000)
    again.coordinator.tick()
    assert again.coordinator.describe_consumer_group(G).members == ()


def test_a_failed_write_leaves_the_group_as_it_was(h: Harness) -> None:
    join(h, "m1")
    h.fail_with = E.NOT_LEADER_OR_FOLLOWER
    r = join(h, "m2")
    assert r.error_code == E.NOT_COORDINATOR
    assert [m.member_id for m in h.coordinator.describe_consumer_group(G).members] == ["m1"]
    h.fail_with = None
    assert join(h, "m2").error_code == E.NONE


def test_deleting_an_empty_group_writes_its_tombstones(h: Harness) -> None:
    join(h, "m1")
    beat(h, "m1", -1)
    h.batches.clear()
    assert h.coordinator.delete_groups([G]) == {G: E.NONE}
    assert stored(h) == [(6, "", None), (4, "", None), (3, "", None)]


def test_offset_delete_refuses_subscribed_topics_only(h: Harness) -> None:
    join(h, "m1")
    commits = {("orders", 0): CommitOffset(5), ("audit", 1): CommitOffset(7)}
    assert set(h.coordinator.commit_offsets(OffsetCommitRequest(G, commits, "m1", 1)).values()) == {
        E.NONE
    }
    result = h.coordinator.delete_offsets(G, [("orders", 0), ("audit", 1)])
    assert result.error_code == E.NONE
    assert result.partitions == {("orders", 0): E.GROUP_SUBSCRIBED_TO_TOPIC, ("audit", 1): E.NONE}
    assert set(h.coordinator.committed(G)) == {("orders", 0)}
