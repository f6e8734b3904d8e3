"""OffsetForLeaderEpoch (key 23, v2-4): ``KafkaApis.handleOffsetForLeaderEpochRequest``.

Theory of operation
-------------------
Authorization: CLUSTER_ACTION on the cluster (a broker) allows every topic;
otherwise DESCRIBE on each topic (KIP-320's consumers), and a topic without
it gets TOPIC_AUTHORIZATION_FAILED (29) on each of its partitions, listed
after the others. Kafka 4.0 ignores ``replica_id``: the answer always comes
from the leader (``fetchOnlyFromLeader = true``).

Per partition (``ReplicaManager.lastOffsetForLeaderEpoch`` then
``Partition.lastOffsetForLeaderEpoch``):

1. unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION (3); an offline
   log dir: KAFKA_STORAGE_ERROR (56);
2. ``current_leader_epoch`` (unless -1) older than the partition's:
   FENCED_LEADER_EPOCH (74), newer: UNKNOWN_LEADER_EPOCH (75), checked before
   leadership;
3. a cluster member that does not lead it: NOT_LEADER_OR_FOLLOWER (6);
4. otherwise error 0 and ``LeaderEpochCache.end_offset_for``: the latest epoch
   ends at the log end offset, an older one where the next higher epoch starts
   (with the closest epoch at or below it), an epoch below every entry at the
   first entry's start; -1 / -1 when the cache cannot tell (epoch -1, empty cache).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopicResult,
)

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.membership import leader_epoch, leader_error
from lethe_reference.handlers.authz import authorize_cluster, authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.common import check_leader_epoch, lookup

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["end_offset_for_epoch", "error_response", "handle"]


def error_response(
    request: OffsetForLeaderEpochRequest, code: ErrorCode, _message: str | None
) -> OffsetForLeaderEpochResponse:
    """``OffsetsForLeaderEpochRequest.getErrorResponse``: ``code`` on every partition."""
    return OffsetForLeaderEpochResponse(
        topics=tuple(
            OffsetForLeaderTopicResult(
                t.topic, tuple(EpochEndOffset(code, p.partition) for p in t.partitions)
            )
            for t in request.topics
        )
    )


def end_offset_for_epoch(
    broker: Broker, topic: str, requested: OffsetForLeaderPartition
) -> EpochEndOffset:
    """Steps 1-4 of the module docstring for one partition."""
    index = requested.partition
    found = lookup(broker, topic, index, leader_only=False)
    if isinstance(found, ErrorCode):
        return EpochEndOffset(found, index)
    epoch_error = check_leader_epoch(
        requested.current_leader_epoch, leader_epoch(broker, topic, index)
    )
    if epoch_error is not ErrorCode.NONE:
        return EpochEndOffset(epoch_error, index)
    not_leader = leader_error(broker, topic, index)
    if not_leader is not None:
        return EpochEndOffset(not_leader, index)
    epoch, end = found.epoch_cache.end_offset_for(requested.leader_epoch, found.log_end_offset)
    return EpochEndOffset(ErrorCode.NONE, index, epoch, end)


@handles(ApiKey.OFFSET_FOR_LEADER_EPOCH, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: OffsetForLeaderEpochRequest
) -> OffsetForLeaderEpochResponse:
    """The end offset of each requested partition's epoch."""
    names = {t.topic for t in request.topics}
    if authorize_cluster(broker, ctx, AclOperation.CLUSTER_ACTION):
        allowed = names
    else:
        allowed = authorized_names(broker, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    answered = [
        OffsetForLeaderTopicResult(
            t.topic, tuple(end_offset_for_epoch(broker, t.topic, p) for p in t.partitions)
        )
        for t in request.topics
        if t.topic in allowed
    ]
    refused = [
        OffsetForLeaderTopicResult(
            t.topic,
            tuple(
                EpochEndOffset(ErrorCode.TOPIC_AUTHORIZATION_FAILED, p.partition)
                for p in t.partitions
            ),
        )
        for t in request.topics
        if t.topic not in allowed
    ]
    return OffsetForLeaderEpochResponse(topics=tuple(answered + refused))
