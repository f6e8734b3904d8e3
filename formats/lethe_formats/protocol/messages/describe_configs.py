"""DescribeConfigs (key 32), versions 1-4 (Kafka 4.0 dropped v0), flexible 4+.

Request::

    resources [
        resource_type       int8      2 = topic, 4 = broker, 8 = broker logger, ...
        resource_name       string    topic name, or broker id as text ("" = any broker)
        configuration_keys  [string], nullable: null lists every config
    ]
    include_synonyms       bool  (v1+)
    include_documentation  bool  (v3+)

Response::

    throttle_time_ms  int32
    results [
        error_code, error_message (nullable), resource_type int8, resource_name
        configs [
            name           string
            value          string, nullable (null for sensitive values)
            read_only      bool
            config_source  int8  (v1+; 1 topic, 2-3 dynamic broker, 4 static broker, 5 default)
            is_sensitive   bool
            synonyms [name, value (nullable), source int8]  (v1+, when asked for)
            config_type    int8   (v3+: 0 unknown, 1 boolean, 2 string, 3 int ... 9 password)
            documentation  string, nullable (v3+)
        ]
    ]

v0's ``is_default`` flag went with v0; ``config_source`` replaces it.
``resource_type`` ids are Kafka's ``ConfigResource.Type``: 2 topic, 4 broker,
8 broker logger, 16 client metrics, 32 group.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
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
    "DescribeConfigsRequest",
    "DescribeConfigsResource",
    "DescribeConfigsResourceResult",
    "DescribeConfigsResponse",
    "DescribeConfigsResult",
    "DescribeConfigsSynonym",
]


@dataclass(frozen=True, slots=True)
class DescribeConfigsResource(Struct):
    resource_type: int = proto(INT8, "0+")
    resource_name: str = proto(STRING, "0+")
    configuration_keys: tuple[str, ...] | None = proto(array(STRING), "0+", nullable="0+")


@message(api_key=32, kind="request", valid="1-4", flexible="4+")
@dataclass(frozen=True, slots=True)
class DescribeConfigsRequest(Struct):
    resources: tuple[DescribeConfigsResource, ...] = proto(array(DescribeConfigsResource), "0+")
    include_synonyms: bool = proto(BOOL, "1+")
    include_documentation: bool = proto(BOOL, "3+")


@dataclass(frozen=True, slots=True)
class DescribeConfigsSynonym(Struct):
    name: str = proto(STRING, "1+")
    value: str | None = proto(STRING, "1+", nullable="0+")
    source: int = proto(INT8, "1+")


@dataclass(frozen=True, slots=True)
class DescribeConfigsResourceResult(Struct):
    name: str = proto(STRING, "0+")
    value: str | None = proto(STRING, "0+", nullable="0+")
    read_only: bool = proto(BOOL, "0+")
    config_source: int = proto(INT8, "1+", default=-1, ignorable=True)
    is_sensitive: bool = proto(BOOL, "0+")
    synonyms: tuple[DescribeConfigsSynonym, ...] = proto(
        array(DescribeConfigsSynonym), "1+", ignorable=True
    )
    config_type: int = proto(INT8, "3+", ignorable=True)
    documentation: str | None = proto(STRING, "3+", nullable="0+", ignorable=True)


@dataclass(frozen=True, slots=True)
class DescribeConfigsResult(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    resource_type: int = proto(INT8, "0+")
    resource_name: str = proto(STRING, "0+")
    configs: tuple[DescribeConfigsResourceResult, ...] = proto(
        array(DescribeConfigsResourceResult), "0+"
    )


@message(api_key=32, kind="response", valid="1-4", flexible="4+")
@dataclass(frozen=True, slots=True)
class DescribeConfigsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    results: tuple[DescribeConfigsResult, ...] = proto(array(DescribeConfigsResult), "0+")
