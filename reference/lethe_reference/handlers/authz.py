"""Authorization as handlers ask for it: the broker's authorizer, or none (allow all).

Theory of operation
-------------------
A handler asks :func:`authorize` (one resource) or :func:`authorized_names`
(many) with the request's :class:`~.context.RequestContext` (principal and
client host). The broker's authorizer (:func:`authorizer_of`) is the
:class:`~lethe_reference.cluster.authorizer.Authorizer` built from its config
when ``authorizer.class.name`` names Kafka's ``StandardAuthorizer``, with ACLs
read from the log dir; it is cached on the broker and rebuilt when the config
object changes (a dynamic config change).

Without an authorizer everything is allowed, as on a Kafka broker with no
``authorizer.class.name``. When a client asks for authorized operations
(Metadata ``include_topic_authorized_operations``, DescribeCluster
``include_cluster_authorized_operations``) it gets a bit field with bit
``AclOperation.code`` set (``Utils.to32BitField``) for every supported
operation the principal may do (``AuthHelper.authorizedOperations``); with no
authorizer (or for a super user), every supported operation
(``AclEntry.supportedOperations``, :data:`~lethe_reference.cluster.acl.SUPPORTED_OPERATIONS`)::

    TOPIC    READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
             DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11                      -> 3576
    CLUSTER  CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
             ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12                       -> 8096
    GROUP    READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10,
             ALTER_CONFIGS 11                                            -> 3400

A field the client did not ask for is ``-2147483648`` (INT32_MIN), the
schema default. The cluster's field (Metadata v8-10, DescribeCluster) is 0
when the principal may not DESCRIBE the cluster, whatever else it may do
there (:func:`cluster_operations`, ``KafkaApis.handleTopicMetadataRequest`` and
``AuthHelper.computeDescribeClusterResponse``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lethe_reference.cluster.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AclOperation,
    ResourceType,
)
from lethe_reference.cluster.authorizer import ACL_FILE, Authorizer, authorizer_settings
from lethe_reference.handlers.context import RequestContext

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "CLUSTER_OPERATIONS",
    "GROUP_OPERATIONS",
    "OMITTED",
    "TOPIC_OPERATIONS",
    "authorize",
    "authorize_any",
    "authorize_cluster",
    "authorized_names",
    "authorized_operations",
    "authorizer_of",
    "bit_field",
    "cluster_operations",
]

OMITTED = -(1 << 31)
_KEY = "authorizer"


def bit_field(codes: Iterable[int]) -> int:
    """``Utils.to32BitField``: bit ``code`` set for every code."""
    field = 0
    for code in codes:
        field |= 1 << code
    return field


def _all_operations(resource_type: ResourceType) -> int:
    return bit_field(int(op) for op in SUPPORTED_OPERATIONS[resource_type])


TOPIC_OPERATIONS = _all_operations(ResourceType.TOPIC)
CLUSTER_OPERATIONS = _all_operations(ResourceType.CLUSTER)
GROUP_OPERATIONS = _all_operations(ResourceType.GROUP)


def authorizer_of(broker: Broker) -> Authorizer | None:
    """The broker's authorizer, or None when ``authorizer.class.name`` does not enable one."""
    cached = broker.extensions.get(_KEY)
    if cached is not None and cached[0] is broker.config:
        authorizer: Authorizer | None = cached[1]
        return authorizer
    config = broker.config
    enabled, supers, allow = authorizer_settings(
        (config.dynamic_broker, config.dynamic_default, config.static)
    )
    authorizer = (
        Authorizer(broker.log_dir / ACL_FILE, super_users=supers, allow_if_no_acl=allow)
        if enabled
        else None
    )
    broker.extensions[_KEY] = (config, authorizer)
    return authorizer


def authorize(
    broker: Broker,
    ctx: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
) -> bool:
    """Whether the request's principal may do ``operation`` on the resource."""
    authorizer = authorizer_of(broker)
    if authorizer is None:
        return True
    return authorizer.authorize(ctx.principal, ctx.client_host, operation, resource_type, name)


def authorize_any(
    broker: Broker, ctx: RequestContext, operation: AclOperation, resource_type: ResourceType
) -> bool:
    """Kafka's ``authorizeByResourceType``: the operation on some resource of the type."""
    authorizer = authorizer_of(broker)
    if authorizer is None:
        return True
    return authorizer.authorize_any(ctx.principal, ctx.client_host, operation, resource_type)


def authorize_cluster(broker: Broker, ctx: RequestContext, operation: AclOperation) -> bool:
    return authorize(broker, ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME)


def authorized_names(
    broker: Broker,
    ctx: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    names: Iterable[str],
) -> set[str]:
    """The names among ``names`` the principal may do ``operation`` on."""
    return {n for n in names if authorize(broker, ctx, operation, resource_type, n)}


def authorized_operations(
    broker: Broker, ctx: RequestContext, resource_type: ResourceType, name: str
) -> int:
    """The authorized-operations bit field of one resource (module docstring)."""
    authorizer = authorizer_of(broker)
    if authorizer is None:
        return _all_operations(resource_type)
    ops = authorizer.authorized_operations(ctx.principal, ctx.client_host, resource_type, name)
    return bit_field(int(op) for op in ops)


def cluster_operations(broker: Broker, ctx: RequestContext) -> int:
    """The cluster's authorized-operations field: 0 without DESCRIBE on it."""
    if not authorize_cluster(broker, ctx, AclOperation.DESCRIBE):
        return 0
    return authorized_operations(broker, ctx, ResourceType.CLUSTER, CLUSTER_NAME)
