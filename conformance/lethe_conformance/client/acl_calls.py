"""ACL requests: CreateAcls (30) and DeleteAcls (31), as an admin client sends them.

Like :mod:`.calls`, each function builds the request from lethe_formats'
message classes, sends it at the negotiated version unless ``version`` is
given, and returns the answer unjudged. An :class:`Acl` is one binding with
Kafka's codes already resolved (the scenario op resolves names and roles)::

    Acl(resource_type=2 TOPIC, resource_name="lethe-...", pattern_type=3 LITERAL,
        principal="User:alice", host="*", operation=8 DESCRIBE, permission=3 ALLOW)

:func:`delete_acls` removes exactly the given bindings (one filter per
binding, every field concrete), which is how the runner cleans up what a
scenario granted on a shared broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass

from lethe_formats.protocol.messages.create_acls import (
    AclCreation,
    CreateAclsRequest,
    CreateAclsResponse,
)
from lethe_formats.protocol.messages.delete_acls import (
    DeleteAclsFilter,
    DeleteAclsRequest,
    DeleteAclsResponse,
)

from lethe_conformance.client.connection import KafkaConnection

__all__ = [
    "OPERATIONS",
    "PATTERN_TYPES",
    "PERMISSIONS",
    "RESOURCE_TYPES",
    "Acl",
    "create_acls",
    "delete_acls",
]

#: Kafka's codes by the lower-case names scenarios use.
RESOURCE_TYPES = {"topic": 2, "group": 3, "cluster": 4, "transactional_id": 5}
PATTERN_TYPES = {"literal": 3, "prefixed": 4}
OPERATIONS = {
    "all": 2,
    "read": 3,
    "write": 4,
    "create": 5,
    "delete": 6,
    "alter": 7,
    "describe": 8,
    "cluster_action": 9,
    "describe_configs": 10,
    "alter_configs": 11,
    "idempotent_write": 12,
}
PERMISSIONS = {"deny": 2, "allow": 3}


@dataclass(frozen=True, slots=True)
class Acl:
    """One ACL binding with Kafka's numeric codes."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int


def create_acls(
    conn: KafkaConnection, acls: Sequence[Acl], *, version: int | None = None
) -> CreateAclsResponse:
    # Acl's fields are in the order both AclCreation and DeleteAclsFilter take them.
    creations = tuple(AclCreation(*astuple(a)) for a in acls)
    return conn.call(CreateAclsRequest(creations), CreateAclsResponse, version=version)


def delete_acls(
    conn: KafkaConnection, acls: Sequence[Acl], *, version: int | None = None
) -> DeleteAclsResponse:
    filters = tuple(DeleteAclsFilter(*astuple(a)) for a in acls)
    return conn.call(DeleteAclsRequest(filters), DeleteAclsResponse, version=version)
