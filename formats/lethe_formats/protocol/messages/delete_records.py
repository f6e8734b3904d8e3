"""DeleteRecords (key 21, KIP-107), versions 0-2, flexible 2+.

Request: ``topics [name, partitions [partition_index int32, offset int64]]``,
``timeout_ms int32``. Offset is the deletion offset: records below it go; -1
means the high watermark. Response: ``throttle_time_ms int32``, ``topics
[name, partitions [partition_index int32, low_watermark int64, error_code
int16]]``; on error the low watermark is -1. v1 is v0 (the broker answers
before throttling); v2 is the first flexible version.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, array, message, proto

__all__ = [
    "HIGH_WATERMARK",
    "INVALID_LOW_WATERMARK",
    "DeleteRecordsPartition",
    "DeleteRecordsPartitionResult",
    "DeleteRecordsRequest",
    "DeleteRecordsResponse",
    "DeleteRecordsTopic",
    "DeleteRecordsTopicResult",
]

#: ``offset`` value meaning "delete up to the high watermark".
HIGH_WATERMARK = -1
#: ``low_watermark`` of a partition that failed.
INVALID_LOW_WATERMARK = -1


@dataclass(frozen=True, slots=True)
class DeleteRecordsPartition(Struct):
    partition_index: int = proto(INT32, "0+")
    offset: int = proto(INT64, "0+")


@dataclass(frozen=True, slots=True)
class DeleteRecordsTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[DeleteRecordsPartition, ...] = proto(array(DeleteRecordsPartition), "0+")


@message(api_key=21, kind="request", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class DeleteRecordsRequest(Struct):
    topics: tuple[DeleteRecordsTopic, ...] = proto(array(DeleteRecordsTopic), "0+")
    timeout_ms: int = proto(INT32, "0+")


@dataclass(frozen=True, slots=True)
class DeleteRecordsPartitionResult(Struct):
    partition_index: int = proto(INT32, "0+")
    low_watermark: int = proto(INT64, "0+")
    error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class DeleteRecordsTopicResult(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[DeleteRecordsPartitionResult, ...] = proto(
        array(DeleteRecordsPartitionResult), "0+"
    )


@message(api_key=21, kind="response", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class DeleteRecordsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    topics: tuple[DeleteRecordsTopicResult, ...] = proto(array(DeleteRecordsTopicResult), "0+")
