"""ElectLeaders and partition reassignment across the brokers of an EmbeddedCluster, sent
over the wire to any broker (Kafka forwards both to its controller), with the outcomes
``ReplicationControlManager`` gives (elections, reassignment stages, a leaving leader)."""

from __future__ import annotations

from pathlib import Path

from cluster_support import START_MS, connect, offsets, produce
from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.targets.elections import move_leader
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignableTopic,
)
from lethe_formats.protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
    ElectLeadersTopic,
)
from lethe_formats.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from lethe_reference.clock import ManualClock
from lethe_reference.embedded_cluster import EmbeddedCluster

SETTINGS = {"log.retention.check.interval.ms": "1000", "log.segment.delete.delay.ms": "0"}


def cluster_of(tmp_path: Path) -> EmbeddedCluster:
    return EmbeddedCluster(tmp_path, 3, overrides=SETTINGS, clock=ManualClock(START_MS))


def create(cluster: EmbeddedCluster, topic: str, factor: int) -> None:
    with connect(cluster, 1) as conn:
        answer = calls.create_topic(conn, topic, 1, {}, replication_factor=factor)
    assert answer.topics[0].error_code == 0, answer


def elect(cluster: EmbeddedCluster, node: int, election: int, topic: str) -> tuple[int, str | None]:
    with connect(cluster, node) as conn:
        answer = conn.request(
            ElectLeadersRequest(election, (ElectLeadersTopic(topic, (0,)),)), version=2
        )
    assert isinstance(answer, ElectLeadersResponse) and answer.error_code == 0
    ((result,),) = [answer.replica_election_results[0].partition_result]
    return result.error_code, result.error_message


def reassign(
    cluster: EmbeddedCluster, topic: str, replicas: tuple[int, ...] | None
) -> tuple[int, str | None]:
    request = AlterPartitionReassignmentsRequest(
        topics=(ReassignableTopic(topic, (ReassignablePartition(0, replicas),)),)
    )
    with connect(cluster, 3) as conn:
        answer = conn.request(request, version=0)
    assert isinstance(answer, AlterPartitionReassignmentsResponse)
    ((result,),) = [answer.responses[0].partitions]
    return result.error_code, result.error_message


