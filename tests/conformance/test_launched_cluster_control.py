"""A launched cluster's leader moves, with fakes standing for Kafka's nodes.

``LaunchedTarget.move_leader`` elects a chosen replica as an operator does on
Kafka: AlterPartitionReassignments (the chosen replica first), then ElectLeaders
PREFERRED, both to a controller listener, then it waits until every node that
answers names the new leader. CI has no Kafka, so three scripted peers stand
for the nodes' listeners (``fake_broker``) and idle processes for the nodes
themselves (a node is "running" while its process lives). The scenarios'
use of it on real brokers is in conformance/verified and the wall-clock
tests run the same ops on the reference cluster.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fake_broker import FakeBroker, api_versions_body, response_frame
from lethe_conformance.targets.base import ControlError
from lethe_conformance.targets.launched import LaunchedTarget
from lethe_conformance.targets.launcher import load_launcher
from lethe_conformance.targets.processes import Node
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_request_body, decode_request_header
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from lethe_formats.protocol.messages.elect_leaders import (
    ElectLeadersPartitionResult,
    ElectLeadersResponse,
    ElectLeadersTopicResult,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

NOT_CONTROLLER = 41
INVALID_REPLICA_ASSIGNMENT = 39


class FakeCluster:
    """Partition ``t``-0 on replicas 1, 2, 3 led by 1; node 2 is the active controller."""

    def __init__(self, reassign_error: int = 0) -> None:
        self.replicas = [1, 2, 3]
        self.leader = 1
        self.epoch = 0
        self.reassign_error = reassign_error
        self.admin: list[tuple[int, str, Any]] = []  # (node, api, request body)

    def plaintext(self, node: int) -> FakeBroker:
        def answer(header: RequestHeader, payload: bytes) -> bytes | None:
            if header.api_key == ApiKey.API_VERSIONS:
                return response_frame(header, api_versions_body())
            assert header.api_key == ApiKey.METADATA, header
            partition = MetadataResponsePartition(
                error_code=0,
                partition_index=0,
                leader_id=self.leader,
                leader_epoch=self.epoch,
                replica_nodes=tuple(self.replicas),
                isr_nodes=(1, 2, 3),
            )
            topic = MetadataResponseTopic(error_code=0, name="t", partitions=(partition,))
            brokers = tuple(MetadataResponseBroker(n, "127.0.0.1", 1) for n in (1, 2, 3))
            return response_frame(header, MetadataResponse(brokers=brokers, topics=(topic,)))

        return FakeBroker(answer)

    def controller(self, node: int) -> FakeBroker:
        def answer(header: RequestHeader, payload: bytes) -> bytes | None:
            if header.api_key == ApiKey.API_VERSIONS:
                return response_frame(header, api_versions_body())
            _, at = decode_request_header(payload)
            body = decode_request_body(header, payload, at)
            self.admin.append((node, ApiKey(header.api_key).name, body))
            active = node == 2
            if header.api_key == ApiKey.ALTER_PARTITION_REASSIGNMENTS:
                code = self.reassign_error if active else NOT_CONTROLLER
                if code == 0:
                    self.replicas = list(body.topics[0].partitions[0].replicas)
                result = ReassignableTopicResponse(
                    "t", (ReassignablePartitionResponse(0, code, None),)
                )
                return response_frame(
                    header, AlterPartitionReassignmentsResponse(0, 0, None, (result,))
                )
            assert header.api_key == ApiKey.ELECT_LEADERS, header
            code = 0 if active else NOT_CONTROLLER
            if code == 0:
                self.leader, self.epoch = self.replicas[0], self.epoch + 1
            results = (ElectLeadersTopicResult("t", (ElectLeadersPartitionResult(0, code, None),)),)
            return response_frame(header, ElectLeadersResponse(0, 0, results))

        return FakeBroker(answer)


@pytest.fixture
def kafka_home(tmp_path: Path) -> Path:
    """A folder with the files the kafka launcher checks (nothing is run from it)."""
    for name in ("bin/kafka-server-start.sh", "bin/kafka-storage.sh"):
        (tmp_path / "home" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "home" / name).touch()
    return tmp_path / "home"


def fake_target(
    tmp_path: Path, home: Path, cluster: FakeCluster, stack: ExitStack
) -> LaunchedTarget:
    """A LaunchedTarget over three idle processes whose listeners are ``cluster``'s fakes."""
    target = LaunchedTarget(
        load_launcher("kafka"), home=home, scratch=tmp_path / "scratch", cluster_size=3
    )
    stack.callback(target.close)
    for node_id in (1, 2, 3):
        plain = stack.enter_context(cluster.plaintext(node_id))
        control = stack.enter_context(cluster.controller(node_id))
        node = Node(
            node_id,
            tmp_path / f"node-{node_id}",
            {"plaintext": plain.port, "sasl": 0, "controller": control.port},
        )
        node.start([sys.executable, "-c", "import time; time.sleep(120)"], {})
        target.nodes[node_id] = node
    return target


def test_move_leader_puts_the_replica_first_then_elects_it_through_the_active_controller(
    tmp_path: Path, kafka_home: Path
) -> None:
    cluster = FakeCluster()
    with ExitStack() as stack:
        target = fake_target(tmp_path, kafka_home, cluster, stack)
        target._paused.add(3)  # a frozen node is never asked (it could not answer)
        target.move_leader("t", 0, 3)
    assert (cluster.leader, cluster.epoch, cluster.replicas) == (3, 1, [3, 1, 2])
    asked = [(node, api) for node, api, _ in cluster.admin]
    # node 1 is not the controller (41): the same request goes to node 2; node 3 is paused
    assert asked == [
        (1, "ALTER_PARTITION_REASSIGNMENTS"),
        (2, "ALTER_PARTITION_REASSIGNMENTS"),
        (1, "ELECT_LEADERS"),
        (2, "ELECT_LEADERS"),
    ]
    reorder = cluster.admin[1][2]
    assert (reorder.topics[0].name, reorder.topics[0].partitions[0].replicas) == ("t", (3, 1, 2))
    elect = cluster.admin[3][2]
    assert elect.election_type == 0  # PREFERRED
    assert [(t.topic, t.partitions) for t in elect.topic_partitions] == [("t", (0,))]


def test_move_leader_refused_by_the_controller_is_a_control_error(
    tmp_path: Path, kafka_home: Path
) -> None:
    cluster = FakeCluster(reassign_error=INVALID_REPLICA_ASSIGNMENT)
    with ExitStack() as stack:
        target = fake_target(tmp_path, kafka_home, cluster, stack)
        with pytest.raises(ControlError, match="error 39"):
            target.move_leader("t", 0, 2)
    assert cluster.leader == 1
    assert [api for _, api, _ in cluster.admin].count("ELECT_LEADERS") == 0
