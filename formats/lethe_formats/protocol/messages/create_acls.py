"""CreateAcls (key 30), versions 1-3, flexible 2+ (v0 left Kafka in 4.0, KIP-896).

Request: ``creations [resource_type int8, resource_name string,
resource_pattern_type int8, principal string, host string, operation int8,
permission_type int8]``. Response: ``throttle_time_ms int32``, ``results
[error_code int16, error_message string (nullable)]``, one per creation, in
request order. v3 adds nothing on the wire: it lets the USER resource type (7)
through. The enum values (resource type, pattern type, operation, permission)
are Kafka's ``ResourceType``/``PatternType``/``AclOperation``/
``AclPermissionType`` codes; :mod:`lethe_formats.protocol.messages.describe_acls`
lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT8, INT16, INT32, STRING, Struct, array, message, proto

__all__ = ["AclCreation", "AclCreationResult", "CreateAclsRequest", "CreateAclsResponse"]


@dataclass(frozen=True, slots=True)
class AclCreation(Struct):
    resource_type: int = proto(INT8, "1+")
    resource_name: str = proto(STRING, "1+")
    resource_pattern_type: int = proto(INT8, "1+", default=3)
    principal: str = proto(STRING, "1+")
    host: str = proto(STRING, "1+")
    operation: int = proto(INT8, "1+")
    permission_type: int = proto(INT8, "1+")


@message(api_key=30, kind="request", valid="1-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class CreateAclsRequest(Struct):
    creations: tuple[AclCreation, ...] = proto(array(AclCreation), "1+")


@dataclass(frozen=True, slots=True)
class AclCreationResult(Struct):
    error_code: int = proto(INT16, "1+")
    error_message: str | None = proto(STRING, "1+", nullable="1+", default=None)


@message(api_key=30, kind="response", valid="1-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class CreateAclsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+")
    results: tuple[AclCreationResult, ...] = proto(array(AclCreationResult), "1+")
