"""OffsetDelete (key 47), version 0 only, never flexible (KIP-496).

An admin tool removes a group's committed offsets for some partitions; the
group must not be subscribed to their topics::

    request   group_id string
              topics [name string | partitions [partition_index int32]]
    response  error_code int16 | throttle_time_ms int32
              topics [name string | partitions [partition_index int32, error_code int16]]

The top-level error is about the group (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP,
NOT_COORDINATOR, INVALID_GROUP_ID); a group-level failure answers no topics.
Per partition: NONE, GROUP_SUBSCRIBED_TO_TOPIC, UNKNOWN_TOPIC_OR_PARTITION.
Note the response's unusual order: the error code comes before the throttle time.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "OffsetDeleteRequest",
    "OffsetDeleteRequestPartition",
    "OffsetDeleteRequestTopic",
    "OffsetDeleteResponse",
    "OffsetDeleteResponsePartition",
    "OffsetDeleteResponseTopic",
]


@dataclass(frozen=True, slots=True)
class OffsetDeleteRequestPartition(Struct):
    partition_index: int = proto(INT32, "0+")


@dataclass(frozen=True, slots=True)
class OffsetDeleteRequestTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[OffsetDeleteRequestPartition, ...] = proto(
        array(OffsetDeleteRequestPartition), "0+"
    )


@message(api_key=47, kind="request", valid="0", flexible="none")
@dataclass(frozen=True, slots=True)
class OffsetDeleteRequest(Struct):
    group_id: str = proto(STRING, "0+")
    topics: tuple[OffsetDeleteRequestTopic, ...] = proto(array(OffsetDeleteRequestTopic), "0+")


@dataclass(frozen=True, slots=True)
class OffsetDeleteResponsePartition(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class OffsetDeleteResponseTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[OffsetDeleteResponsePartition, ...] = proto(
        array(OffsetDeleteResponsePartition), "0+"
    )


@message(api_key=47, kind="response", valid="0", flexible="none")
@dataclass(frozen=True, slots=True)
class OffsetDeleteResponse(Struct):
    error_code: int = proto(INT16, "0+")
    throttle_time_ms: int = proto(INT32, "0+")
    topics: tuple[OffsetDeleteResponseTopic, ...] = proto(array(OffsetDeleteResponseTopic), "0+")
