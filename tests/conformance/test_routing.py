"""Routing a cluster reached by address: the decisions (no sockets), then a real move.

The rules are Kafka's clients': a partition's requests go to its leader as
Metadata names it, a group's to the coordinator FindCoordinator names, a
request spanning several leaders is split and answered in the order asked, and
an answer saying "not the leader any more" is followed to the new leader.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.client import calls
from lethe_conformance.client.batches import build_records
from lethe_conformance.client.routing import ClusterView, merge, needs, split, stale
from lethe_conformance.targets.bootstrap import BootstrapTarget, parse_bootstrap_servers
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
    DeleteRecordsTopicResult,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from lethe_formats.protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from lethe_formats.protocol.messages.offset_commit import OffsetCommitRequest
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from lethe_formats.records.builder import RecordSpec
from lethe_reference.embedded_cluster import EmbeddedCluster

TOPIC_ID = uuid.UUID(int=7)


def _metadata(leaders: dict[int, int], name: str = "t") -> MetadataResponse:
    brokers = tuple(MetadataResponseBroker(n, "127.0.0.1", 9000 + n) for n in (1, 2, 3))
    partitions = tuple(
        MetadataResponsePartition(ErrorCode.NONE, p, leader, replica_nodes=(leader,))
        for p, leader in leaders.items()
    )
    topic = MetadataResponseTopic(ErrorCode.NONE, name, TOPIC_ID, partitions=partitions)
    return MetadataResponse(brokers=brokers, topics=(topic,))


def _view(leaders: dict[int, int]) -> ClusterView:
    view = ClusterView()
    view.learn_metadata(_metadata(leaders))
    return view


def _delete(*partitions: int) -> DeleteRecordsRequest:
    rows = tuple(DeleteRecordsPartition(p, 5) for p in partitions)
    return DeleteRecordsRequest((DeleteRecordsTopic("t", rows),), 1000)


def test_bootstrap_servers_are_parsed_in_order() -> None:
    assert parse_bootstrap_servers("a:1, b:2,[::1]:3") == (("a", 1), ("b", 2), ("::1", 3))
    assert BootstrapTarget("a:1,b:2").name == "a:1,b:2"
    for bad in ("", ",", "a:1,b", "a:1,b:0"):
        with pytest.raises(ValueError, match="is not HOST:PORT"):
            parse_bootstrap_servers(bad)


def test_unknown_topics_are_asked_for_before_routing() -> None:
    view = ClusterView()
    assert needs(_delete(0), view).topics == ("t",)
    view.learn_metadata(_metadata({0: 2}))
    assert needs(_delete(0), view).topics == ()


def test_a_topic_with_a_leaderless_partition_is_asked_for_again() -> None:
    view = _view({0: 2, 1: -1})
    assert needs(_delete(0), view).topics == ("t",)
    assert split(_delete(1), view) == [(None, _delete(1))]  # any broker answers it


def test_a_partition_request_goes_to_the_leader() -> None:
    assert split(_delete(1), _view({0: 2, 1: 3})) == [(3, _delete(1))]


def test_partitions_on_different_leaders_are_split_per_leader() -> None:
    parts = split(_delete(0, 1, 2), _view({0: 2, 1: 3, 2: 2}))
    assert parts == [(2, _delete(0, 2)), (3, _delete(1))]


def test_split_answers_are_merged_in_request_order() -> None:
    def answer(*rows: tuple[int, int]) -> DeleteRecordsResponse:
        results = tuple(DeleteRecordsPartitionResult(p, lw, ErrorCode.NONE) for p, lw in rows)
        return DeleteRecordsResponse(0, (DeleteRecordsTopicResult("t", results),))

    merged = merge(_delete(0, 1, 2), [answer((0, 10), (2, 12)), answer((1, 11))])
    assert isinstance(merged, DeleteRecordsResponse)
    assert [(p.partition_index, p.low_watermark) for p in merged.topics[0].partitions] == [
        (0, 10),
        (1, 11),
        (2, 12),
    ]
    asked_twice = merge(_delete(0, 1, 0), [answer((0, 10)), answer((1, 11))])
    assert isinstance(asked_twice, DeleteRecordsResponse)
    assert [p.partition_index for p in asked_twice.topics[0].partitions] == [0, 1]


def test_produce_goes_to_the_leader() -> None:
    body = ProduceRequest(acks=-1, timeout_ms=1, topic_data=(TopicProduceData("t", (
        PartitionProduceData(1, b""),)),))  # fmt: skip
    assert split(body, _view({0: 1, 1: 3})) == [(3, body)]


def test_group_requests_go_to_the_coordinator() -> None:
    view = _view({0: 1})
    body = OffsetCommitRequest(group_id="g", topics=())
    assert needs(body, view).group == "g"
    found = Coordinator("g", 3, "127.0.0.1", 9003, ErrorCode.NONE, None)
    view.learn_coordinator("g", FindCoordinatorResponse(coordinators=(found,)))
    assert needs(body, view).group is None
    assert split(body, view) == [(3, body)]
    view.forget_group("g")
    assert split(body, view) == [(None, body)]


def test_a_coordinator_not_available_leaves_the_group_to_any_broker() -> None:
    view = ClusterView()
    refused = FindCoordinatorResponse(
        error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, node_id=-1, host="", port=-1
    )
    view.learn_coordinator("g", refused)
    assert split(OffsetCommitRequest(group_id="g", topics=()), view)[0][0] is None


def test_a_broker_config_goes_to_that_broker_other_requests_anywhere() -> None:
    view = _view({0: 1})
    broker = DescribeConfigsRequest((DescribeConfigsResource(4, "2", None),))
    topic = DescribeConfigsRequest((DescribeConfigsResource(2, "t", None),))
    assert split(broker, view)[0][0] == 2
    assert needs(topic, ClusterView()).topics == ("t",)
    assert split(topic, view)[0][0] == 1  # the leader of partition 0 (a change shows there)
    assert split(MetadataRequest(topics=None), view)[0][0] is None


def test_only_answers_made_of_stale_errors_are_followed() -> None:
    def produced(*codes: int) -> ProduceResponse:
        parts = tuple(PartitionProduceResponse(i, c, -1) for i, c in enumerate(codes))
        return ProduceResponse((TopicProduceResponse("t", parts),))

    assert stale(produced(ErrorCode.NOT_LEADER_OR_FOLLOWER))
    assert stale(produced(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH))
    assert not stale(produced(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE))
    assert not stale(produced(ErrorCode.NONE))
    assert not stale(produced(ErrorCode.OFFSET_OUT_OF_RANGE))


# --- against lethe's embedded cluster ------------------------------------------------------


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(tmp_path, 3) as started:
        yield started


def _leaders(cluster: EmbeddedCluster, topic: str, count: int) -> dict[int, int]:
    found: dict[int, int] = {}
    for partition in range(count):
        state = cluster.partition_state(topic, partition)
        assert state is not None
        found[partition] = state.leader
    return found


def test_requests_reach_every_leader_and_follow_a_move(cluster: EmbeddedCluster) -> None:
    """Three partitions, one replica each, land on different brokers: a DeleteRecords of all
    three through one bootstrap address is answered for each by its leader; after a leader
    moves, the next request (with a stale view) is followed to the new leader."""
    target = BootstrapTarget(cluster.address(1))
    conn = target.connect()
    try:
        created = calls.create_topic(conn, "routed", 3, {}, replication_factor=2)
        assert created.topics[0].error_code == ErrorCode.NONE
        leaders = _leaders(cluster, "routed", 3)
        assert len(set(leaders.values())) > 1, leaders  # the test shows a spread
        batch = build_records([RecordSpec(b"k", b"v", timestamp=1_795_780_000_000)])
        for partition in range(3):
            answer = calls.produce(conn, "routed", partition, batch)
            assert answer.responses[0].partition_responses[0].error_code == ErrorCode.NONE
        deleted = calls.delete_records(conn, [("routed", p, 1) for p in range(3)])
        rows = [
            (r.partition_index, r.error_code, r.low_watermark) for r in deleted.topics[0].partitions
        ]
        assert rows == [(0, 0, 1), (1, 0, 1), (2, 0, 1)]
        state = cluster.partition_state("routed", 0)
        assert state is not None
        other = next(n for n in state.replicas if n != state.leader)
        cluster.move_leader("routed", 0, other)
        answer = calls.produce(conn, "routed", 0, batch)
        produced = answer.responses[0].partition_responses[0]
        assert (produced.error_code, produced.base_offset) == (ErrorCode.NONE, 1)
        assert conn.view.leaders[("routed", 0)] == other  # type: ignore[attr-defined]
    finally:
        conn.close()


def test_a_single_broker_is_reached_where_we_reached_it() -> None:
    """One broker in Metadata: everything goes to the bootstrap connection, even when the
    advertised address differs (a proxy in front of the broker)."""
    view = ClusterView()
    view.learn_metadata(
        MetadataResponse(
            brokers=(MetadataResponseBroker(1, "10.0.0.9", 9092),),
            topics=_metadata({0: 1}).topics,
        )
    )
    assert split(_delete(0), view) == [(None, _delete(0))]
