"""IncrementalAlterConfigs (key 44, KIP-339), versions 0-1, flexible 1+.

Changes single config keys of a resource, each with an operation
(:data:`SET` 0, :data:`DELETE` 1, :data:`APPEND` 2, :data:`SUBTRACT` 3; the
last two for list-typed configs).

Request::

    resources [
        resource_type  int8
        resource_name  string
        configs [name string, config_operation int8, value string (nullable)]
    ]
    validate_only  bool

Response::

    throttle_time_ms  int32
    responses [error_code int16, error_message string (nullable), resource_type int8,
               resource_name string]

The Kafka spec names the nested structs as AlterConfigs does; here they carry
an ``Incremental`` prefix so the two modules' classes cannot be mixed up.
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
    "APPEND",
    "DELETE",
    "SET",
    "SUBTRACT",
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResource",
    "IncrementalAlterConfigsResourceResponse",
    "IncrementalAlterConfigsResponse",
    "IncrementalAlterableConfig",
]

#: ``config_operation`` values (Kafka's ``AlterConfigOp.OpType`` ids).
SET = 0
DELETE = 1
APPEND = 2
SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class IncrementalAlterableConfig(Struct):
    name: str = proto(STRING, "0+")
    config_operation: int = proto(INT8, "0+")
    value: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class IncrementalAlterConfigsResource(Struct):
    resource_type: int = proto(INT8, "0+")
    resource_name: str = proto(STRING, "0+")
    configs: tuple[IncrementalAlterableConfig, ...] = proto(array(IncrementalAlterableConfig), "0+")


@message(api_key=44, kind="request", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class IncrementalAlterConfigsRequest(Struct):
    resources: tuple[IncrementalAlterConfigsResource, ...] = proto(
        array(IncrementalAlterConfigsResource), "0+"
    )
    validate_only: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class IncrementalAlterConfigsResourceResponse(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    resource_type: int = proto(INT8, "0+")
    resource_name: str = proto(STRING, "0+")


@message(api_key=44, kind="response", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class IncrementalAlterConfigsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    responses: tuple[IncrementalAlterConfigsResourceResponse, ...] = proto(
        array(IncrementalAlterConfigsResourceResponse), "0+"
    )
