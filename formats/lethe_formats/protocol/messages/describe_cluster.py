"""DescribeCluster (key 60, KIP-700), versions 0-2, flexible 0+ (always compact).

Request::

    include_cluster_authorized_operations  bool
    endpoint_type                          int8 (v1+, default 1: brokers; 2: controllers)
    include_fenced_brokers                 bool (v2+, KIP-1073)

Response::

    throttle_time_ms               int32
    error_code                     int16
    error_message                  string, nullable (default null)
    endpoint_type                  int8   (v1+, default 1)
    cluster_id                     string
    controller_id                  int32  (default -1)
    brokers [broker_id int32, host string, port int32, rack string (nullable,
             default null), is_fenced bool (v2+)]
    cluster_authorized_operations  int32  (default INT32_MIN: not requested)

v1 makes MISMATCHED_ENDPOINT_TYPE and UNSUPPORTED_ENDPOINT_TYPE possible
top-level errors.
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
    "AUTHORIZED_OPERATIONS_OMITTED",
    "ENDPOINT_BROKERS",
    "ENDPOINT_CONTROLLERS",
    "DescribeClusterBroker",
    "DescribeClusterRequest",
    "DescribeClusterResponse",
]

#: ``endpoint_type`` values.
ENDPOINT_BROKERS = 1
ENDPOINT_CONTROLLERS = 2
#: Kafka's default for ``cluster_authorized_operations`` (-2147483648).
AUTHORIZED_OPERATIONS_OMITTED = -(1 << 31)


@message(api_key=60, kind="request", valid="0-2", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeClusterRequest(Struct):
    include_cluster_authorized_operations: bool = proto(BOOL, "0+")
    endpoint_type: int = proto(INT8, "1+", default=ENDPOINT_BROKERS)
    include_fenced_brokers: bool = proto(BOOL, "2+")


@dataclass(frozen=True, slots=True)
class DescribeClusterBroker(Struct):
    broker_id: int = proto(INT32, "0+")
    host: str = proto(STRING, "0+")
    port: int = proto(INT32, "0+")
    rack: str | None = proto(STRING, "0+", nullable="0+", default=None)
    is_fenced: bool = proto(BOOL, "2+")


@message(api_key=60, kind="response", valid="0-2", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeClusterResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)
    endpoint_type: int = proto(INT8, "1+", default=ENDPOINT_BROKERS)
    cluster_id: str = proto(STRING, "0+")
    controller_id: int = proto(INT32, "0+", default=-1)
    brokers: tuple[DescribeClusterBroker, ...] = proto(array(DescribeClusterBroker), "0+")
    cluster_authorized_operations: int = proto(INT32, "0+", default=AUTHORIZED_OPERATIONS_OMITTED)
