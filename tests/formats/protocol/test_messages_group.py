"""Group APIs (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit, OffsetFetch, DescribeGroups, ListGroups): Kafka 4.0's version
ranges, round trips at every version, hand-laid bytes for the versions the
golden recording does not cover, version rules (non-ignorable fields raise,
ignorable ones are dropped), and the values the recorded frames carry.

Expected bytes are laid out here from Kafka's message specs with ``struct``,
independently of lethe's encoder; expected golden values come from the
recording (fixtures/golden/wire/README labels and Kafka 4.0's ApiVersions
answer).
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.coordinator.consumer_protocol import TopicPartitionList, decode_assignment
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.envelope import decode_request, decode_response
from lethe_formats.protocol.exceptions import UnsupportedVersionError
from lethe_formats.protocol.messages.api_versions import ApiVersionsResponse
from lethe_formats.protocol.messages.describe_groups import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from lethe_formats.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from lethe_formats.protocol.messages.leave_group import (
    LeaveGroupMemberIdentity,
    LeaveGroupRequest,
    LeaveGroupResponse,
)
from lethe_formats.protocol.messages.list_groups import (
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
)
from lethe_formats.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
)
from lethe_formats.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct
from wire_bytes import i16, i32, i64
from wire_golden import frame_by_seq
from wire_strategies import message_values

#: api key -> (lowest, highest) version Kafka 4.0 supports, first flexible version.
GROUP_APIS = {8: (2, 9, 8), 9: (1, 9, 6), 10: (0, 6, 3), 11: (2, 9, 6), 12: (0, 4, 4)}
GROUP_APIS |= {13: (0, 5, 4), 14: (0, 5, 4), 15: (0, 6, 5), 16: (0, 5, 3)}


# ------------------------------------------------------------------ byte helpers


def i8(value: int) -> bytes:
    return struct.pack(">b", value)


def s(text: str | None) -> bytes:
    """Classic string: int16 length (-1 = null), UTF-8."""
    if text is None:
        return i16(-1)
    return i16(len(text)) + text.encode()


def cs(text: str | None) -> bytes:
    """Compact string: uvarint length + 1 (0 = null); short strings only."""
    if text is None:
        return b"\x00"
    assert len(text) < 127
    return bytes([len(text) + 1]) + text.encode()


def b(data: bytes) -> bytes:
    """Classic bytes: int32 length."""
    return i32(len(data)) + data


def n(count: int) -> bytes:
    """Classic array length."""
    return i32(count)


def cn(count: int) -> bytes:
    """Compact array length (count + 1); small counts only."""
    return bytes([count + 1])


NO_TAGS = b"\x00"


def body(seq: int) -> Any:
    frame = frame_by_seq(seq)
    if frame.direction == "request":
        return decode_request(frame.payload)[1]
    return decode_response(frame.api_key, frame.api_version, frame.payload)[1]


# ------------------------------------------------------------- ranges and trips


def test_ranges_are_what_kafka_4_0_advertised_in_its_api_versions_answer() -> None:
    answer = body(2)
    assert isinstance(answer, ApiVersionsResponse)
    advertised = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    for api_key, (low, high, _) in GROUP_APIS.items():
        spec = api(api_key)
        assert (spec.min_version, spec.max_version) == advertised[api_key] == (low, high)


@pytest.mark.parametrize("api_key", sorted(GROUP_APIS))
def test_flexible_versions_start_where_kafka_4_0_starts_them(api_key: int) -> None:
    low, high, first_flexible = GROUP_APIS[api_key]
    spec = api(api_key)
    flexible = [v for v in range(low, high + 1) if spec.is_flexible(v)]
    assert flexible == list(range(max(low, first_flexible), high + 1))


def _round_trip_cases() -> list[Any]:
    cases = []
    for api_key, (low, high, _) in sorted(GROUP_APIS.items()):
        spec = api(api_key)
        for cls in (spec.request, spec.response):
            cases += [pytest.param(cls, v, id=f"{cls.__name__}-v{v}") for v in range(low, high + 1)]
    return cases


@pytest.mark.parametrize(("cls", "version"), _round_trip_cases())
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_group_message_round_trips_at_every_version(
    cls: type[Struct], version: int, data: st.DataObject
) -> None:
    value = data.draw(message_values(cls, version))
    wire = encode(value, version)
    assert decode(cls, version, wire) == value


@pytest.mark.parametrize(("api_key", "version"), [(8, 1), (9, 0), (11, 1), (15, 7), (16, 6)])
def test_versions_kafka_4_0_does_not_support_are_refused(api_key: int, version: int) -> None:
    with pytest.raises(UnsupportedVersionError):
        encode(api(api_key).request(), version)


# ------------------------------------------------------------- FindCoordinator


def test_find_coordinator_v0_is_key_only_and_answers_one_node() -> None:
    assert encode(FindCoordinatorRequest(key="g"), 0) == s("g")
    wire = i16(15) + i32(-1) + s("") + i32(-1)
    answer = decode(FindCoordinatorResponse, 0, wire)
    assert (answer.error_code, answer.node_id, answer.host, answer.port) == (15, -1, "", -1)


def test_find_coordinator_v3_is_flexible_with_a_nullable_error_message() -> None:
    request = FindCoordinatorRequest(key="t", key_type=KEY_TYPE_TRANSACTION)
    assert encode(request, 3) == cs("t") + i8(1) + NO_TAGS
    wire = i32(0) + i16(0) + cs(None) + i32(1) + cs("h") + i32(9092) + NO_TAGS
    answer = decode(FindCoordinatorResponse, 3, wire)
    assert (answer.error_message, answer.node_id, answer.host, answer.port) == (None, 1, "h", 9092)


def test_find_coordinator_v4_batches_keys() -> None:
    request = FindCoordinatorRequest(coordinator_keys=("a", "bb"))
    assert encode(request, 4) == i8(0) + cn(2) + cs("a") + cs("bb") + NO_TAGS


def test_find_coordinator_key_type_and_batching_are_not_dropped_silently() -> None:
    with pytest.raises(UnsupportedVersionError):
        encode(FindCoordinatorRequest(key="t", key_type=KEY_TYPE_TRANSACTION), 0)
    with pytest.raises(UnsupportedVersionError):
        encode(FindCoordinatorRequest(coordinator_keys=("g",)), 3)
    with pytest.raises(UnsupportedVersionError):
        encode(FindCoordinatorRequest(key="g"), 4)


def test_find_coordinator_golden_answers() -> None:
    v2 = body(43)
    assert isinstance(v2, FindCoordinatorResponse)
    assert (v2.error_code, v2.error_message, v2.node_id) == (0, "NONE", 1)
    assert (v2.host, v2.port) == ("127.0.0.1", 19092)
    assert body(41).key == "wire-rd-group"
    assert body(165).coordinator_keys == ("wire-kp-group",)
    v6 = body(166)
    assert isinstance(v6, FindCoordinatorResponse)
    (coordinator,) = v6.coordinators
    assert (coordinator.key, coordinator.node_id, coordinator.error_code) == ("wire-kp-group", 1, 0)


# ------------------------------------------------------------------- JoinGroup


def test_join_group_v2_layout() -> None:
    request = JoinGroupRequest(
        group_id="g",
        session_timeout_ms=6000,
        rebalance_timeout_ms=300000,
        protocol_type="consumer",
        protocols=(JoinGroupRequestProtocol("range", b"\x01"),),
    )
    wire = s("g") + i32(6000) + i32(300000) + s("") + s("consumer") + n(1) + s("range") + b(b"\x01")
    assert encode(request, 2) == wire
    answer = i32(0) + i16(0) + i32(3) + s("range") + s("m") + s("m") + n(1) + s("m") + b(b"")
    decoded = decode(JoinGroupResponse, 2, answer)
    assert (decoded.generation_id, decoded.leader, decoded.members[0].member_id) == (3, "m", "m")


def test_join_group_v9_carries_skip_assignment_and_v8_refuses_it() -> None:
    answer = JoinGroupResponse(generation_id=1, protocol_name="range", skip_assignment=True)
    wire = i32(0) + i16(0) + i32(1) + cs(None) + cs("range") + cs("") + b"\x01" + cs("") + cn(0)
    assert encode(answer, 9) == wire + NO_TAGS
    with pytest.raises(UnsupportedVersionError):
        encode(answer, 8)


def test_join_group_reason_is_ignorable_and_instance_id_is_not() -> None:
    plain = JoinGroupRequest(group_id="g", protocol_type="consumer")
    explained = JoinGroupRequest(group_id="g", protocol_type="consumer", reason="why")
    assert encode(explained, 7) == encode(plain, 7)
    assert decode(JoinGroupRequest, 8, encode(explained, 8)).reason == "why"
    with pytest.raises(UnsupportedVersionError):
        encode(JoinGroupRequest(group_id="g", group_instance_id="static-1"), 4)


def test_join_group_golden_member_id_required_then_success() -> None:
    assert body(53).error_code == 16  # NOT_COORDINATOR before the coordinator was ready
    first = body(61)
    assert isinstance(first, JoinGroupResponse)
    assert (first.error_code, first.generation_id, first.protocol_name) == (79, -1, "")
    assert first.member_id.startswith("golden-rdk-consumer-")
    assert body(62).member_id == first.member_id  # the client joins again with it
    joined = body(63)
    assert isinstance(joined, JoinGroupResponse)
    assert (joined.error_code, joined.generation_id, joined.protocol_name) == (0, 1, "range")
    assert joined.leader == joined.member_id == first.member_id
    assert [m.member_id for m in joined.members] == [first.member_id]


def test_join_group_v7_golden_names_the_protocol_type_and_nulls_the_name() -> None:
    refused = body(170)
    assert isinstance(refused, JoinGroupResponse)
    assert (refused.error_code, refused.protocol_name, refused.protocol_type) == (79, None, None)
    second = body(178)
    assert (second.generation_id, second.protocol_type, second.protocol_name) == (
        2,
        "consumer",
        "range",
    )
    request = body(169)
    assert [p.name for p in request.protocols] == ["range", "roundrobin"]
    assert (request.session_timeout_ms, request.rebalance_timeout_ms) == (6000, 300000)


# ------------------------------------------------------------------- SyncGroup


def test_sync_group_v0_layout() -> None:
    request = SyncGroupRequest(group_id="g", generation_id=1, member_id="m")
    assert encode(request, 0) == s("g") + i32(1) + s("m") + n(0)
    answer = decode(SyncGroupResponse, 0, i16(27) + b(b"xy"))
    assert (answer.error_code, answer.assignment) == (27, b"xy")


def test_sync_group_v5_names_protocol_and_v4_drops_it() -> None:
    request = SyncGroupRequest(group_id="g", member_id="m", protocol_type="consumer")
    flexible_v4 = cs("g") + i32(0) + cs("m") + cs(None) + cn(0) + NO_TAGS
    assert encode(request, 4) == flexible_v4
    v5 = cs("g") + i32(0) + cs("m") + cs(None) + cs("consumer") + cs(None) + cn(0) + NO_TAGS
    assert encode(request, 5) == v5


def test_sync_group_golden_assignment_is_the_leaders_plan() -> None:
    answer = body(67)
    assert isinstance(answer, SyncGroupResponse)
    assert answer.error_code == 0
    assigned = decode_assignment(answer.assignment).assigned_partitions
    assert assigned == (TopicPartitionList("wire-rd-events", (0,)),)
    assert body(66).assignments[0].assignment == answer.assignment
    kafka_python = body(180)
    assert (kafka_python.protocol_type, kafka_python.protocol_name) == ("consumer", "range")
    assert decode_assignment(kafka_python.assignment).assigned_partitions == (
        TopicPartitionList("wire-kp-events", (0,)),
    )


# ---------------------------------------------------------- Heartbeat, LeaveGroup


def test_heartbeat_layouts() -> None:
    request = HeartbeatRequest(group_id="g", generation_id=2, member_id="m")
    assert encode(request, 0) == s("g") + i32(2) + s("m")
    assert encode(request, 3) == s("g") + i32(2) + s("m") + s(None)
    assert encode(request, 4) == cs("g") + i32(2) + cs("m") + cs(None) + NO_TAGS
    assert decode(HeartbeatResponse, 0, i16(27)).error_code == 27
    assert decode(HeartbeatResponse, 4, i32(5) + i16(0) + NO_TAGS).throttle_time_ms == 5


def test_heartbeat_golden_generations() -> None:
    assert (body(68).generation_id, body(70).error_code) == (1, 0)
    assert (body(192).generation_id, body(193).error_code) == (2, 0)


def test_leave_group_switches_to_a_member_batch_at_v3() -> None:
    old = LeaveGroupRequest(group_id="g", member_id="m")
    assert encode(old, 2) == s("g") + s("m")
    batch = LeaveGroupRequest(group_id="g", members=(LeaveGroupMemberIdentity("m", "i"),))
    assert encode(batch, 3) == s("g") + n(1) + s("m") + s("i")
    with pytest.raises(UnsupportedVersionError):
        encode(batch, 2)
    with pytest.raises(UnsupportedVersionError):
        encode(old, 3)
    answer = i32(0) + i16(0) + n(1) + s("m") + s(None) + i16(25)
    (member,) = decode(LeaveGroupResponse, 3, answer).members
    assert (member.member_id, member.group_instance_id, member.error_code) == ("m", None, 25)


def test_leave_group_golden_requests() -> None:
    assert body(103).member_id.startswith("golden-rdk-consumer-")
    (member,) = body(215).members
    assert member.member_id.startswith("golden-kpy-consumer-")
    assert (member.group_instance_id, member.reason) == (None, None)
    assert body(216).members[0].member_id == member.member_id


# ---------------------------------------------------------------- OffsetCommit


def _commit(**extra: Any) -> OffsetCommitRequest:
    partition = OffsetCommitRequestPartition(partition_index=0, committed_offset=6)
    topic = OffsetCommitRequestTopic("t", (partition,))
    return OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=1, member_id="m", topics=(topic,), **extra
    )


def test_offset_commit_v2_carries_retention_and_v5_drops_it() -> None:
    request = _commit(retention_time_ms=86_400_000)
    tail = n(1) + s("t") + n(1) + i32(0) + i64(6) + s("")
    assert encode(request, 2) == s("g") + i32(1) + s("m") + i64(86_400_000) + tail
    assert encode(request, 5) == s("g") + i32(1) + s("m") + tail  # ignorable


def test_offset_commit_v6_adds_the_leader_epoch_and_v8_is_flexible() -> None:
    request = _commit()
    partition_v6 = i32(0) + i64(6) + i32(-1) + s("")
    assert encode(request, 6) == s("g") + i32(1) + s("m") + n(1) + s("t") + n(1) + partition_v6
    partition = i32(0) + i64(6) + i32(-1) + cs("") + NO_TAGS
    topics = cn(1) + cs("t") + cn(1) + partition + NO_TAGS
    assert encode(request, 8) == cs("g") + i32(1) + cs("m") + cs(None) + topics + NO_TAGS


def test_offset_commit_golden_commits_offset_6() -> None:
    for request_seq, response_seq, generation in ((93, 94, 1), (206, 207, 2)):
        request = body(request_seq)
        assert isinstance(request, OffsetCommitRequest)
        assert request.generation_id_or_member_epoch == generation
        (partition,) = request.topics[0].partitions
        assert (partition.committed_offset, partition.committed_leader_epoch) == (6, 0)
        answer = body(response_seq)
        assert isinstance(answer, OffsetCommitResponse)
        assert answer.topics[0].partitions[0].error_code == 0


# ----------------------------------------------------------------- OffsetFetch


def test_offset_fetch_v1_has_no_null_topics_and_no_top_level_error() -> None:
    request = OffsetFetchRequest(group_id="g", topics=(OffsetFetchRequestTopic("t", (0, 1)),))
    assert encode(request, 1) == s("g") + n(1) + s("t") + n(2) + i32(0) + i32(1)
    answer = n(1) + s("t") + n(1) + i32(0) + i64(-1) + s("") + i16(0)
    partition = decode(OffsetFetchResponse, 1, answer).topics[0].partitions[0]
    assert (partition.committed_offset, partition.committed_leader_epoch) == (-1, -1)


def test_offset_fetch_v2_to_v7_allow_null_topics() -> None:
    every_topic = OffsetFetchRequest(group_id="g", topics=None)
    assert encode(every_topic, 2) == s("g") + i32(-1)
    assert encode(every_topic, 7) == cs("g") + b"\x00" + b"\x00" + NO_TAGS
    answer = i32(0) + n(0) + i16(16)
    assert decode(OffsetFetchResponse, 3, answer).error_code == 16


def test_offset_fetch_v5_answers_the_leader_epoch() -> None:
    answer = i32(0) + n(1) + s("t") + n(1) + i32(0) + i64(6) + i32(3) + s(None) + i16(0) + i16(0)
    partition = decode(OffsetFetchResponse, 5, answer).topics[0].partitions[0]
    assert partition == OffsetFetchResponsePartition(0, 6, 3, None, 0)


def test_offset_fetch_v8_batches_groups_and_v9_names_the_member() -> None:
    group = OffsetFetchRequestGroup(group_id="g", topics=None)
    request = OffsetFetchRequest(groups=(group,), require_stable=True)
    v8 = cn(1) + cs("g") + b"\x00" + NO_TAGS
    assert encode(request, 8) == v8 + b"\x01" + NO_TAGS
    v9 = cn(1) + cs("g") + cs(None) + i32(-1) + b"\x00" + NO_TAGS
    assert encode(request, 9) == v9 + b"\x01" + NO_TAGS
    with pytest.raises(UnsupportedVersionError):
        encode(OffsetFetchRequest(group_id="g"), 8)
    with pytest.raises(UnsupportedVersionError):
        encode(request, 7)
    with pytest.raises(UnsupportedVersionError):
        encode(OffsetFetchRequest(group_id="g", require_stable=True), 6)


def test_offset_fetch_golden_offsets_before_and_after_the_commit() -> None:
    for seq, expected in ((71, -1), (96, 6), (182, -1), (209, 6)):
        answer = body(seq)
        assert isinstance(answer, OffsetFetchResponse)
        assert answer.topics == ()  # v8+ answers per group
        (group,) = answer.groups
        (partition,) = group.topics[0].partitions
        assert (group.error_code, partition.committed_offset, partition.error_code) == (
            0,
            expected,
            0,
        )
        assert partition.metadata == ""
    request = body(69)
    assert isinstance(request, OffsetFetchRequest)
    assert (request.require_stable, request.groups[0].member_id) == (True, None)
    assert request.groups[0].topics == (OffsetFetchRequestTopic("wire-rd-events", (0,)),)
    assert body(181).require_stable is False


def test_offset_fetch_answer_of_a_topic_shape() -> None:
    topic = OffsetFetchResponseTopic("t", (OffsetFetchResponsePartition(0, 6, 0, "m", 0),))
    answer = OffsetFetchResponse(topics=(topic,))
    decoded = decode(OffsetFetchResponse, 7, encode(answer, 7))
    assert decoded.topics[0].partitions[0].metadata == "m"


# ------------------------------------------------------------- DescribeGroups


def test_describe_groups_v0_layout() -> None:
    assert encode(DescribeGroupsRequest(groups=("a", "b")), 0) == n(2) + s("a") + s("b")
    member = s("m") + s("c") + s("/127.0.0.1") + b(b"md") + b(b"as")
    group = i16(0) + s("g") + s("Stable") + s("consumer") + s("range") + n(1) + member
    (described,) = decode(DescribeGroupsResponse, 0, n(1) + group).groups
    assert described.members == (DescribedGroupMember("m", None, "c", "/127.0.0.1", b"md", b"as"),)
    assert described.authorized_operations == -(1 << 31)


def test_describe_groups_v6_has_an_error_message_that_v5_cannot_carry() -> None:
    missing = DescribedGroup(error_code=69, error_message="Group g not found.", group_id="g")
    answer = DescribeGroupsResponse(groups=(missing,))
    group = i16(69) + cs("Group g not found.") + cs("g") + cs("") + cs("") + cs("") + cn(0)
    wire = i32(0) + cn(1) + group + i32(-(1 << 31)) + NO_TAGS + NO_TAGS
    assert encode(answer, 6) == wire
    with pytest.raises(UnsupportedVersionError):
        encode(answer, 5)
    with pytest.raises(UnsupportedVersionError):
        encode(DescribeGroupsRequest(groups=("g",), include_authorized_operations=True), 2)


# ----------------------------------------------------------------- ListGroups


def test_list_groups_requests_by_version() -> None:
    assert encode(ListGroupsRequest(), 0) == b""
    assert encode(ListGroupsRequest(), 3) == NO_TAGS
    assert encode(ListGroupsRequest(states_filter=("Stable",)), 4) == cn(1) + cs("Stable") + NO_TAGS
    typed = ListGroupsRequest(types_filter=("classic",))
    assert encode(typed, 5) == cn(0) + cn(1) + cs("classic") + NO_TAGS
    with pytest.raises(UnsupportedVersionError):
        encode(typed, 4)


def test_list_groups_answers_by_version() -> None:
    v0 = i16(0) + n(1) + s("g") + s("consumer")
    assert decode(ListGroupsResponse, 0, v0).groups == (ListedGroup("g", "consumer"),)
    listed = ListedGroup("g", "consumer", "Stable", "classic")
    v5 = i32(0) + i16(0) + cn(1) + cs("g") + cs("consumer") + cs("Stable") + cs("classic")
    assert encode(ListGroupsResponse(groups=(listed,)), 5) == v5 + NO_TAGS + NO_TAGS
    assert encode(ListGroupsResponse(groups=(listed,)), 1) == i32(0) + v0  # ignorable: dropped
