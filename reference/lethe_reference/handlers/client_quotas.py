"""DescribeClientQuotas (48) and AlterClientQuotas (49): ``KafkaApis`` / ``ControllerApis``.

Theory of operation
-------------------
The rules are :mod:`lethe_reference.cluster.client_quotas`; this module is the wire:

* DescribeClientQuotas needs DESCRIBE_CONFIGS on the cluster (else
  CLUSTER_AUTHORIZATION_FAILED (31) with entries null); a filter error is the
  whole answer (its code and message, entries null); otherwise error 0 with an
  *empty* message (Kafka's response keeps the field's default ``""``) and every
  matching entity. Order, as a Kafka broker's image holds them: entities in
  ``HashMap<ClientQuotaEntity, ...>`` order (an entity's ``hashCode`` is the sum
  over its parts of ``type.hashCode() ^ name.hashCode()``, a default name 0), each
  entity's parts in ``HashMap<String, String>`` order, values in the order of a
  ``HashMap<String, Double>`` copied from the entity's map.
* AlterClientQuotas needs ALTER_CONFIGS on the cluster (else 31 on every entry);
  one result per distinct entity, with its parts as Kafka echoes them (the
  ``ClientQuotaEntity`` map's order), error 0 with a null message or 42 with
  Kafka's message, in the order of Kafka's ``HashMap`` of results.

A member of an :class:`~lethe_reference.embedded_cluster.EmbeddedCluster` applies
an alteration to every running broker's store (the metadata every broker replays).

Quotas are kept and described, not enforced: lethe throttles no byte rate or
request time, and its connection limits (:mod:`lethe_reference.protocol.quotas`)
are the static ``max.connections*`` counts, not a creation rate, so
``connection_creation_rate`` is stored for tools to read back only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import KafkaError, error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    AlterQuotaEntry,
    AlterQuotaResult,
)
from lethe_formats.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
    QuotaEntity,
    QuotaEntry,
    QuotaValue,
)

from lethe_reference.cluster import client_quotas as rules
from lethe_reference.cluster.acl import AclOperation
from lethe_reference.cluster.group.support import java_string_hash
from lethe_reference.cluster.membership import cluster_brokers
from lethe_reference.handlers.authz import authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.java_order import (
    copied_map_bins,
    java_hash_map_order,
    java_hash_set_order,
)

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["alter_error_response", "describe_error_response", "quota_store"]

_KEY = "client-quotas"


def quota_store(broker: Broker) -> rules.ClientQuotaStore:
    """The broker's quotas (loaded from its log dir the first time)."""
    store = broker.extensions.get(_KEY)
    if not isinstance(store, rules.ClientQuotaStore):
        store = rules.ClientQuotaStore.load(broker.log_dir / rules.QUOTA_FILE)
        broker.extensions[_KEY] = store
    return store


def _parts_in_java_order(entity: rules.Entity) -> list[tuple[str, str | None]]:
    names = dict(entity)
    return [(t, names[t]) for t in java_hash_set_order(names)]


def _entity_hash(entity: rules.Entity) -> int:
    total = 0
    for entity_type, name in entity:
        total += java_string_hash(entity_type) ^ (0 if name is None else java_string_hash(name))
    return total & 0xFFFFFFFF


# --- DescribeClientQuotas ------------------------------------------------------------------


def describe_error_response(
    request: DescribeClientQuotasRequest, code: ErrorCode, message: str | None
) -> DescribeClientQuotasResponse:
    return DescribeClientQuotasResponse(error_code=code, error_message=message, entries=None)


def _entry(entity: rules.Entity, values: dict[str, float]) -> QuotaEntry:
    keys = java_hash_map_order(list(values), java_string_hash, copied_map_bins(len(values)))
    return QuotaEntry(
        entity=tuple(QuotaEntity(t, n) for t, n in _parts_in_java_order(entity)),
        values=tuple(QuotaValue(k, values[k]) for k in keys),
    )


@handles(ApiKey.DESCRIBE_CLIENT_QUOTAS, error_response=describe_error_response)
def handle_describe(
    broker: Broker, ctx: RequestContext, request: DescribeClientQuotasRequest
) -> DescribeClientQuotasResponse:
    if not authorize_cluster(broker, ctx, AclOperation.DESCRIBE_CONFIGS):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return describe_error_response(request, code, code.message)
    components = [(c.entity_type, c.match_type, c.match) for c in request.components]
    rules.check_filter(components)
    store = quota_store(broker)
    found = [e for e in store.entities if rules.matches(e, components, request.strict)]
    ordered = java_hash_map_order(found, _entity_hash)
    return DescribeClientQuotasResponse(
        error_code=ErrorCode.NONE,
        error_message="",
        entries=tuple(_entry(e, store.entities[e]) for e in ordered),
    )


