"""KIP-848 consumer groups: ConsumerGroupHeartbeat and ConsumerGroupDescribe (keys 68, 69).

Theory of operation
-------------------
``KafkaApis`` + ``GroupCoordinatorService`` of Kafka 4.0 over the sans-IO
:class:`~lethe_reference.cluster.group.consumer.ConsumerGroupLogic`, which works
with topic names: this module turns the topic ids of the wire into names and
back with the broker's topic registry. An owned partition of a topic id the
broker does not know is kept under a name no topic can have, so it still
counts as "owned" (and keeps a rejoin with stale partitions invalid) without
matching anything.

Authorization first, as ``KafkaApis``: ConsumerGroupHeartbeat needs READ on the
group (GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed topic name
(TOPIC_AUTHORIZATION_FAILED), both answered with the code alone;
ConsumerGroupDescribe needs DESCRIBE per group (refused groups first, without a
message), ``authorized_operations`` only when asked, and with an authorizer a
group whose assignments name a topic the client may not describe is answered
TOPIC_AUTHORIZATION_FAILED without members.

Responses: partitions ascending, topics by name, members in join order (Kafka
iterates hash maps there). The heartbeat interval comes from
``group.consumer.heartbeat.interval.ms``; an answer with an error carries
member epoch 0 and interval 0 as Kafka's error response does.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages import consumer_group_describe as cgd
from lethe_formats.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.group.consumer import (
    ConsumerHeartbeat,
    ConsumerHeartbeatResult,
    DescribedConsumerGroup,
)
from lethe_reference.cluster.group_runtime import client_host, runtime_of
from lethe_reference.handlers import group_access as access
from lethe_reference.handlers.authz import authorize, authorized_operations, authorizer_of
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__: list[str] = []

Partitions = Mapping[str, frozenset[int]]
_HIDDEN = "The group has described topic(s) that the client is not authorized to describe."


def _unknown_topic(topic_id: uuid.UUID) -> str:
    return f"\x00unknown topic id {topic_id}"


def _owned(
    broker: Broker, listed: tuple[HeartbeatTopicPartitions, ...] | None
) -> Partitions | None:
    if listed is None:
        return None
    owned: dict[str, frozenset[int]] = {}
    for entry in listed:
        info = broker.metadata.by_id(KafkaUuid(entry.topic_id.bytes))
        name = info.name if info is not None else _unknown_topic(entry.topic_id)
        owned[name] = owned.get(name, frozenset()) | frozenset(entry.partitions)
    return owned


def _topic_id(broker: Broker, name: str) -> uuid.UUID:
    info = broker.metadata.get(name)
    return uuid.UUID(int=0) if info is None else uuid.UUID(bytes=info.topic_id.raw)


def _heartbeat_response(
    broker: Broker, result: ConsumerHeartbeatResult
) -> ConsumerGroupHeartbeatResponse:
    assignment = None
    if result.assignment is not None:
        assignment = ConsumerGroupHeartbeatAssignment(
            tuple(
                HeartbeatTopicPartitions(_topic_id(broker, t), tuple(sorted(p)))
                for t, p in sorted(result.assignment.items())
                if p
            )
        )
    return ConsumerGroupHeartbeatResponse(
        error_code=result.error_code,
        error_message=result.error_message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=assignment,
    )


def _heartbeat_error(
    request: ConsumerGroupHeartbeatRequest, code: ErrorCode, message: str | None
) -> ConsumerGroupHeartbeatResponse:
    """``ConsumerGroupHeartbeatRequest.getErrorResponse``: the code alone."""
    return ConsumerGroupHeartbeatResponse(error_code=code)


@handles(ApiKey.CONSUMER_GROUP_HEARTBEAT, error_response=_heartbeat_error)
def handle_consumer_group_heartbeat(
    broker: Broker, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
) -> ConsumerGroupHeartbeatResponse:
    if not access.may_read_group(broker, ctx, request.group_id):
        return _heartbeat_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    names = request.subscribed_topic_names or ()
    if not all(_describable(broker, ctx, name) for name in names):
        return _heartbeat_error(request, ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
    runtime = runtime_of(broker)
    result = runtime.coordinator.consumer_heartbeat(
        ConsumerHeartbeat(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            client_id=ctx.client_id or "",
            client_host=client_host(ctx),
            instance_id=request.instance_id,
            rack_id=request.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            subscribed_topic_names=request.subscribed_topic_names,
            subscribed_topic_regex=request.subscribed_topic_regex,
            server_assignor=request.server_assignor,
            owned=_owned(broker, request.topic_partitions),
            api_version=ctx.api_version,
        )
    )
    runtime.rearm()
    return _heartbeat_response(broker, result)


# -- ConsumerGroupDescribe ------------------------------------------------------------------


def _assignment(broker: Broker, parts: Partitions) -> cgd.MemberAssignment:
    return cgd.MemberAssignment(
        tuple(
            cgd.DescribedTopicPartitions(_topic_id(broker, t), t, tuple(sorted(p)))
            for t, p in sorted(parts.items())
            if p and broker.metadata.get(t) is not None
        )
    )


def _failed(group_id: str, code: int, message: str | None) -> cgd.DescribedConsumerGroup:
    return cgd.DescribedConsumerGroup(
        error_code=code,
        error_message=message,
        group_id=group_id,
        group_state="",
        group_epoch=0,
        assignment_epoch=0,
        assignor_name="",
    )


def _described(broker: Broker, found: DescribedConsumerGroup) -> cgd.DescribedConsumerGroup:
    if found.error_code:
        return _failed(found.group_id, found.error_code, found.error_message)
    members = tuple(
        cgd.DescribedConsumerGroupMember(
            member_id=m.member_id,
            instance_id=m.instance_id,
            rack_id=m.rack_id,
            member_epoch=m.member_epoch,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=m.subscribed_topic_names,
            subscribed_topic_regex=m.subscribed_topic_regex,
            assignment=_assignment(broker, m.assignment),
            target_assignment=_assignment(broker, m.target_assignment),
            member_type=cgd.MEMBER_TYPE_CONSUMER,
        )
        for m in found.members
    )
    return cgd.DescribedConsumerGroup(
        error_code=ErrorCode.NONE,
        group_id=found.group_id,
        group_state=found.state,
        group_epoch=found.group_epoch,
        assignment_epoch=found.assignment_epoch,
        assignor_name=found.assignor_name,
        members=members,
    )


def _describe_error(
    request: cgd.ConsumerGroupDescribeRequest, code: ErrorCode, message: str | None
) -> cgd.ConsumerGroupDescribeResponse:
    return cgd.ConsumerGroupDescribeResponse(
        groups=tuple(_failed(group_id, code, message) for group_id in request.group_ids)
    )


@handles(ApiKey.CONSUMER_GROUP_DESCRIBE, error_response=_describe_error)
def handle_consumer_group_describe(
    broker: Broker, ctx: RequestContext, request: cgd.ConsumerGroupDescribeRequest
) -> cgd.ConsumerGroupDescribeResponse:
    coordinator = runtime_of(broker).coordinator
    refused, groups = [], []
    for group_id in request.group_ids:
        if not authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            refused.append(_failed(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED, None))
            continue
        entry = _described(broker, coordinator.describe_consumer_group(group_id))
        if request.include_authorized_operations and not entry.error_code:
            ops = authorized_operations(broker, ctx, ResourceType.GROUP, group_id)
            entry = replace(entry, authorized_operations=ops)
        groups.append(_hide_topics(broker, ctx, entry))
    return cgd.ConsumerGroupDescribeResponse(groups=tuple(refused + groups))


def _describable(broker: Broker, ctx: RequestContext, topic: str) -> bool:
    return authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic)


def _hide_topics(
    broker: Broker, ctx: RequestContext, entry: cgd.DescribedConsumerGroup
) -> cgd.DescribedConsumerGroup:
    """A group whose assignments name a topic the client may not describe is answered
    TOPIC_AUTHORIZATION_FAILED without members (only when an authorizer is set)."""
    if authorizer_of(broker) is None:
        return entry
    topics = {
        tp.topic_name
        for member in entry.members
        for assignment in (member.assignment, member.target_assignment)
        for tp in assignment.topic_partitions
    }
    if all(_describable(broker, ctx, topic) for topic in topics):
        return entry
    return _failed(entry.group_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, _HIDDEN)
