"""What Metadata answers about an in-process cluster: its brokers and partition states.

Theory of operation
-------------------
A single broker answers Metadata about itself alone (leader = replicas = ISR
= this node, epoch 0). A member of an in-process cluster answers from the
shared controller, as a KRaft broker answers from its metadata image
(``KRaftMetadataCache.getTopicMetadata``):

* brokers: every live (registered, unfenced) broker with its advertised host
  and port, by node id;
* per partition: the leader (-1 with LEADER_NOT_AVAILABLE (5) when no live
  in-sync replica is left), its leader epoch, the assigned replicas, the ISR,
  and as offline replicas those on brokers that are not alive.

Both functions return None / the entry unchanged for a single broker, so the
Metadata handler calls them unconditionally. :func:`cluster_leader` is the same
view for FindCoordinator: a group's coordinator is the leader of its
``__consumer_offsets`` partition (Kafka's ``KafkaApis.getCoordinator``), not the
broker that was asked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.metadata import (
    MetadataResponseBroker,
    MetadataResponsePartition,
)

from lethe_reference.cluster.membership import member_of

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["cluster_brokers", "cluster_leader", "cluster_partition"]


def cluster_brokers(broker: Broker) -> tuple[MetadataResponseBroker, ...] | None:
    """Every live broker of the cluster, or None for a single broker."""
    member = member_of(broker)
    if member is None:
        return None
    entries = []
    for node in member.controller.node_ids:
        peer = member.peer(node)
        if peer is not None and member.controller.is_alive(node):
            entries.append(MetadataResponseBroker(node_id=node, host=peer.host, port=peer.port))
    return tuple(entries)


def cluster_leader(broker: Broker, topic: str, partition: int) -> tuple[int, str, int] | None:
    """``(node, host, port)`` of the partition's live leader, ``(-1, "", -1)`` when it has
    none, or None for a single broker (the caller answers with itself)."""
    member = member_of(broker)
    if member is None:
        return None
    state = member.state((topic, partition))
    if state is None:
        return None
    peer = member.peer(state.leader) if state.leader >= 0 else None
    if peer is None or not member.controller.is_alive(state.leader):
        return -1, "", -1
    return state.leader, peer.host, peer.port


def cluster_partition(
    broker: Broker, topic: str, entry: MetadataResponsePartition
) -> MetadataResponsePartition:
    """``entry`` with the controller's leader, epoch, replicas and ISR (cluster only)."""
    member = member_of(broker)
    state = None if member is None else member.state((topic, entry.partition_index))
    if member is None or state is None:
        return entry
    offline = tuple(n for n in state.replicas if not member.controller.is_alive(n))
    return replace(
        entry,
        error_code=ErrorCode.NONE if state.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
        leader_id=state.leader,
        leader_epoch=state.leader_epoch,
        replica_nodes=state.replicas,
        isr_nodes=state.isr,
        offline_replicas=offline,
    )
