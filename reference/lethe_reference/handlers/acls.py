"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31): ``AclApis`` of a Kafka broker.

Theory of operation
-------------------
Each request is first authorized on the CLUSTER resource (Kafka's
``authorizeClusterOperation``): DescribeAcls needs DESCRIBE, CreateAcls and
DeleteAcls need ALTER; a principal without it gets CLUSTER_AUTHORIZATION_FAILED
(31) for the whole request (every creation / every filter). Then, with no
authorizer configured, the answer is SECURITY_DISABLED (54) ``No Authorizer is
configured.``, as Kafka answers. Otherwise:

* CreateAcls: each creation is validated (:func:`~lethe_reference.cluster.acl.validation_problem`,
  INVALID_REQUEST 42 with the reason) and the valid ones are added at once;
  one result per creation, in request order;
* DescribeAcls: one filter; a filter with an UNKNOWN element is INVALID_REQUEST;
  the matching bindings grouped by resource pattern (in the order of the first
  binding of each resource);
* DeleteAcls: one result per filter, listing every binding it removed (a
  binding removed by an earlier filter of the same request is not listed again).

The authorizer persists every change before the response is built (see
:mod:`lethe_reference.cluster.authorizer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_acls import (
    AclCreation,
    AclCreationResult,
    CreateAclsRequest,
    CreateAclsResponse,
)
from lethe_formats.protocol.messages.delete_acls import (
    DeleteAclsFilter,
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)
from lethe_formats.protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)

from lethe_reference.cluster.acl import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermission,
    PatternType,
    ResourceType,
    validation_problem,
)
from lethe_reference.handlers.authz import authorize_cluster, authorizer_of
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.cluster.authorizer import Authorizer

__all__ = ["NO_AUTHORIZER", "create_acls", "delete_acls", "describe_acls"]

E = TypeVar("E", ResourceType, PatternType, AclOperation, AclPermission)
NO_AUTHORIZER = "No Authorizer is configured."
_CLUSTER_DENIED = "Cluster authorization failed."


def _enum(kind: type[E], code: int) -> E:
    """The enum member of ``code``, UNKNOWN for a code Kafka does not define."""
    try:
        return kind(code)
    except ValueError:
        return kind(0)


def _binding(c: AclCreation) -> AclBinding:
    return AclBinding(
        _enum(ResourceType, c.resource_type),
        c.resource_name,
        _enum(PatternType, c.resource_pattern_type),
        c.principal,
        c.host,
        _enum(AclOperation, c.operation),
        _enum(AclPermission, c.permission_type),
    )


def _filter(f: DescribeAclsRequest | DeleteAclsFilter) -> AclFilter:
    return AclFilter(
        _enum(ResourceType, f.resource_type_filter),
        f.resource_name_filter,
        _enum(PatternType, f.pattern_type_filter),
        f.principal_filter,
        f.host_filter,
        _enum(AclOperation, f.operation),
        _enum(AclPermission, f.permission_type),
    )


def _open_authorizer(
    broker: Broker, ctx: RequestContext, operation: AclOperation
) -> Authorizer | tuple[ErrorCode, str]:
    """The authorizer an ACL request works on, or why the whole request is refused.

    Kafka checks the principal's right on the CLUSTER first (ALTER to change ACLs,
    DESCRIBE to list them), then answers SECURITY_DISABLED when no authorizer is
    configured; both refusals apply to every entry of the request alike.
    """
    if not authorize_cluster(broker, ctx, operation):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, _CLUSTER_DENIED
    authorizer = authorizer_of(broker)
    if authorizer is None:
        return ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER
    return authorizer


# --- CreateAcls ---------------------------------------------------------------------------


def _create_error(
    request: CreateAclsRequest, code: ErrorCode, message: str | None
) -> CreateAclsResponse:
    return CreateAclsResponse(
        results=tuple(AclCreationResult(code, message) for _ in request.creations)
    )


@handles(ApiKey.CREATE_ACLS, error_response=_create_error)
def create_acls(
    broker: Broker, ctx: RequestContext, request: CreateAclsRequest
) -> CreateAclsResponse:
    authorizer = _open_authorizer(broker, ctx, AclOperation.ALTER)
    if isinstance(authorizer, tuple):
        return _create_error(request, *authorizer)
    bindings = [_binding(c) for c in request.creations]
    problems = [validation_problem(b) for b in bindings]
    authorizer.add(b for b, problem in zip(bindings, problems, strict=True) if problem is None)
    return CreateAclsResponse(
        results=tuple(
            AclCreationResult(ErrorCode.NONE, None)
            if problem is None
            else AclCreationResult(ErrorCode.INVALID_REQUEST, problem)
            for problem in problems
        )
    )


# --- DescribeAcls -------------------------------------------------------------------------


def _describe_error(
    request: DescribeAclsRequest, code: ErrorCode, message: str | None
) -> DescribeAclsResponse:
    return DescribeAclsResponse(error_code=code, error_message=message)


def _grouped(bindings: list[AclBinding]) -> tuple[DescribeAclsResource, ...]:
    groups: dict[tuple[ResourceType, str, PatternType], list[AclDescription]] = {}
    for b in bindings:
        groups.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            AclDescription(b.principal, b.host, int(b.operation), int(b.permission))
        )
    return tuple(
        DescribeAclsResource(int(kind), name, int(pattern), tuple(acls))
        for (kind, name, pattern), acls in groups.items()
    )


@handles(ApiKey.DESCRIBE_ACLS, error_response=_describe_error)
def describe_acls(
    broker: Broker, ctx: RequestContext, request: DescribeAclsRequest
) -> DescribeAclsResponse:
    authorizer = _open_authorizer(broker, ctx, AclOperation.DESCRIBE)
    if isinstance(authorizer, tuple):
        return _describe_error(request, *authorizer)
    acl_filter = _filter(request)
    problem = acl_filter.problem()
    if problem is not None:
        return _describe_error(request, ErrorCode.INVALID_REQUEST, problem)
    return DescribeAclsResponse(
        error_code=ErrorCode.NONE, resources=_grouped(authorizer.matching(acl_filter))
    )


# --- DeleteAcls ---------------------------------------------------------------------------


def _delete_error(
    request: DeleteAclsRequest, code: ErrorCode, message: str | None
) -> DeleteAclsResponse:
    return DeleteAclsResponse(
        filter_results=tuple(DeleteAclsFilterResult(code, message) for _ in request.filters)
    )


def _matching(b: AclBinding) -> DeleteAclsMatchingAcl:
    return DeleteAclsMatchingAcl(
        error_code=ErrorCode.NONE,
        resource_type=int(b.resource_type),
        resource_name=b.resource_name,
        pattern_type=int(b.pattern_type),
        principal=b.principal,
        host=b.host,
        operation=int(b.operation),
        permission_type=int(b.permission),
    )


@handles(ApiKey.DELETE_ACLS, error_response=_delete_error)
def delete_acls(
    broker: Broker, ctx: RequestContext, request: DeleteAclsRequest
) -> DeleteAclsResponse:
    authorizer = _open_authorizer(broker, ctx, AclOperation.ALTER)
    if isinstance(authorizer, tuple):
        return _delete_error(request, *authorizer)
    results = []
    for f in request.filters:
        acl_filter = _filter(f)
        problem = acl_filter.problem()
        if problem is not None:
            results.append(DeleteAclsFilterResult(ErrorCode.INVALID_REQUEST, problem))
            continue
        removed = authorizer.remove(acl_filter)
        results.append(
            DeleteAclsFilterResult(ErrorCode.NONE, None, tuple(_matching(b) for b in removed))
        )
    return DeleteAclsResponse(filter_results=tuple(results))
