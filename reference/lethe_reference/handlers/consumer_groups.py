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
group (GROUP_AUTHORIZATION_FAILED); ConsumerGroupDescribe needs DESCRIBE per
group, and ``authorized_operations`` are filled in only when asked.

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
from lethe_reference.handlers.authz import authorize, authorized_operations
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__: list[str] = []

Partitions = Mapping[str, frozenset[int]]


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
    return ConsumerGroupHeartbeatResponse(error_code=code, error_message=message)


@handles(ApiKey.CONSUMER_GROUP_HEARTBEAT, error_response=_heartbeat_error)
def handle_consumer_group_heartbeat(
    broker: Broker, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
) -> ConsumerGroupHeartbeatResponse:
    if not access.may_read_group(broker, ctx, request.group_id):
        return _heartbeat_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
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


def _described(broker: Broker, found: DescribedConsumerGroup) -> cgd.DescribedConsumerGroup:
    if found.error_code:
        return cgd.DescribedConsumerGroup(
            error_code=found.error_code,
            error_message=found.error_message,
            group_id=found.group_id,
            group_state="",
            group_epoch=0,
            assignment_epoch=0,
            assignor_name="",
        )
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
        groups=tuple(
            cgd.DescribedConsumerGroup(
                error_code=code,
                error_message=message,
                group_id=group_id,
                group_state="",
                group_epoch=0,
                assignment_epoch=0,
                assignor_name="",
            )
            for group_id in request.group_ids
        )
    )


@handles(ApiKey.CONSUMER_GROUP_DESCRIBE, error_response=_describe_error)
def handle_consumer_group_describe(
    broker: Broker, ctx: RequestContext, request: cgd.ConsumerGroupDescribeRequest
) -> cgd.ConsumerGroupDescribeResponse:
    coordinator = runtime_of(broker).coordinator
    groups = []
    for group_id in request.group_ids:
        if not authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            groups.append(_describe_error(request, code, code.message).groups[0])
            continue
        entry = _described(broker, coordinator.describe_consumer_group(group_id))
        if request.include_authorized_operations and not entry.error_code:
            ops = authorized_operations(broker, ctx, ResourceType.GROUP, group_id)
            entry = replace(entry, authorized_operations=ops)
        groups.append(entry)
    return cgd.ConsumerGroupDescribeResponse(groups=tuple(groups))
