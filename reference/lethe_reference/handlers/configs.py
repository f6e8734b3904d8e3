"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44).

Theory of operation
-------------------
The semantics (values, sources, synonyms, operations, validation, wording) are
the config package's (:mod:`lethe_reference.config`); this module routes each
resource of a request to it, checks the resource itself as Kafka 4.0 does, and
applies accepted changes to the broker (topic overrides reach the partition logs'
LogConfig at once; broker changes swap the broker config).

Authorization first, per resource (:mod:`.config_access`: DESCRIBE_CONFIGS /
ALTER_CONFIGS on the topic or the cluster, else 29 / 31), only with an
authorizer. DescribeConfigs lists the refused resources after the described
ones (``ConfigHelper.handleDescribeConfigsRequest``); the alters keep the
request's order (``ConfigAdminManager.reassemble*Response``). Then the
resource checks, per resource, in Kafka's order (``ConfigHelper.describeConfigs``;
``ConfigAdminManager.preprocess`` then the controller for alters):

=================  ===========================================================
DescribeConfigs    TOPIC: ``Topic.validate`` (INVALID_TOPIC_EXCEPTION), unknown
                   topic UNKNOWN_TOPIC_OR_PARTITION with no configs. BROKER: "" =
                   cluster defaults, this node's id = everything, another id or a
                   non-number INVALID_REQUEST. BROKER_LOGGER: this node's loggers.
                   Any other type: INVALID_REQUEST for the whole request.
AlterConfigs /     a resource named twice: INVALID_REQUEST "Each resource must
Incremental...     appear at most once." for both; then the config package's
                   request checks (duplicate keys, null values); BROKER named by
                   another id: INVALID_REQUEST; TOPIC: the change is validated,
                   then the name ("Default topic resources are not allowed.",
                   ``Topic.validate``), then existence (UNKNOWN_TOPIC_OR_PARTITION
                   "The topic 'x' does not exist."). BROKER_LOGGER (incremental
                   only) sets Python logger levels. Other types: INVALID_REQUEST
                   "Unknown resource type N".
=================  ===========================================================

Deviations, on purpose: ``include_documentation`` yields null documentation
(Kafka's prose is not reproduced); GROUP and CLIENT_METRICS resources, which
belong to APIs this broker does not serve, are answered INVALID_REQUEST.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_configs import (
    AlterConfigsRequest,
    AlterConfigsResourceResponse,
    AlterConfigsResponse,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)
from lethe_formats.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResourceResponse,
    IncrementalAlterConfigsResponse,
)

from lethe_reference.config import (
    ConfigEntry,
    ConfigOp,
    describe_broker_configs,
    describe_topic_configs,
)
from lethe_reference.handlers.config_access import config_refusal
from lethe_reference.handlers.config_changes import (
    BROKER,
    BROKER_LOGGER,
    TOPIC,
    Outcome,
    ResourceError,
    alter_resource,
    check_unique_resources,
    logger_levels,
    resource_type_name,
)
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.metadata import topic_name_problem

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["alter_configs", "describe_configs", "incremental_alter_configs"]


# --- DescribeConfigs ----------------------------------------------------------------------


def _describe_error(
    request: DescribeConfigsRequest, code: ErrorCode, message: str | None
) -> DescribeConfigsResponse:
    """``DescribeConfigsRequest.getErrorResponse``."""
    return DescribeConfigsResponse(
        results=tuple(
            DescribeConfigsResult(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r in request.resources
        )
    )


def _entry(entry: ConfigEntry) -> DescribeConfigsResourceResult:
    return DescribeConfigsResourceResult(
        name=entry.name,
        value=entry.value,
        read_only=entry.read_only,
        config_source=int(entry.source),
        is_sensitive=entry.sensitive,
        synonyms=tuple(
            DescribeConfigsSynonym(name=s.name, value=s.value, source=int(s.source))
            for s in entry.synonyms
        ),
        config_type=int(entry.config_type),
        documentation=None,
    )


def _broker_id(broker: Broker, name: str, unexpected: str) -> None:
    try:
        node = int(name)
    except ValueError:
        raise ResourceError(
            ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}"
        ) from None
    if node != broker.node_id:
        raise ResourceError(ErrorCode.INVALID_REQUEST, unexpected)


def _describe_entries(
    broker: Broker, resource: DescribeConfigsResource, synonyms: bool
) -> list[DescribeConfigsResourceResult] | None:
    """The entries, or None for an unknown topic; raises ResourceError."""
    keys = resource.configuration_keys or None
    name = resource.resource_name
    if resource.resource_type == TOPIC:
        problem = topic_name_problem(name)
        if problem is not None:
            raise ResourceError(
                ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {problem}"
            )
        info = broker.metadata.get(name)
        if info is None:
            return None
        entries = describe_topic_configs(
            info.configs, broker.config, include_synonyms=synonyms, keys=keys
        )
    elif resource.resource_type == BROKER:
        if name:
            expected = (
                f"Unexpected broker id, expected {broker.node_id} or empty string, "
                f"but received {name}"
            )
            _broker_id(broker, name, expected)
        entries = describe_broker_configs(
            broker.config, per_broker=bool(name), include_synonyms=synonyms, keys=keys
        )
    else:
        if not name:
            raise ResourceError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
        expected = f"Unexpected broker id, expected {broker.node_id} but received {name}"
        _broker_id(broker, name, expected)
        return [
            DescribeConfigsResourceResult(name=logger, value=level, config_source=6)
            for logger, level in logger_levels()
            if not keys or logger in keys
        ]
    return [_entry(e) for e in entries]


