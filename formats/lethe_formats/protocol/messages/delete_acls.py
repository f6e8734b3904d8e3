"""DeleteAcls (key 31), versions 1-3, flexible 2+ (v0 left Kafka in 4.0).

Request: ``filters [resource_type_filter int8, resource_name_filter string
(nullable), pattern_type_filter int8, principal_filter string (nullable),
host_filter string (nullable), operation int8, permission_type int8]`` (the
filter of :mod:`.describe_acls`, several at once). Response:
``throttle_time_ms int32``, ``filter_results [error_code int16, error_message
string (nullable), matching_acls [error_code int16, error_message string
(nullable), resource_type int8, resource_name string, pattern_type int8,
principal string, host string, operation int8, permission_type int8]]``, one
result per filter in request order, listing every binding it removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT8, INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "DeleteAclsFilter",
    "DeleteAclsFilterResult",
    "DeleteAclsMatchingAcl",
    "DeleteAclsRequest",
    "DeleteAclsResponse",
]


@dataclass(frozen=True, slots=True)
class DeleteAclsFilter(Struct):
    resource_type_filter: int = proto(INT8, "1+")
    resource_name_filter: str | None = proto(STRING, "1+", nullable="1+", default=None)
    pattern_type_filter: int = proto(INT8, "1+", default=3)
    principal_filter: str | None = proto(STRING, "1+", nullable="1+", default=None)
    host_filter: str | None = proto(STRING, "1+", nullable="1+", default=None)
    operation: int = proto(INT8, "1+")
    permission_type: int = proto(INT8, "1+")


@message(api_key=31, kind="request", valid="1-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class DeleteAclsRequest(Struct):
    filters: tuple[DeleteAclsFilter, ...] = proto(array(DeleteAclsFilter), "1+")


@dataclass(frozen=True, slots=True)
class DeleteAclsMatchingAcl(Struct):
    error_code: int = proto(INT16, "1+")
    error_message: str | None = proto(STRING, "1+", nullable="1+", default=None)
    resource_type: int = proto(INT8, "1+")
    resource_name: str = proto(STRING, "1+")
    pattern_type: int = proto(INT8, "1+", default=3)
    principal: str = proto(STRING, "1+")
    host: str = proto(STRING, "1+")
    operation: int = proto(INT8, "1+")
    permission_type: int = proto(INT8, "1+")


@dataclass(frozen=True, slots=True)
class DeleteAclsFilterResult(Struct):
    error_code: int = proto(INT16, "1+")
    error_message: str | None = proto(STRING, "1+", nullable="1+", default=None)
    matching_acls: tuple[DeleteAclsMatchingAcl, ...] = proto(array(DeleteAclsMatchingAcl), "1+")


@message(api_key=31, kind="response", valid="1-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class DeleteAclsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+")
    filter_results: tuple[DeleteAclsFilterResult, ...] = proto(array(DeleteAclsFilterResult), "1+")
