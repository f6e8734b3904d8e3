"""CreatePartitions (key 37), versions 0-3, flexible 2+.

Request::

    topics [
        name         string
        count        int32                       the new total partition count
        assignments  [broker_ids [int32]], nullable: one entry per new partition,
                                                 null for automatic placement
    ]
    timeout_ms     int32
    validate_only  bool

Response::

    throttle_time_ms  int32
    results [name string, error_code int16, error_message string (nullable, default null)]

v1 is v0 (the broker answers before throttling); v3 may answer
THROTTLING_QUOTA_EXCEEDED (KIP-599).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import BOOL, INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "CreatePartitionsAssignment",
    "CreatePartitionsRequest",
    "CreatePartitionsResponse",
    "CreatePartitionsTopic",
    "CreatePartitionsTopicResult",
]


@dataclass(frozen=True, slots=True)
class CreatePartitionsAssignment(Struct):
    broker_ids: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class CreatePartitionsTopic(Struct):
    name: str = proto(STRING, "0+")
    count: int = proto(INT32, "0+")
    assignments: tuple[CreatePartitionsAssignment, ...] | None = proto(
        array(CreatePartitionsAssignment), "0+", nullable="0+"
    )


@message(api_key=37, kind="request", valid="0-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class CreatePartitionsRequest(Struct):
    topics: tuple[CreatePartitionsTopic, ...] = proto(array(CreatePartitionsTopic), "0+")
    timeout_ms: int = proto(INT32, "0+")
    validate_only: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class CreatePartitionsTopicResult(Struct):
    name: str = proto(STRING, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)


@message(api_key=37, kind="response", valid="0-3", flexible="2+")
@dataclass(frozen=True, slots=True)
class CreatePartitionsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    results: tuple[CreatePartitionsTopicResult, ...] = proto(
        array(CreatePartitionsTopicResult), "0+"
    )
