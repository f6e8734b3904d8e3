"""OffsetCommit and OffsetFetch handlers: Kafka 4.0's topic checks, response order,
version shapes, the records in ``__consumer_offsets`` and commits surviving a restart.
(The recorded librdkafka/kafka-python commits and fetches are replayed in test_groups.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from group_handlers_support import advance, call, join_request, new_broker, sync_request
from lethe_formats.coordinator import OffsetCommitKey, OffsetCommitValue, decode_record
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_groups import DescribeGroupsRequest
from lethe_formats.protocol.messages.find_coordinator import FindCoordinatorRequest
from lethe_formats.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
)
from lethe_formats.records.scan import read_log
from lethe_reference.broker import Broker
from lethe_reference.cluster.group import partition_for
from lethe_reference.handlers import offsets


def ready(log_dir: Path) -> Broker:
    broker = new_broker(log_dir)
    call(broker, ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="g"))
    broker.create_topic("a", 2)
    broker.create_topic("c", 1)
    return broker


def commit_request(
    topics: dict[str, dict[int, int]],
    *,
    group: str = "g",
    generation: int = -1,
    member: str = "",
    metadata: str | None = "",
) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=generation,
        member_id=member,
        topics=tuple(
            OffsetCommitRequestTopic(
                name,
                tuple(
                    OffsetCommitRequestPartition(p, offset, 3, metadata)
                    for p, offset in parts.items()
                ),
            )
            for name, parts in topics.items()
        ),
    )


def commit(
    broker: Broker, version: int, request: OffsetCommitRequest
) -> list[tuple[str, list[tuple[int, int]]]]:
    answer = call(broker, ApiKey.OFFSET_COMMIT, version, request)
    return [
        (t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.topics
    ]


def fetch_v8(broker: Broker, groups: dict[str, dict[str, tuple[int, ...]] | None]) -> Any:
    request = OffsetFetchRequest(
        groups=tuple(
            OffsetFetchRequestGroup(
                group_id=group,
                topics=None
                if topics is None
                else tuple(OffsetFetchRequestTopic(n, ps) for n, ps in topics.items()),
            )
            for group, topics in groups.items()
        )
    )
    return call(broker, ApiKey.OFFSET_FETCH, 8, request).groups


def partitions(topics: Any) -> list[tuple[str, int, int, int, str | None, int]]:
    return [
        (
            t.name,
            p.partition_index,
            p.committed_offset,
            p.committed_leader_epoch,
            p.metadata,
            p.error_code,
        )
        for t in topics
        for p in t.partitions
    ]


# -- OffsetCommit ---------------------------------------------------------------------------


def test_unknown_topics_fail_without_asking_the_coordinator(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)  # no __consumer_offsets: the coordinator would say 16
    request = commit_request({"nope": {0: 5, 1: 6}}, generation=7, member="m")
    assert commit(broker, 9, request) == [("nope", [(0, 3), (1, 3)])]


def test_rejected_topics_come_first_then_the_coordinators_answers(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    request = OffsetCommitRequest(
        group_id="g",
        topics=(
            OffsetCommitRequestTopic("a", (OffsetCommitRequestPartition(0, 1, -1, ""),)),
            OffsetCommitRequestTopic("b", (OffsetCommitRequestPartition(0, 1, -1, ""),)),
            OffsetCommitRequestTopic(
                "c",
                (
                    OffsetCommitRequestPartition(9, 1, -1, ""),
                    OffsetCommitRequestPartition(0, 1, -1, ""),
                ),
            ),
        ),
    )
    assert commit(broker, 8, request) == [("b", [(0, 3)]), ("c", [(9, 3), (0, 0)]), ("a", [(0, 0)])]


@pytest.mark.parametrize(("version", "code"), [(9, 69), (8, 22), (2, 22)])
def test_commit_with_a_generation_to_an_unknown_group(
    tmp_path: Path, version: int, code: int
) -> None:
    broker = ready(tmp_path)
    assert commit(broker, version, commit_request({"a": {0: 1}}, generation=3, member="m")) == [
        ("a", [(0, code)])
    ]


def test_too_long_metadata_fails_only_its_partition(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    request = OffsetCommitRequest(
        group_id="g",
        topics=(
            OffsetCommitRequestTopic(
                "a",
                (
                    OffsetCommitRequestPartition(0, 1, -1, "x" * 4097),
                    OffsetCommitRequestPartition(1, 2, -1, "x" * 4096),
                ),
            ),
        ),
    )
    assert commit(broker, 9, request) == [("a", [(0, 12), (1, 0)])]


def test_commit_is_a_record_in_the_groups_offsets_partition(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, 9, commit_request({"a": {1: 42}}, metadata="meta"))
    log = broker.log("__consumer_offsets", partition_for("g", 50))
    assert log is not None and log.high_watermark == log.log_end_offset == 1
    (batch,) = read_log(log.active_segment.log.read(0, log.active_segment.size))
    assert isinstance(batch, RecordBatch) and batch.header.partition_leader_epoch == 0
    decoded = decode_record(batch.records[0])
    assert decoded.key == OffsetCommitKey("g", "a", 1)
    assert isinstance(decoded.value, OffsetCommitValue)
    assert (decoded.value.offset, decoded.value.leader_epoch, decoded.value.metadata) == (
        42,
        3,
        "meta",
    )


def test_error_response_fails_every_partition() -> None:
    request = commit_request({"a": {0: 1, 1: 2}, "c": {0: 3}})
    answer = offsets._commit_error(request, ErrorCode.UNKNOWN_SERVER_ERROR, None)
    assert [
        (t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.topics
    ] == [
        ("a", [(0, -1), (1, -1)]),
        ("c", [(0, -1)]),
    ]


# -- OffsetFetch ----------------------------------------------------------------------------


def test_fetch_v1_to_v7_answers_requested_partitions(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, 9, commit_request({"a": {1: 42}}, metadata=None))
    request = OffsetFetchRequest(
        group_id="g",
        topics=(OffsetFetchRequestTopic("a", (1, 0)), OffsetFetchRequestTopic("zz", (0,))),
    )
    for version in (1, 5, 7):
        answer = call(broker, ApiKey.OFFSET_FETCH, version, request)
        assert answer.error_code == 0
        assert partitions(answer.topics) == [
            ("a", 1, 42, 3, "", 0),
            ("a", 0, -1, -1, "", 0),
            ("zz", 0, -1, -1, "", 0),
        ]


def test_fetch_all_lists_every_committed_partition(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, 9, commit_request({"c": {0: 7}, "a": {1: 5, 0: 4}}))
    answer = call(broker, ApiKey.OFFSET_FETCH, 2, OffsetFetchRequest(group_id="g", topics=None))
    assert [(n, p, o) for n, p, o, *_ in partitions(answer.topics)] == [
        ("a", 0, 4),
        ("a", 1, 5),
        ("c", 0, 7),
    ]
    (group,) = fetch_v8(broker, {"g": None})
    assert [(n, p, o) for n, p, o, *_ in partitions(group.topics)] == [
        ("a", 0, 4),
        ("a", 1, 5),
        ("c", 0, 7),
    ]


def test_fetch_v8_answers_each_group(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, 9, commit_request({"a": {0: 9}}))
    known, unknown = fetch_v8(broker, {"g": {"a": (0,)}, "other": {"a": (0,)}})
    assert (known.group_id, known.error_code, partitions(known.topics)) == (
        "g",
        0,
        [("a", 0, 9, 3, "", 0)],
    )
    assert (unknown.group_id, unknown.error_code, partitions(unknown.topics)) == (
        "other",
        0,
        [("a", 0, -1, -1, "", 0)],
    )


def test_fetch_without_offsets_topic_is_a_group_error(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    old = call(
        broker,
        ApiKey.OFFSET_FETCH,
        7,
        OffsetFetchRequest(group_id="g", topics=(OffsetFetchRequestTopic("a", (0,)),)),
    )
    assert (old.error_code, old.topics) == (16, ())
    (group,) = fetch_v8(broker, {"g": {"a": (0,)}})
    assert (group.error_code, group.topics) == (16, ())


def test_fetch_error_response_matches_the_request_shape() -> None:
    v8 = OffsetFetchRequest(groups=(OffsetFetchRequestGroup("g", topics=None),))
    answer = offsets._fetch_error(v8, ErrorCode.UNKNOWN_SERVER_ERROR, None)
    assert [(g.group_id, g.error_code) for g in answer.groups] == [("g", -1)]
    assert encode(answer, 8)
    old = offsets._fetch_error(
        OffsetFetchRequest(group_id="g"), ErrorCode.UNKNOWN_SERVER_ERROR, None
    )
    assert (old.error_code, old.groups) == (-1, ())
    assert encode(old, 3)


@pytest.mark.parametrize("version", range(1, 10))
def test_fetch_answer_encodes(tmp_path: Path, version: int) -> None:
    broker = ready(tmp_path)
    commit(broker, 9, commit_request({"a": {0: 9}}))
    if version >= 8:
        request = OffsetFetchRequest(groups=(OffsetFetchRequestGroup("g", topics=None),))
    else:
        request = OffsetFetchRequest(group_id="g", topics=(OffsetFetchRequestTopic("a", (0,)),))
    assert encode(call(broker, ApiKey.OFFSET_FETCH, version, request), version)


@pytest.mark.parametrize("version", range(2, 10))
def test_commit_answer_encodes(tmp_path: Path, version: int) -> None:
    broker = ready(tmp_path)
    answer = call(broker, ApiKey.OFFSET_COMMIT, version, commit_request({"a": {0: 1}, "b": {0: 1}}))
    assert encode(answer, version)


# -- restart --------------------------------------------------------------------------------


def stable_member(broker: Broker) -> str:
    first = call(broker, ApiKey.JOIN_GROUP, 7, join_request(group="members"), "c1")
    member = call(
        broker, ApiKey.JOIN_GROUP, 7, join_request(first.member_id, group="members"), "c1"
    )
    call(
        broker,
        ApiKey.SYNC_GROUP,
        3,
        sync_request(member.member_id, 1, {member.member_id: b"A"}, group="members"),
    )
    return str(member.member_id)


def describe_members(broker: Broker) -> Any:
    request = DescribeGroupsRequest(groups=("members",))
    (group,) = call(broker, ApiKey.DESCRIBE_GROUPS, 5, request).groups
    return group.group_state, [(m.member_id, m.member_assignment) for m in group.members]


def test_commits_and_groups_survive_a_restart(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, 9, commit_request({"a": {0: 11, 1: 12}}, metadata="m"))
    member = stable_member(broker)
    commit(broker, 9, commit_request({"c": {0: 5}}, group="members", generation=1, member=member))
    broker.shutdown()
    again = new_broker(tmp_path, start_ms=broker.clock.now_ms())
    (simple, grouped) = fetch_v8(again, {"g": None, "members": {"c": (0,)}})
    assert partitions(simple.topics) == [("a", 0, 11, 3, "m", 0), ("a", 1, 12, 3, "m", 0)]
    assert partitions(grouped.topics) == [("c", 0, 5, 3, "", 0)]
    assert describe_members(again) == ("Stable", [(member, b"A")])


def test_startup_hook_restores_session_timers(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    stable_member(broker)
    broker.shutdown()
    again = new_broker(tmp_path, start_ms=broker.clock.now_ms())  # Broker.startup() starts it
    advance(again, 10_000)  # the member's session timeout, with no request at all
    assert describe_members(again) == ("Empty", [])
    again.shutdown()  # Broker.shutdown() unloads the groups
    assert again.group_coordinator is None