def _describe_one(
    broker: Broker, resource: DescribeConfigsResource, synonyms: bool
) -> DescribeConfigsResult:
    kind, name = resource.resource_type, resource.resource_name
    try:
        entries = _describe_entries(broker, resource, synonyms)
    except ResourceError as error:
        return DescribeConfigsResult(error.code, error.message, kind, name)
    if entries is None:
        return DescribeConfigsResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "", kind, name)
    return DescribeConfigsResult(ErrorCode.NONE, "", kind, name, tuple(entries))


@handles(ApiKey.DESCRIBE_CONFIGS, error_response=_describe_error)
def describe_configs(
    broker: Broker, ctx: RequestContext, request: DescribeConfigsRequest
) -> DescribeConfigsResponse:
    for resource in request.resources:
        if resource.resource_type not in (TOPIC, BROKER, BROKER_LOGGER):
            kind = resource_type_name(resource.resource_type)
            raise error_for_code(
                ErrorCode.INVALID_REQUEST,
                f"Unexpected resource type {kind} for resource {resource.resource_name}",
            )
    refused = [_refused(broker, ctx, r) for r in request.resources]
    described = [
        _describe_one(broker, r, request.include_synonyms)
        for r, refusal in zip(request.resources, refused, strict=True)
        if refusal is None
    ]
    # ConfigHelper answers the authorized resources first, then the refused ones
    return DescribeConfigsResponse(results=(*described, *(r for r in refused if r is not None)))


def _refused(
    broker: Broker, ctx: RequestContext, resource: DescribeConfigsResource
) -> DescribeConfigsResult | None:
    """The answer to a resource the principal may not describe (:mod:`.config_access`)."""
    kind, name = resource.resource_type, resource.resource_name
    refusal = config_refusal(broker, ctx, kind, name, alter=False)
    return None if refusal is None else DescribeConfigsResult(*refusal, kind, name)


def _alter_refused(
    broker: Broker, ctx: RequestContext, resource_type: int, name: str
) -> Outcome | None:
    refusal = config_refusal(broker, ctx, resource_type, name, alter=True)
    return None if refusal is None else Outcome(*refusal)


# --- AlterConfigs / IncrementalAlterConfigs -----------------------------------------------


def _alter_error(
    request: AlterConfigsRequest, code: ErrorCode, message: str | None
) -> AlterConfigsResponse:
    return AlterConfigsResponse(
        responses=tuple(
            AlterConfigsResourceResponse(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r in request.resources
        )
    )


@handles(ApiKey.ALTER_CONFIGS, error_response=_alter_error)
def alter_configs(
    broker: Broker, ctx: RequestContext, request: AlterConfigsRequest
) -> AlterConfigsResponse:
    keys = [(r.resource_type, r.resource_name) for r in request.resources]
    repeated = check_unique_resources(keys)
    out = []
    for index, resource in enumerate(request.resources):
        entries = [(c.name, c.value) for c in resource.configs]
        kind, name = resource.resource_type, resource.resource_name
        error = (
            repeated.get(index)
            or _alter_refused(broker, ctx, kind, name)
            or alter_resource(
                broker,
                resource.resource_type,
                resource.resource_name,
                entries=entries,
                validate_only=request.validate_only,
            )
        )
        out.append(
            AlterConfigsResourceResponse(
                error_code=error.code,
                error_message=error.message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return AlterConfigsResponse(responses=tuple(out))


def _incremental_error(
    request: IncrementalAlterConfigsRequest, code: ErrorCode, message: str | None
) -> IncrementalAlterConfigsResponse:
    return IncrementalAlterConfigsResponse(
        responses=tuple(
            IncrementalAlterConfigsResourceResponse(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r in request.resources
        )
    )


@handles(ApiKey.INCREMENTAL_ALTER_CONFIGS, error_response=_incremental_error)
def incremental_alter_configs(
    broker: Broker, ctx: RequestContext, request: IncrementalAlterConfigsRequest
) -> IncrementalAlterConfigsResponse:
    keys = [(r.resource_type, r.resource_name) for r in request.resources]
    repeated = check_unique_resources(keys)
    out = []
    for index, resource in enumerate(request.resources):
        ops = [ConfigOp(c.name, c.config_operation, c.value) for c in resource.configs]
        kind, name = resource.resource_type, resource.resource_name
        error = (
            repeated.get(index)
            or _alter_refused(broker, ctx, kind, name)
            or alter_resource(
                broker,
                resource.resource_type,
                resource.resource_name,
                ops=ops,
                validate_only=request.validate_only,
            )
        )
        out.append(
            IncrementalAlterConfigsResourceResponse(
                error_code=error.code,
                error_message=error.message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return IncrementalAlterConfigsResponse(responses=tuple(out))
