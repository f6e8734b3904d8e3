"""AlterConfigs (key 33), versions 0-2, flexible 2+.

The legacy, whole-resource form: the configs sent replace every dynamic config
of the resource (IncrementalAlterConfigs, key 44, changes single keys).

Request::

    resources [
        resource_type  int8
        resource_name  string
        configs [name string, value string (nullable)]
    ]
    validate_only  bool

Response::

    throttle_time_ms  int32
    responses [error_code int16, error_message string (nullable), resource_type int8,
               resource_name string]

v1 is v0 (the broker answers before throttling); v2 is the first flexible version.
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
    "AlterConfigsRequest",
    "AlterConfigsResource",
    "AlterConfigsResourceResponse",
    "AlterConfigsResponse",
    "AlterableConfig",
]


@dataclass(frozen=True, slots=True)
class AlterableConfig(Struct):
    name: str = proto(STRING, "0+")
    value: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class AlterConfigsResource(Struct):
    resource_type: int = proto(INT8, "0+")
    resource_name: str = proto(STRING, "0+")
    configs: tuple[AlterableConfig, ...] = proto(array(AlterableConfig), "0+")


@message(api_key=33, kind="request", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class AlterConfigsRequest(Struct):
    resources: tuple[AlterConfigsResource, ...] = proto(array(AlterConfigsResource), "0+")
    validate_only: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class AlterConfigsResourceResponse(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    resource_type: int = proto(INT8, "0+")
    resource_name: str = proto(STRING, "0+")


@message(api_key=33, kind="response", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class AlterConfigsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    responses: tuple[AlterConfigsResourceResponse, ...] = proto(
        array(AlterConfigsResourceResponse), "0+"
    )
