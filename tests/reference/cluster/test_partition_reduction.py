"""KIP-694 reductions on an in-process cluster (lethe_reference.cluster.reduction): the
modes reach every broker, the deletion waits for every replica's broker, and a None
partition stays readable and refuses Produce meanwhile (catalog KIP694-MODE-2, -MODE-5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_support import SETTINGS, START_MS, connect
from lethe_conformance.client import calls
from lethe_conformance.client.batches import build_records
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsRequest,
    DeletePartitionsTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec
from lethe_reference.clock import ManualClock
from lethe_reference.embedded_cluster import EmbeddedCluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import dispatch
from lethe_reference.partitions.state import PartitionMode

TOPIC = "t"
CHECK_MS = 1000
DELAY_MS = 5000
KIP694 = {
    "delete.topic.partition.enable": "true",
    "delete.topic.partition.interval.delay.ms": "1000",
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[EmbeddedCluster]:
    overrides = SETTINGS | KIP694
    with EmbeddedCluster(tmp_path, 3, overrides=overrides, clock=ManualClock(START_MS)) as c:
        with connect(c, 1) as conn:
            answer = calls.create_topic(conn, TOPIC, 2, {}, replication_factor=3)
        assert answer.topics[0].error_code == 0, answer
        yield c


def reduce_to_one(cluster: EmbeddedCluster, node: int, delay_ms: int = DELAY_MS) -> Any:
    request = DeletePartitionsRequest(
        delete_partitions_delay_ms=delay_ms, topics=(DeletePartitionsTopic(TOPIC, 1),)
    )
    ctx = RequestContext(int(ApiKey.DELETE_PARTITIONS), 0, 1, "test", 1)
    return cluster.call(lambda: dispatch(cluster.broker(node), ctx, request))


def produce_error(cluster: EmbeddedCluster, node: int, partition: int) -> int:
    records = build_records([RecordSpec(b"k", b"v", (), START_MS)])
    data = TopicProduceData(TOPIC, (PartitionProduceData(partition, records),))
    request = ProduceRequest(acks=1, timeout_ms=1000, topic_data=(data,))
    ctx = RequestContext(int(ApiKey.PRODUCE), 9, 1, "test", 1)
    answer = cluster.call(lambda: dispatch(cluster.broker(node), ctx, request))
    assert isinstance(answer, ProduceResponse), answer
    return int(answer.responses[0].partition_responses[0].error_code)


def view(cluster: EmbeddedCluster, node: int) -> tuple[int, PartitionMode, bool]:
    """Broker ``node``'s partition count, mode of partition 1, and whether it has its log."""

    def read() -> tuple[int, PartitionMode, bool]:
        broker = cluster.broker(node)
        info = broker.metadata.get(TOPIC)
        assert info is not None
        return info.partitions, info.mode(1), broker.log(TOPIC, 1) is not None

    return cluster.call(read)


def test_a_reduction_started_on_one_broker_makes_the_partition_read_only_on_every_broker(
    cluster: EmbeddedCluster,
) -> None:
    reduce_to_one(cluster, 3)
    assert [view(cluster, n) for n in (1, 2, 3)] == [(2, PartitionMode.READ_ONLY, True)] * 3


def test_with_every_replica_online_the_due_reduction_deletes_every_replica(
    cluster: EmbeddedCluster,
) -> None:
    reduce_to_one(cluster, 1)
    cluster.advance(DELAY_MS + CHECK_MS)
    assert [view(cluster, n) for n in (1, 2, 3)] == [(1, PartitionMode.READ_WRITE, False)] * 3
    assert cluster.partition_state(TOPIC, 1) is None
    assert cluster.partition_state(TOPIC, 0) is not None


def test_an_offline_replica_holds_the_deletion_with_the_partition_in_none_mode(
    cluster: EmbeddedCluster,
) -> None:
    cluster.stop_broker(3)
    reduce_to_one(cluster, 1)
    cluster.advance(DELAY_MS + 3 * CHECK_MS)
    assert [view(cluster, n) for n in (1, 2)] == [(2, PartitionMode.NONE, True)] * 2
    state = cluster.partition_state(TOPIC, 1)
    assert state is not None and state.leader == 2
    assert produce_error(cluster, 2, 1) == ErrorCode.POLICY_VIOLATION
    with connect(cluster, 2) as conn:
        fetched = calls.fetch(conn, TOPIC, 1, 0)
    assert fetched.responses[0].partitions[0].error_code == ErrorCode.NONE


def test_the_held_deletion_finishes_when_the_replica_broker_starts_again(
    cluster: EmbeddedCluster,
) -> None:
    cluster.stop_broker(3)
    reduce_to_one(cluster, 1)
    cluster.advance(DELAY_MS + CHECK_MS)
    cluster.start_broker(3)
    assert [view(cluster, n) for n in (1, 2, 3)] == [(1, PartitionMode.READ_WRITE, False)] * 3
    assert cluster.partition_state(TOPIC, 1) is None
    assert produce_error(cluster, 2, 1) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_a_broker_down_while_the_reduction_started_learns_it_when_it_starts(
    cluster: EmbeddedCluster,
) -> None:
    cluster.stop_broker(3)
    reduce_to_one(cluster, 1)
    cluster.start_broker(3)
    assert view(cluster, 3) == (2, PartitionMode.READ_ONLY, True)
