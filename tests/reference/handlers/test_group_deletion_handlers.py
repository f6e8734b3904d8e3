"""OffsetDelete and DeleteGroups handlers: Kafka 4.0's topic checks and response shape
(``KafkaApis.handleOffsetDeleteRequest``, ``OffsetDeleteResponse.Builder.merge``),
one result per group, the APIs advertised with Kafka 4.0's ranges, and a deleted
offset no longer holding back KIP-68's consumed retention."""

from __future__ import annotations

from pathlib import Path

from group_handlers_support import ctx, new_broker
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest
from lethe_formats.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
    OffsetDeleteResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.cluster.group import CommitOffset, OffsetCommitRequest
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.handlers.api_versions import served_versions
from lethe_reference.handlers.group_deletion import handle_delete_groups, handle_offset_delete
from lethe_reference.retention.committed import committed_offsets_of

NONE, UNKNOWN_TOPIC_OR_PARTITION, GROUP_ID_NOT_FOUND = 0, 3, 69


def ready(log_dir: Path) -> Broker:
    broker = new_broker(log_dir)
    broker.create_topic("a", 2)
    broker.create_topic("__consumer_offsets", 50)
    runtime_of(broker)
    return broker


def commit(broker: Broker, group: str, offsets: dict[tuple[str, int], int]) -> None:
    request = OffsetCommitRequest(group, {tp: CommitOffset(o) for tp, o in offsets.items()})
    assert set(runtime_of(broker).coordinator.commit_offsets(request).values()) == {NONE}


def offset_delete(
    broker: Broker, group: str, topics: dict[str, tuple[int, ...]]
) -> OffsetDeleteResponse:
    request = OffsetDeleteRequest(
        group,
        tuple(
            OffsetDeleteRequestTopic(name, tuple(OffsetDeleteRequestPartition(p) for p in parts))
            for name, parts in topics.items()
        ),
    )
    return handle_offset_delete(broker, ctx(ApiKey.OFFSET_DELETE, 0), request)


def shape(answer: OffsetDeleteResponse) -> list[tuple[str, list[tuple[int, int]]]]:
    return [
        (t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.topics
    ]


def test_unknown_topics_and_partitions_come_first_then_the_coordinators_answers(
    tmp_path: Path,
) -> None:
    broker = ready(tmp_path)
    commit(broker, "g", {("a", 0): 4, ("a", 1): 2})
    answer = offset_delete(broker, "g", {"a": (0, 7), "zz": (0,)})
    assert answer.error_code == NONE
    assert shape(answer) == [("a", [(7, 3), (0, 0)]), ("zz", [(0, 3)])]
    assert runtime_of(broker).coordinator.committed("g").keys() == {("a", 1)}


def test_a_group_error_answers_no_topics(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    answer = offset_delete(broker, "nobody", {"a": (0,), "zz": (1,)})
    assert answer == OffsetDeleteResponse(error_code=GROUP_ID_NOT_FOUND)


def test_delete_groups_answers_each_distinct_group_once(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, "g", {("a", 0): 4})
    request = DeleteGroupsRequest(("g", "h", "g"))
    answer = handle_delete_groups(broker, ctx(ApiKey.DELETE_GROUPS, 2), request)
    assert answer.results == (DeletableGroupResult("g", NONE), DeletableGroupResult("h", 69))


def test_both_apis_are_advertised_with_kafka_4_0_ranges(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    ranges = {v.api_key: (v.min_version, v.max_version) for v in served_versions(broker)}
    assert ranges[ApiKey.DELETE_GROUPS] == (0, 2)  # golden ApiVersions frame #0002
    assert ranges[ApiKey.OFFSET_DELETE] == (0, 0)


def test_deleted_offsets_stop_counting_for_consumed_retention(tmp_path: Path) -> None:
    broker = ready(tmp_path)
    commit(broker, "low", {("a", 0): 4})
    commit(broker, "high", {("a", 0): 9})
    assert committed_offsets_of(broker).get("a", 0) == 4
    offset_delete(broker, "low", {"a": (0,)})
    assert committed_offsets_of(broker).get("a", 0) == 9
    handle_delete_groups(broker, ctx(ApiKey.DELETE_GROUPS, 2), DeleteGroupsRequest(("high",)))
    assert committed_offsets_of(broker).get("a", 0) is None
