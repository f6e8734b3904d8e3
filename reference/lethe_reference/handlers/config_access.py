"""DescribeConfigs / AlterConfigs / IncrementalAlterConfigs under an authorizer.

Kafka authorizes each config resource on its own (``ConfigHelper`` and
``KafkaApis.authorizeAlterConfigs``): a TOPIC resource needs
DESCRIBE_CONFIGS (to describe) or ALTER_CONFIGS (to change) on the topic,
else TOPIC_AUTHORIZATION_FAILED (29); a BROKER or BROKER_LOGGER resource
needs the same operation on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED
(31). The refusal carries the error's default message, comes before the
resource is looked up (an unknown topic is 29 too), and the other resources
of the request are answered as usual. ALTER_CONFIGS implies
DESCRIBE_CONFIGS (:mod:`lethe_reference.cluster.authorizer`). Without an
authorizer nothing is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorize_cluster
from lethe_reference.handlers.context import RequestContext

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["config_refusal"]

_TOPIC = 2


def config_refusal(
    broker: Broker, ctx: RequestContext, resource_type: int, name: str, *, alter: bool
) -> tuple[ErrorCode, str] | None:
    """(code, message) when the principal may not describe / alter the resource, else None."""
    op = AclOperation.ALTER_CONFIGS if alter else AclOperation.DESCRIBE_CONFIGS
    if resource_type == _TOPIC:
        if authorize(broker, ctx, op, ResourceType.TOPIC, name):
            return None
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    else:
        if authorize_cluster(broker, ctx, op):
            return None
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return code, code.message
