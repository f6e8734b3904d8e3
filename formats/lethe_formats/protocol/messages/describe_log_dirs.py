"""DescribeLogDirs (key 35, KIP-113), versions 1-4 (Kafka 4.0 dropped v0), flexible 2+.

Request::

    topics  [topic string, partitions [int32]], nullable (null: every partition)

Response::

    throttle_time_ms  int32
    error_code        int16 (v3+: CLUSTER_AUTHORIZATION_FAILED without DESCRIBE on the cluster)
    results [error_code int16, log_dir string,
             topics [name string, partitions [partition_index int32,
                     partition_size int64, offset_lag int64, is_future_key bool]],
             total_bytes int64 (v4+, default -1), usable_bytes int64 (v4+, default -1)]

What ``kafka-log-dirs.sh --describe`` prints as JSON: per log dir, each replica's
size in bytes (its segments' ``.log`` files, so segments a DeleteRecords let
retention delete show as freed) and its offset lag.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "DescribeLogDirsPartition",
    "DescribeLogDirsRequest",
    "DescribeLogDirsRequestTopic",
    "DescribeLogDirsResponse",
    "DescribeLogDirsResult",
    "DescribeLogDirsTopic",
]


@dataclass(frozen=True, slots=True)
class DescribeLogDirsRequestTopic(Struct):
    topic: str = proto(STRING, "0+")
    partitions: tuple[int, ...] = proto(array(INT32), "0+")


@message(api_key=35, kind="request", valid="1-4", flexible="2+")
@dataclass(frozen=True, slots=True)
class DescribeLogDirsRequest(Struct):
    topics: tuple[DescribeLogDirsRequestTopic, ...] | None = proto(
        array(DescribeLogDirsRequestTopic), "0+", nullable="0+"
    )


@dataclass(frozen=True, slots=True)
class DescribeLogDirsPartition(Struct):
    partition_index: int = proto(INT32, "0+")
    partition_size: int = proto(INT64, "0+")
    offset_lag: int = proto(INT64, "0+")
    is_future_key: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class DescribeLogDirsTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[DescribeLogDirsPartition, ...] = proto(array(DescribeLogDirsPartition), "0+")


@dataclass(frozen=True, slots=True)
class DescribeLogDirsResult(Struct):
    error_code: int = proto(INT16, "0+")
    log_dir: str = proto(STRING, "0+")
    topics: tuple[DescribeLogDirsTopic, ...] = proto(array(DescribeLogDirsTopic), "0+")
    total_bytes: int = proto(INT64, "4+", default=-1, ignorable=True)
    usable_bytes: int = proto(INT64, "4+", default=-1, ignorable=True)


@message(api_key=35, kind="response", valid="1-4", flexible="2+")
@dataclass(frozen=True, slots=True)
class DescribeLogDirsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "3+", ignorable=True)
    results: tuple[DescribeLogDirsResult, ...] = proto(array(DescribeLogDirsResult), "0+")
