"""Consumer-group authorization, as KafkaApis checks it before the group coordinator.

FindCoordinator needs DESCRIBE on the resource its key names: a GROUP (else
GROUP_AUTHORIZATION_FAILED, 30) or a TRANSACTIONAL_ID (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 53); the membership requests (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup) need READ on the GROUP. Without an authorizer
every check passes (:mod:`.authz`). DescribeGroups needs DESCRIBE on each
group (else that group alone is 30, listed before the described ones, as
``KafkaApis.handleDescribeGroupsRequest`` builds it) and reports the principal's
operations on it (:func:`~.authz.authorized_operations`); ListGroups lists
every group with DESCRIBE on the CLUSTER, else only the groups the principal
may DESCRIBE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages import describe_groups as dg
from lethe_formats.protocol.messages.find_coordinator import KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorize_cluster
from lethe_reference.handlers.context import RequestContext

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "describe_refusal",
    "find_refusal",
    "may_list_group",
    "may_read_group",
]


def may_read_group(broker: Broker, ctx: RequestContext, group_id: str) -> bool:
    """READ on the GROUP (the membership requests)."""
    return authorize(broker, ctx, AclOperation.READ, ResourceType.GROUP, group_id)


def find_refusal(broker: Broker, ctx: RequestContext, key_type: int, key: str) -> ErrorCode | None:
    """DESCRIBE on the GROUP / TRANSACTIONAL_ID the key names, else its authorization error."""
    if key_type == KEY_TYPE_GROUP:
        if authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, key):
            return None
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    if key_type == KEY_TYPE_TRANSACTION:
        if authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
            return None
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    return None


def describe_refusal(
    broker: Broker, ctx: RequestContext, group_id: str
) -> dg.DescribedGroup | None:
    """The DescribeGroups entry of a group the principal may not DESCRIBE, else None."""
    if authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return None
    return dg.DescribedGroup(
        error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
        group_id=group_id,
        group_state="",
        protocol_type="",
        protocol_data="",
    )


def may_list_group(broker: Broker, ctx: RequestContext, group_id: str) -> bool:
    """ListGroups: DESCRIBE on the cluster, or on the group."""
    return authorize_cluster(broker, ctx, AclOperation.DESCRIBE) or authorize(
        broker, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id
    )