def ongoing(
    cluster: EmbeddedCluster,
) -> list[tuple[str, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    with connect(cluster, 2) as conn:
        answer = conn.request(ListPartitionReassignmentsRequest(), version=0)
    assert isinstance(answer, ListPartitionReassignmentsResponse) and answer.error_code == 0
    return [
        (t.name, p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas)
        for t in answer.topics
        for p in t.partitions
    ]


def state(
    cluster: EmbeddedCluster, topic: str
) -> tuple[tuple[int, ...], int, int, tuple[int, ...]]:
    found = cluster.partition_state(topic, 0)
    assert found is not None
    return found.replicas, found.leader, found.leader_epoch, found.isr


def test_a_preferred_election_gives_leadership_back_to_the_first_replica(tmp_path: Path) -> None:
    with cluster_of(tmp_path) as cluster:
        create(cluster, "t", 3)
        assert elect(cluster, 2, 0, "t") == (84, "Leader election not needed for topic partition.")
        cluster.move_leader("t", 0, 2)
        assert state(cluster, "t") == ((1, 2, 3), 2, 1, (1, 2, 3))
        assert elect(cluster, 3, 0, "t") == (0, None)
        assert state(cluster, "t") == ((1, 2, 3), 1, 2, (1, 2, 3))
        cluster.move_leader("t", 0, 3)
        cluster.stop_broker(1)  # the preferred replica is gone: nothing to elect
        assert elect(cluster, 2, 0, "t") == (80, "The preferred leader was not available.")
        assert state(cluster, "t")[1] == 3


def test_an_unclean_election_makes_a_live_out_of_sync_replica_the_leader(tmp_path: Path) -> None:
    with cluster_of(tmp_path) as cluster:
        create(cluster, "t", 2)  # replicas (1, 2)
        produce(cluster, 1, "t", 3)
        cluster.stop_broker(2)  # ISR (1)
        cluster.stop_broker(1)  # no leader; the ISR keeps its last member, 1
        assert state(cluster, "t") == ((1, 2), -1, 1, (1,))
        cluster.start_broker(2)  # not in the ISR: not elected
        assert state(cluster, "t")[1] == -1
        assert elect(cluster, 2, 0, "t") == (80, "The preferred leader was not available.")
        assert elect(cluster, 2, 1, "t") == (0, None)
        replicas, leader, _, isr = state(cluster, "t")
        assert (replicas, leader, isr) == ((1, 2), 2, (2,))
        assert elect(cluster, 2, 1, "t") == (84, "Leader election not needed for topic partition.")


def test_a_reassignment_adds_catches_up_removes_and_moves_the_leaving_leader(
    tmp_path: Path,
) -> None:
    with cluster_of(tmp_path) as cluster:
        create(cluster, "t", 1)  # replicas (1,)
        produce(cluster, 1, "t", 4)
        cluster.pause_fetching(2, "t", 0)
        assert reassign(cluster, "t", (2, 3)) == (0, None)
        # broker 3 caught up at once, broker 2 is held back: still moving
        assert ongoing(cluster) == [("t", 0, (2, 3, 1), (2, 3), (1,))]
        replicas, leader, epoch, isr = state(cluster, "t")
        assert (replicas, leader, epoch) == ((2, 3, 1), 1, 0)
        assert 3 in isr and 2 not in isr
        cluster.resume_fetching(2, "t", 0)
        cluster.advance(1000)
        assert ongoing(cluster) == []
        # broker 1 left: the first target replica in the ISR leads, one epoch up; the
        # ISR keeps the order the replicas joined in (3 first: 2 was held back)
        assert state(cluster, "t") == ((2, 3), 2, 1, (3, 2))
        assert offsets(cluster, 2, "t")[2] == 4 and offsets(cluster, 3, "t")[2] == 4
        assert cluster.call(lambda: cluster.broker(1).log("t", 0)) is None


def test_a_reorder_finishes_at_once_and_a_cancel_without_a_move_is_refused(tmp_path: Path) -> None:
    with cluster_of(tmp_path) as cluster:
        create(cluster, "t", 2)
        assert reassign(cluster, "t", (2, 1)) == (0, None)
        assert ongoing(cluster) == []
        assert state(cluster, "t")[:2] == ((2, 1), 1)
        assert elect(cluster, 1, 0, "t") == (0, None)
        assert state(cluster, "t")[1] == 2
        assert reassign(cluster, "t", None) == (85, "No partition reassignment is in progress.")
        assert reassign(cluster, "t", (4,)) == (
            39,
            "The manual partition assignment includes broker 4, but no such broker is registered.",
        )


def test_cancelling_a_reassignment_goes_back_to_the_original_replicas(tmp_path: Path) -> None:
    with cluster_of(tmp_path) as cluster:
        create(cluster, "t", 1)
        cluster.pause_fetching(3, "t", 0)
        assert reassign(cluster, "t", (3,)) == (0, None)
        assert ongoing(cluster) == [("t", 0, (3, 1), (3,), (1,))]
        assert reassign(cluster, "t", None) == (0, None)
        assert ongoing(cluster) == []
        assert state(cluster, "t") == ((1,), 1, 1, (1,))


class _Nodes:
    """The kit's :class:`~lethe_conformance.targets.elections.ElectionNodes` over an
    EmbeddedCluster (what a launched target gives for real Kafka processes)."""

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster

    def answering(self) -> list[int]:
        return [n for n in self.cluster.node_ids if self.cluster.running(n)]

    def connect_to(self, node_id: int) -> KafkaConnection:
        return connect(self.cluster, node_id)

    def admin_connection(self, node_id: int) -> KafkaConnection:
        return connect(self.cluster, node_id)


def test_the_kits_operator_move_works_on_the_reference_cluster(tmp_path: Path) -> None:
    """The conformance kit moves leaders on real Kafka with a reorder reassignment and a
    preferred election (targets/elections.py); the reference cluster now takes both."""
    with cluster_of(tmp_path) as cluster:
        create(cluster, "t", 3)
        move_leader(_Nodes(cluster), "t", 0, 3)
        assert state(cluster, "t") == ((3, 1, 2), 3, 1, (1, 2, 3))