# --- AlterClientQuotas ---------------------------------------------------------------------

#: a request's entity as Kafka's ``ClientQuotaEntity`` map holds it (a type given twice
#: keeps its last name), in type order; the key of the per-entity results
RequestEntity = tuple[tuple[str, str | None], ...]


def _request_entity(entry: AlterQuotaEntry) -> RequestEntity:
    parts = {p.entity_type: p.entity_name for p in entry.entity}
    return tuple(sorted(parts.items()))


def _echo(entity: RequestEntity) -> tuple[QuotaEntity, ...]:
    """The entity as Kafka echoes it: its map's entries in hash order."""
    return tuple(QuotaEntity(t, n) for t, n in _parts_in_java_order(entity))


def _text(entity: RequestEntity) -> str:
    return rules.entity_text(dict(_parts_in_java_order(entity)))


def _answer(results: dict[RequestEntity, tuple[int, str | None]]) -> AlterClientQuotasResponse:
    """``AlterClientQuotasResponse.fromQuotaEntities`` over the results' HashMap."""
    ordered = java_hash_map_order(list(results), _entity_hash)
    return AlterClientQuotasResponse(
        entries=tuple(AlterQuotaResult(*results[e], _echo(e)) for e in ordered)
    )


def alter_error_response(
    request: AlterClientQuotasRequest, code: ErrorCode, message: str | None
) -> AlterClientQuotasResponse:
    """``AlterClientQuotasRequest.getErrorResponse``: every entry as sent, with the
    error's default message (``Errors.message()``, whatever the exception said)."""
    return AlterClientQuotasResponse(
        entries=tuple(AlterQuotaResult(code, code.message, e.entity) for e in request.entries)
    )


def _validated(
    broker: Broker, entity: RequestEntity, changes: dict[str, float | None]
) -> dict[str, float | None]:
    """The changes that alter something (``alterClientQuotaEntity``); raises KafkaError."""
    store = quota_store(broker)
    resolves = broker.extensions.get(rules.RESOLVER_KEY, rules.is_ip_literal)
    _, keys = rules.entity_problem(entity, resolves)
    current = store.entities.get(entity, {})
    effective: dict[str, float | None] = {}
    for key, value in changes.items():
        if value is None:
            if key in current:
                effective[key] = None
            continue
        problem = rules.value_problem(keys, key, value)
        if problem is not None:
            raise error_for_code(ErrorCode.INVALID_REQUEST, problem)
        if current.get(key) != value:
            effective[key] = value
    return effective


def _stores(broker: Broker) -> list[rules.ClientQuotaStore]:
    return [quota_store(peer) for peer in cluster_brokers(broker)]


@handles(ApiKey.ALTER_CLIENT_QUOTAS, error_response=alter_error_response)
def handle_alter(
    broker: Broker, ctx: RequestContext, request: AlterClientQuotasRequest
) -> AlterClientQuotasResponse:
    """``ClientQuotaControlManager.alterClientQuotas``, quirks kept: a duplicate key
    is reported, like a repeated entity, as "Ignoring duplicate entity E" (the key
    error is replaced by that one), and a repeated entity's earlier changes stay."""
    if not authorize_cluster(broker, ctx, AclOperation.ALTER_CONFIGS):
        return alter_error_response(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    results: dict[RequestEntity, tuple[int, str | None]] = {}
    accepted: list[tuple[rules.Entity, dict[str, float | None]]] = []
    for entry in request.entries:
        entity = _request_entity(entry)
        changes: dict[str, float | None] = {}
        for op in entry.ops:
            if op.key in changes:
                results[entity] = (ErrorCode.INVALID_REQUEST, "duplicate key")
            else:
                changes[op.key] = None if op.remove else op.value
        if entity in results:
            results[entity] = (
                ErrorCode.INVALID_REQUEST,
                f"Ignoring duplicate entity {_text(entity)}",
            )
            continue
        try:
            accepted.append((entity, _validated(broker, entity, changes)))
            results[entity] = (ErrorCode.NONE, None)
        except KafkaError as error:
            results[entity] = (error.code, error.message)
    if not request.validate_only and accepted:
        for target in _stores(broker):
            for entity, effective in accepted:
                target.apply(entity, effective)
            target.save()
    return _answer(results)
