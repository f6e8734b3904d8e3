"""The answers behind ``kafka-consumer-groups.sh``'s tables, checked against Kafka 4.0.0.

fixtures/golden/consumer-groups holds what the tool printed against a real Kafka 4.0.0
while a console consumer used group ``shop`` (active, after LeaveGroup, after a reset,
after a killed member expired, deleted) and a console consumer's random group came and
went. Here the same scenario runs at the protocol level on lethe's handlers with a
manual clock (CI has no Java), and each answer the tool turns into a table cell must give
the cell Kafka's run printed: group and state per ListGroups, state, member count,
assignment strategy, client id, host and assignment per DescribeGroups, committed offsets
per OffsetFetch, log end offsets per ListOffsets (LAG is their difference), DeleteGroups'
errors, and the random group gone after the cleanup run
(``offsets.retention.check.interval.ms`` after the offsets topic was loaded) with a
GroupMetadata tombstone in ``__consumer_offsets``. The tool itself against ``lethe broker``
is tests/interop/test_consumer_groups_tool.py (needs LETHE_KAFKA_HOME).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from consumer_groups_tool import random_group, rows, stdout
from group_handlers_support import HANDLERS, advance, call, find, new_broker
from lethe_formats.coordinator import GroupMetadataKey, decode_record
from lethe_formats.coordinator.consumer_protocol import (
    ConsumerAssignment,
    ConsumerSubscription,
    TopicPartitionList,
    decode_assignment,
    encode_assignment,
    encode_subscription,
)
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_groups import DeleteGroupsRequest
from lethe_formats.protocol.messages.describe_groups import DescribeGroupsRequest
from lethe_formats.protocol.messages.heartbeat import HeartbeatRequest
from lethe_formats.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from lethe_formats.protocol.messages.leave_group import (
    LeaveGroupMemberIdentity,
    LeaveGroupRequest,
)
from lethe_formats.protocol.messages.list_groups import ListGroupsRequest
from lethe_formats.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
)
from lethe_formats.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.cluster.group_runtime import stored_records
from lethe_reference.handlers import group_deletion
from lethe_reference.metadata import CONSUMER_OFFSETS
from partition_ops_support import list_offsets, produce

SHOP = "shop"
TOPIC = "orders"
CLIENT = "console-consumer"  # the console consumer's client.id
HOST = "/127.0.0.1"
CHECK_INTERVAL_MS = 600_000  # Kafka's default offsets.retention.check.interval.ms
SUBSCRIPTION = encode_subscription(ConsumerSubscription((TOPIC,)))
ALL = encode_assignment(ConsumerAssignment((TopicPartitionList(TOPIC, (0, 1, 2)),)))
HANDLERS.setdefault(ApiKey.DELETE_GROUPS, group_deletion.handle_delete_groups)


def column(step: str, name: str) -> dict[int, int]:
    """A per-partition column of a ``--describe`` table."""
    return {int(r["PARTITION"]): int(r[name]) for r in rows(step)}


def fill(broker: Broker, ends: dict[int, int], already: dict[int, int]) -> None:
    """Produce one-record batches until each partition ends at ``ends``."""
    for partition, end in ends.items():
        for offset in range(already.get(partition, 0), end):
            spec = RecordSpec(f"k{offset}".encode(), b"v", (), 0)
            answer = produce(broker, TOPIC, partition, build_batch([spec], base_offset=0))
            assert answer.error_code == 0


def join(broker: Broker, group: str, session_ms: int = 45_000) -> str:
    """A console consumer joins and syncs ``group`` alone (JoinGroup v9, SyncGroup v5)."""
    request = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=300_000,
        member_id="",
        protocol_type="consumer",
        protocols=(
            JoinGroupRequestProtocol("range", SUBSCRIPTION),
            JoinGroupRequestProtocol("cooperative-sticky", SUBSCRIPTION),
        ),
    )
    first = call(broker, ApiKey.JOIN_GROUP, 9, request, CLIENT)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    member = first.member_id
    joined = call(
        broker, ApiKey.JOIN_GROUP, 9, dataclasses.replace(request, member_id=member), CLIENT
    )
    assert (joined.error_code, joined.leader, joined.protocol_name) == (0, member, "range")
    sync = SyncGroupRequest(
        group_id=group,
        generation_id=joined.generation_id,
        member_id=member,
        protocol_type="consumer",
        protocol_name="range",
        assignments=(SyncGroupRequestAssignment(member, ALL),),
    )
    assert call(broker, ApiKey.SYNC_GROUP, 5, sync, CLIENT).error_code == 0
    return member


def leave(broker: Broker, group: str, member: str) -> None:
    request = LeaveGroupRequest(group_id=group, members=(LeaveGroupMemberIdentity(member),))
    assert call(broker, ApiKey.LEAVE_GROUP, 5, request, CLIENT).error_code == 0


def commit(broker: Broker, offsets: dict[int, int], member: str = "", generation: int = -1) -> None:
    parts = tuple(OffsetCommitRequestPartition(p, o, -1, "") for p, o in offsets.items())
    request = OffsetCommitRequest(
        group_id=SHOP,
        generation_id_or_member_epoch=generation,
        member_id=member,
        topics=(OffsetCommitRequestTopic(TOPIC, parts),),
    )
    answer = call(broker, ApiKey.OFFSET_COMMIT, 9, request, CLIENT)
    assert {p.error_code for t in answer.topics for p in t.partitions} == {0}


def listed(broker: Broker) -> dict[str, str]:
    """ListGroups v5 as ``--list --state`` asks it: group -> state."""
    answer = call(broker, ApiKey.LIST_GROUPS, 5, ListGroupsRequest())
    assert answer.error_code == 0
    return {g.group_id: g.group_state for g in answer.groups}


def described(broker: Broker, group: str = SHOP) -> Any:
    answer = call(broker, ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=(group,)))
    (only,) = answer.groups
    return only


def fetched(broker: Broker) -> dict[int, int]:
    request = OffsetFetchRequest(groups=(OffsetFetchRequestGroup(group_id=SHOP, topics=None),))
    (group,) = call(broker, ApiKey.OFFSET_FETCH, 9, request).groups
    return {p.partition_index: p.committed_offset for t in group.topics for p in t.partitions}


def log_ends(broker: Broker) -> dict[int, int]:
    answers = list_offsets(broker, TOPIC, dict.fromkeys(range(3), -1))
    return {p: answers[p].offset for p in range(3)}


def expect_lists(broker: Broker, step: str) -> None:
    """``--list --state`` (step ``list-state-X``) and ``--list`` (``list-X``)."""
    assert listed(broker) == {r["GROUP"]: r["STATE"] for r in rows(f"list-state-{step}")}
    assert set(listed(broker)) == {r["GROUP"] for r in rows(f"list-{step}")}


def expect_state(broker: Broker, step: str) -> None:
    """``--describe --state``: strategy ("-" when none), state, member count."""
    (row,) = rows(step)
    group = described(broker)
    assert (group.protocol_data or "-") == row["ASSIGNMENT-STRATEGY"]
    assert (group.group_state, len(group.members)) == (row["STATE"], int(row["#MEMBERS"]))


def expect_members(broker: Broker, step: str) -> None:
    """``--describe --members [--verbose]``: client id, host, partition count and
    (verbose) the assignment as ``topic:p,p``."""
    verbose = "CURRENT-ASSIGNMENT" in stdout(step)
    seen = []
    for member in described(broker).members:
        assigned = decode_assignment(member.member_assignment).assigned_partitions
        text = " ".join(f"{t.topic}:{','.join(map(str, t.partitions))}" for t in assigned)
        count = sum(len(t.partitions) for t in assigned)
        seen.append((member.client_id, member.client_host, count, text if verbose else ""))
    expected = [
        (r["CLIENT-ID"], r["HOST"], int(r["#PARTITIONS"]), r.get("CURRENT-ASSIGNMENT", ""))
        for r in rows(step)
    ]
    assert seen == expected


def expect_offsets(broker: Broker, step: str) -> None:
    """``--describe --offsets``: CURRENT-OFFSET, LOG-END-OFFSET and their LAG."""
    current, ends = fetched(broker), log_ends(broker)
    assert current == column(step, "CURRENT-OFFSET")
    assert ends == column(step, "LOG-END-OFFSET")
    assert {p: ends[p] - current[p] for p in current} == column(step, "LAG")


def test_consumer_groups_tool_scenario_answers_as_kafka(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    loaded_at = broker.clock.now_ms()
    assert (
        find(broker, 4, (SHOP,)).coordinators[0].error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    )
    broker.create_topic(TOPIC, 3)
    first_ends = column("describe-active", "LOG-END-OFFSET")
    fill(broker, first_ends, {})

    # a console consumer without --group: its random group, no commit, left after 5 records
    anonymous = random_group()
    leave(broker, anonymous, join(broker, anonymous))

    c1 = join(broker, SHOP)
    commit(broker, column("describe-active", "CURRENT-OFFSET"), c1, 1)
    expect_lists(broker, "active")
    expect_state(broker, "state-active")
    expect_members(broker, "members-active")
    expect_members(broker, "members-verbose-active")
    expect_offsets(broker, "offsets-active")
    assert "current state is Stable" in stdout("reset-active")  # the tool's refusal
    deletion = call(broker, ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=(SHOP,)))
    assert deletion.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    assert "GroupNotEmptyException" in stdout("delete-active")

    leave(broker, SHOP, c1)
    fill(broker, column("describe-left", "LOG-END-OFFSET"), first_ends)
    expect_lists(broker, "left")
    expect_state(broker, "state-left")
    expect_members(broker, "members-left")
    expect_members(broker, "members-verbose-left")
    expect_offsets(broker, "offsets-left")
    expect_offsets(broker, "describe-left")

    # --reset-offsets --to-earliest --execute on the Empty group: an anonymous commit
    commit(broker, {int(r["PARTITION"]): int(r["NEW-OFFSET"]) for r in rows("reset-left")})
    expect_offsets(broker, "offsets-reset")

    # a second console consumer (session.timeout.ms=6000) killed with SIGKILL
    c2 = join(broker, SHOP, session_ms=6000)
    expect_members(broker, "members-c2")
    commit(broker, column("describe-expired", "CURRENT-OFFSET"), c2, 3)
    advance(broker, 5_999)  # killed: no heartbeat, but still a member until its session ends
    assert described(broker).group_state == "Stable"
    expect_members(broker, "members-killed")
    advance(broker, 1)  # heartbeat expiry: removed, the group rebalances to Empty
    expect_lists(broker, "expired")
    expect_state(broker, "state-expired")
    expect_members(broker, "members-expired")
    expect_offsets(broker, "offsets-expired")
    beat = HeartbeatRequest(group_id=SHOP, generation_id=3, member_id=c2)
    assert call(broker, ApiKey.HEARTBEAT, 4, beat).error_code == ErrorCode.UNKNOWN_MEMBER_ID

    deletion = call(broker, ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=(SHOP,)))
    assert deletion.results[0].error_code == 0
    assert "was successful" in stdout("delete")
    assert set(listed(broker)) == {r["GROUP"] for r in rows("list-deleted")}
    assert described(broker).group_state == "Dead"
    assert "not found" in stdout("describe-deleted")

    # the random group: Empty without offsets until the cleanup run of its partition
    advance(broker, loaded_at + CHECK_INTERVAL_MS - 1 - broker.clock.now_ms())
    assert listed(broker) == {anonymous: "Empty"}
    advance(broker, 1)
    assert listed(broker) == {}
    assert described(broker, anonymous).group_state == "Dead"
    partition = broker.group_coordinator.partition_for(anonymous)
    log = broker.log(CONSUMER_OFFSETS, partition)
    last = decode_record(list(stored_records(log))[-1])
    assert (last.key, last.value) == (GroupMetadataKey(anonymous), None)


def test_broker_settings_drive_the_offsets_expiry(tmp_path: Path) -> None:
    """``offsets.retention.minutes`` and ``offsets.retention.check.interval.ms`` from the
    broker config: an Empty group's offsets expire a retention after it became Empty, at
    the next cleanup run, then the group is gone (OffsetFetch answers nothing stored)."""
    settings = {"offsets.retention.minutes": "1", "offsets.retention.check.interval.ms": "15000"}
    broker = new_broker(tmp_path, settings)
    find(broker, 4, (SHOP,))
    broker.create_topic(TOPIC, 3)
    member = join(broker, SHOP)
    commit(broker, {0: 4}, member, 1)
    leave(broker, SHOP, member)  # Empty from now
    advance(broker, 45_000)  # runs at 15, 30, 45 s: younger than a minute
    assert listed(broker) == {SHOP: "Empty"}
    assert fetched(broker) == {0: 4}
    advance(broker, 15_000)  # the run at 60 s: a minute after the group became Empty
    assert listed(broker) == {}
    assert fetched(broker) == {}
