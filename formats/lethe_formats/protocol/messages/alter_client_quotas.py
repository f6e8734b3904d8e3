"""AlterClientQuotas (key 49, KIP-546), versions 0-1, flexible 1+.

Request::

    entries [entity [entity_type string, entity_name string (nullable: the default)],
             ops [key string, value float64, remove bool]]
    validate_only bool

Response::

    throttle_time_ms  int32
    entries [error_code int16, error_message string (nullable),
             entity [entity_type string, entity_name string (nullable)]]

One result per request entry, with its entity as sent. ``remove`` drops the key
(its value is ignored); an entity left without keys is gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.messages.describe_client_quotas import QuotaEntity
from lethe_formats.protocol.schema import (
    BOOL,
    FLOAT64,
    INT16,
    INT32,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "AlterClientQuotasRequest",
    "AlterClientQuotasResponse",
    "AlterQuotaEntry",
    "AlterQuotaResult",
    "QuotaOp",
]


@dataclass(frozen=True, slots=True)
class QuotaOp(Struct):
    key: str = proto(STRING, "0+")
    value: float = proto(FLOAT64, "0+")
    remove: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class AlterQuotaEntry(Struct):
    entity: tuple[QuotaEntity, ...] = proto(array(QuotaEntity), "0+")
    ops: tuple[QuotaOp, ...] = proto(array(QuotaOp), "0+")


@message(api_key=49, kind="request", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class AlterClientQuotasRequest(Struct):
    entries: tuple[AlterQuotaEntry, ...] = proto(array(AlterQuotaEntry), "0+")
    validate_only: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class AlterQuotaResult(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    entity: tuple[QuotaEntity, ...] = proto(array(QuotaEntity), "0+")


@message(api_key=49, kind="response", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class AlterClientQuotasResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    entries: tuple[AlterQuotaResult, ...] = proto(array(AlterQuotaResult), "0+")
