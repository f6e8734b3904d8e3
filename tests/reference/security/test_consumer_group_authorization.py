"""ConsumerGroupHeartbeat and ConsumerGroupDescribe under Kafka's StandardAuthorizer.

As ``KafkaApis.handleConsumerGroupHeartbeat`` / ``handleConsumerGroupDescribe`` of
Kafka 4.0: READ on the group, then DESCRIBE on every subscribed topic name, each
refused with the code alone (``getErrorResponse``); DESCRIBE per described group,
refused groups first and without a message; a described group whose assignments
name a topic the client may not describe is TOPIC_AUTHORIZATION_FAILED with
Kafka's message and no member.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode as E
from lethe_formats.protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from lethe_formats.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.cluster.acl import (
    AclBinding,
    AclOperation,
    AclPermission,
    PatternType,
    ResourceType,
)
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.handlers.authz import authorizer_of
from lethe_reference.handlers.dispatch import dispatch
from security_support import ADMIN, ALICE, ctx, secured_broker

HIDDEN = "The group has described topic(s) that the client is not authorized to describe."


def allow(broker: Broker, kind: ResourceType, name: str, operation: AclOperation) -> None:
    authorizer = authorizer_of(broker)
    assert authorizer is not None
    binding = AclBinding(
        kind, name, PatternType.LITERAL, ALICE, "*", operation, AclPermission.ALLOW
    )
    authorizer.add([binding])


def setup(tmp_path: Path) -> Broker:
    broker = secured_broker(tmp_path)
    broker.create_topic("t", 2)
    runtime_of(broker).find_coordinator(0, "g")  # __consumer_offsets
    return broker


def join(broker: Broker, group: str, principal: str) -> Any:
    request = ConsumerGroupHeartbeatRequest(
        group_id=group,
        member_id=f"{principal}-member",
        member_epoch=0,
        rebalance_timeout_ms=30000,
        subscribed_topic_names=("t",),
        topic_partitions=(),
    )
    return dispatch(broker, ctx(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, principal), request)


def test_heartbeat_needs_group_read_then_topic_describe(tmp_path: Path) -> None:
    broker = setup(tmp_path)
    assert join(broker, "g", ALICE) == ConsumerGroupHeartbeatResponse(
        error_code=E.GROUP_AUTHORIZATION_FAILED
    )
    allow(broker, ResourceType.GROUP, "g", AclOperation.READ)
    assert join(broker, "g", ALICE) == ConsumerGroupHeartbeatResponse(
        error_code=E.TOPIC_AUTHORIZATION_FAILED
    )
    allow(broker, ResourceType.TOPIC, "t", AclOperation.DESCRIBE)
    answer = join(broker, "g", ALICE)
    assert (answer.error_code, answer.member_epoch) == (E.NONE, 1)
    broker.shutdown()


def test_describe_refuses_groups_first_and_hides_unauthorized_topics(tmp_path: Path) -> None:
    broker = setup(tmp_path)
    assert join(broker, "g2", ADMIN).error_code == E.NONE
    allow(broker, ResourceType.GROUP, "g2", AclOperation.DESCRIBE)
    request = ConsumerGroupDescribeRequest(
        group_ids=("g2", "g1"), include_authorized_operations=False
    )
    described = dispatch(broker, ctx(ApiKey.CONSUMER_GROUP_DESCRIBE, 1), request).groups
    assert [(g.group_id, g.error_code, g.error_message, g.members) for g in described] == [
        ("g1", E.GROUP_AUTHORIZATION_FAILED, None, ()),
        ("g2", E.TOPIC_AUTHORIZATION_FAILED, HIDDEN, ()),
    ]
    allow(broker, ResourceType.TOPIC, "t", AclOperation.DESCRIBE)
    again = dispatch(broker, ctx(ApiKey.CONSUMER_GROUP_DESCRIBE, 1), request).groups
    assert (again[1].error_code, again[1].group_state, len(again[1].members)) == (0, "Stable", 1)
    broker.shutdown()
