"""Moving a partition's leadership on a cluster of real broker processes, as an operator would.

Theory of operation
-------------------
Kafka has no request "make broker N the leader". An operator gets there with
two admin APIs (:mod:`lethe_conformance.client.leadership_calls`):

1. AlterPartitionReassignments to the partition's own replicas with the chosen
   one first: nothing is copied, only the order changes, so the chosen replica
   becomes the *preferred* one;
2. ElectLeaders PREFERRED: the controller makes it leader if it is alive and
   in the ISR (Kafka 4.0: the leader epoch goes up by one; ELECTION_NOT_NEEDED
   when it already leads);
3. then every node that answers names the new leader in Metadata, so the next
   step meets a cluster that agrees.

Both requests go to the nodes' admin address (:meth:`ElectionNodes.admin_connection`:
a launched Kafka's KRaft ``controller`` listener, which an admin client may use
directly, KIP-919), trying each node that answers until the active controller
takes them (NOT_CONTROLLER from the others; retriable answers again after a
pause, within :data:`MOVE_TIMEOUT_S`). A paused node is never asked: it may be
the active controller, and a broker would forward to it and wait out its
``controller.socket.timeout.ms`` (30 s) before trying the one elected in its
place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsResponse,
)
from lethe_formats.protocol.messages.elect_leaders import ElectLeadersResponse

from lethe_conformance.client import calls, leadership_calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.client.errors import ClientError
from lethe_conformance.targets.base import ControlError

__all__ = ["MOVE_TIMEOUT_S", "ElectionNodes", "move_leader"]

#: How long an election may take (a KRaft controller failover included).
MOVE_TIMEOUT_S = 120.0
_POLL_S = 0.5
#: Answers to an admin request that mean "ask again": another node is the controller,
#: or the controller is not ready (a failover, the chosen replica not yet in sync).
_RETRY_ADMIN = frozenset(
    int(code)
    for code in (
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
    )
)


class ElectionNodes(Protocol):
    """What an election needs from a cluster of processes (the launched target)."""

    def answering(self) -> list[int]:
        """Ids of the nodes that run and are not paused."""
        ...

    def connect_to(self, node_id: int) -> KafkaConnection:
        """A client connection to node ``node_id``."""
        ...

    def admin_connection(self, node_id: int) -> KafkaConnection:
        """A connection to node ``node_id``'s address for admin requests."""
        ...


def move_leader(nodes: ElectionNodes, topic: str, partition: int, node_id: int) -> None:
    """Elect ``node_id`` leader of the partition (module docstring); ControlError when
    the controller refuses or it does not happen within :data:`MOVE_TIMEOUT_S`."""
    deadline = time.monotonic() + MOVE_TIMEOUT_S
    replicas = _replicas(nodes, topic, partition)
    order = [node_id, *(n for n in replicas if n != node_id)]
    _admin(
        nodes,
        deadline,
        f"AlterPartitionReassignments {topic}-{partition} to {order}",
        lambda conn: _reassignment_error(
            leadership_calls.reorder_replicas(conn, topic, partition, order)
        ),
    )
    _admin(
        nodes,
        deadline,
        f"ElectLeaders PREFERRED {topic}-{partition}",
        lambda conn: _election_error(leadership_calls.elect_preferred(conn, topic, partition)),
    )
    while any(_leader(nodes, topic, partition, n) != node_id for n in nodes.answering()):
        if time.monotonic() > deadline:
            raise ControlError(f"{topic}-{partition}: node {node_id} not leader in time")
        time.sleep(_POLL_S)


def _replicas(nodes: ElectionNodes, topic: str, partition: int) -> list[int]:
    for node_id in nodes.answering():
        with nodes.connect_to(node_id) as conn:
            for found in calls.metadata(conn, [topic]).topics:
                for p in found.partitions:
                    if found.name == topic and p.partition_index == partition:
                        return list(p.replica_nodes)
    raise ControlError(f"Metadata does not list {topic}-{partition}")


def _leader(nodes: ElectionNodes, topic: str, partition: int, node_id: int) -> int:
    """The partition's leader as node ``node_id`` sees it (-1 unknown)."""
    try:
        with nodes.connect_to(node_id) as conn:
            answer = calls.metadata(conn, [topic])
    except ClientError:
        return -1
    leaders = [
        p.leader_id
        for t in answer.topics
        if t.name == topic
        for p in t.partitions
        if p.partition_index == partition
    ]
    return leaders[0] if leaders else -1


def _admin(
    nodes: ElectionNodes, deadline: float, what: str, send: Callable[[KafkaConnection], int]
) -> None:
    """``send`` an admin request to each answering node until one takes it (error 0);
    retriable answers are tried again, any other is a ControlError."""
    last = "no node answered"
    while time.monotonic() < deadline:
        for node_id in nodes.answering():
            try:
                with nodes.admin_connection(node_id) as conn:
                    code = send(conn)
            except ClientError as error:
                last = f"node {node_id}: {error}"
                continue
            if code == 0:
                return
            last = f"node {node_id}: error {code}"
            if code not in _RETRY_ADMIN:
                raise ControlError(f"{what}: {last}")
        time.sleep(_POLL_S)
    raise ControlError(f"{what}: not done in {MOVE_TIMEOUT_S} s ({last})")


def _reassignment_error(answer: AlterPartitionReassignmentsResponse) -> int:
    """The request's error, else the first partition's."""
    if answer.error_code:
        return answer.error_code
    codes = [p.error_code for t in answer.responses for p in t.partitions]
    return next((c for c in codes if c), 0)


def _election_error(answer: ElectLeadersResponse) -> int:
    """As :func:`_reassignment_error`; ELECTION_NOT_NEEDED (it leads already) is success."""
    if answer.error_code:
        return answer.error_code
    codes = [p.error_code for t in answer.replica_election_results for p in t.partition_result]
    return next((c for c in codes if c not in (0, ErrorCode.ELECTION_NOT_NEEDED)), 0)
