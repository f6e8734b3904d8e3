"""DescribeClientQuotas (key 48, KIP-546), versions 0-1, flexible 1+.

Request::

    components [entity_type string, match_type int8, match string (nullable)]
    strict     bool

``match_type``: 0 the entity named ``match``, 1 the entity type's default (the
``<default>`` entity, name null), 2 any entity of that type that has a name.
Without ``strict`` an entity may have entity types no component names.

Response::

    throttle_time_ms  int32
    error_code        int16
    error_message     string (nullable)
    entries [entity [entity_type string, entity_name string (nullable: the default)],
             values [key string, value float64]] (nullable: null on an error)

Entity types: ``user``, ``client-id`` (together or alone) and ``ip`` (alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "MATCH_ANY",
    "MATCH_DEFAULT",
    "MATCH_EXACT",
    "DescribeClientQuotasRequest",
    "DescribeClientQuotasResponse",
    "QuotaComponent",
    "QuotaEntity",
    "QuotaEntry",
    "QuotaValue",
]

#: ``match_type`` values.
MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_ANY = 2


@dataclass(frozen=True, slots=True)
class QuotaComponent(Struct):
    entity_type: str = proto(STRING, "0+")
    match_type: int = proto(INT8, "0+")
    match: str | None = proto(STRING, "0+", nullable="0+")


@message(api_key=48, kind="request", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class DescribeClientQuotasRequest(Struct):
    components: tuple[QuotaComponent, ...] = proto(array(QuotaComponent), "0+")
    strict: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class QuotaEntity(Struct):
    """One part of an entity (also AlterClientQuotas' ``EntityData``)."""

    entity_type: str = proto(STRING, "0+")
    entity_name: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class QuotaValue(Struct):
    key: str = proto(STRING, "0+")
    value: float = proto(FLOAT64, "0+")


@dataclass(frozen=True, slots=True)
class QuotaEntry(Struct):
    entity: tuple[QuotaEntity, ...] = proto(array(QuotaEntity), "0+")
    values: tuple[QuotaValue, ...] = proto(array(QuotaValue), "0+")


@message(api_key=48, kind="response", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class DescribeClientQuotasResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    entries: tuple[QuotaEntry, ...] | None = proto(array(QuotaEntry), "0+", nullable="0+")
