"""DescribeAcls (key 29), versions 1-3, flexible 2+ (v0 left Kafka in 4.0).

Request: one filter, ``resource_type_filter int8, resource_name_filter string
(nullable), pattern_type_filter int8, principal_filter string (nullable),
host_filter string (nullable), operation int8, permission_type int8``; null
and ANY match everything. Response: ``throttle_time_ms int32, error_code int16,
error_message string (nullable), resources [resource_type int8, resource_name
string, pattern_type int8, acls [principal string, host string, operation
int8, permission_type int8]]``. Codes (Kafka's enums)::

    resource type   0 UNKNOWN 1 ANY 2 TOPIC 3 GROUP 4 CLUSTER 5 TRANSACTIONAL_ID
                    6 DELEGATION_TOKEN 7 USER (v3+)
    pattern type    0 UNKNOWN 1 ANY 2 MATCH 3 LITERAL 4 PREFIXED
    operation       0 UNKNOWN 1 ANY 2 ALL 3 READ 4 WRITE 5 CREATE 6 DELETE 7 ALTER
                    8 DESCRIBE 9 CLUSTER_ACTION 10 DESCRIBE_CONFIGS 11 ALTER_CONFIGS
                    12 IDEMPOTENT_WRITE 13 CREATE_TOKENS 14 DESCRIBE_TOKENS
    permission      0 UNKNOWN 1 ANY 2 DENY 3 ALLOW
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT8, INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "AclDescription",
    "DescribeAclsRequest",
    "DescribeAclsResource",
    "DescribeAclsResponse",
]


@message(api_key=29, kind="request", valid="1-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class DescribeAclsRequest(Struct):
    resource_type_filter: int = proto(INT8, "1+")
    resource_name_filter: str | None = proto(STRING, "1+", nullable="1+", default=None)
    pattern_type_filter: int = proto(INT8, "1+", default=3)
    principal_filter: str | None = proto(STRING, "1+", nullable="1+", default=None)
    host_filter: str | None = proto(STRING, "1+", nullable="1+", default=None)
    operation: int = proto(INT8, "1+")
    permission_type: int = proto(INT8, "1+")


@dataclass(frozen=True, slots=True)
class AclDescription(Struct):
    principal: str = proto(STRING, "1+")
    host: str = proto(STRING, "1+")
    operation: int = proto(INT8, "1+")
    permission_type: int = proto(INT8, "1+")


@dataclass(frozen=True, slots=True)
class DescribeAclsResource(Struct):
    resource_type: int = proto(INT8, "1+")
    resource_name: str = proto(STRING, "1+")
    pattern_type: int = proto(INT8, "1+", default=3)
    acls: tuple[AclDescription, ...] = proto(array(AclDescription), "1+")


@message(api_key=29, kind="response", valid="1-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class DescribeAclsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+")
    error_code: int = proto(INT16, "1+")
    error_message: str | None = proto(STRING, "1+", nullable="1+", default=None)
    resources: tuple[DescribeAclsResource, ...] = proto(array(DescribeAclsResource), "1+")
