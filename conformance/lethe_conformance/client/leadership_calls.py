"""Operator requests that move a partition's leadership, as Kafka's admin client sends them.

Kafka has no request "make broker N the leader"; an operator gets there in two
steps, each an admin API that every broker forwards to the active controller:

* :func:`reorder_replicas`: AlterPartitionReassignments (45) to the partition's
  own replicas with the chosen one first. The set is unchanged, so nothing is
  copied: the controller only rewrites the order, making the chosen replica
  the *preferred* one;
* :func:`elect_preferred`: ElectLeaders (43) of type PREFERRED, which makes the
  preferred replica leader if it is alive and in the ISR (a new leader epoch).

Like :mod:`.calls`, each function returns the answer unjudged; the launched
target (:meth:`~lethe_conformance.targets.launched.LaunchedTarget.move_leader`)
reads the error codes and waits until Metadata shows the new leader.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignableTopic,
)
from lethe_formats.protocol.messages.elect_leaders import (
    PREFERRED,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ElectLeadersTopic,
)

from lethe_conformance.client.connection import KafkaConnection

__all__ = ["elect_preferred", "reorder_replicas"]

#: How long the controller may take (the request's TimeoutMs), in ms.
ADMIN_TIMEOUT_MS = 30_000


def reorder_replicas(
    conn: KafkaConnection, topic: str, partition: int, replicas: Sequence[int]
) -> AlterPartitionReassignmentsResponse:
    """AlterPartitionReassignments of one partition to ``replicas``, in that order."""
    request = AlterPartitionReassignmentsRequest(
        timeout_ms=ADMIN_TIMEOUT_MS,
        topics=(ReassignableTopic(topic, (ReassignablePartition(partition, tuple(replicas)),)),),
    )
    return conn.call(
        request, AlterPartitionReassignmentsResponse, timeout=ADMIN_TIMEOUT_MS / 1000 + 10
    )


def elect_preferred(conn: KafkaConnection, topic: str, partition: int) -> ElectLeadersResponse:
    """ElectLeaders PREFERRED of one partition."""
    request = ElectLeadersRequest(
        election_type=PREFERRED,
        topic_partitions=(ElectLeadersTopic(topic, (partition,)),),
        timeout_ms=ADMIN_TIMEOUT_MS,
    )
    return conn.call(request, ElectLeadersResponse, timeout=ADMIN_TIMEOUT_MS / 1000 + 10)
