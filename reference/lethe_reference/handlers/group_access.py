"""Consumer-group authorization, as KafkaApis checks it before the group coordinator.

FindCoordinator needs DESCRIBE on the resource its key names: a GROUP (else
GROUP_AUTHORIZATION_FAILED, 30) or a TRANSACTIONAL_ID (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 53); the membership requests (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup) need READ on the GROUP. Without an authorizer
every check passes (:mod:`.authz`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.find_coordinator import KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize
from lethe_reference.handlers.context import RequestContext

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["find_refusal", "may_read_group"]


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
