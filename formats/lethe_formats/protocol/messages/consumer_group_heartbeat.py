"""ConsumerGroupHeartbeat (key 68, KIP-848), versions 0-1, flexible 0+.

The one request of Kafka 4.0's consumer group protocol: a member joins (epoch
0), heartbeats (its current epoch), leaves (-1) or, as a static member, leaves
for a while (-2); the answer carries its epoch and, when it changed, the
partitions it may consume now::

    request:  group_id | member_id | member_epoch int32
              | instance_id string? | rack_id string?
              | rebalance_timeout_ms int32 (-1: unchanged)
              | subscribed_topic_names [string]? (null: unchanged)
              | subscribed_topic_regex string? (v1+, null: unchanged)
              | server_assignor string? | topic_partitions [topic_id uuid, partitions [int32]]?
    response: throttle_time_ms int32 | error_code int16 | error_message string?
              | member_id string? | member_epoch int32 | heartbeat_interval_ms int32
              | assignment {topic_partitions [topic_id uuid, partitions [int32]]}?

Version 1 adds the regex and makes the client generate its member id (KIP-1082).
``null`` means "unchanged since the last heartbeat" for every optional field,
so a steady member sends only the group, its id and epoch.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    INT16,
    INT32,
    STRING,
    UUID,
    ZERO_UUID,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "ConsumerGroupHeartbeatAssignment",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "HeartbeatTopicPartitions",
]

#: ``member_epoch`` of a member leaving the group for good.
LEAVE_GROUP_MEMBER_EPOCH = -1
#: ``member_epoch`` of a static member leaving for a while (it keeps its partitions).
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@dataclass(frozen=True, slots=True)
class HeartbeatTopicPartitions(Struct):
    """Partitions of one topic, by topic id (owned in the request, assigned in the response)."""

    topic_id: uuid.UUID = proto(UUID, "0+", default=ZERO_UUID)
    partitions: tuple[int, ...] = proto(array(INT32), "0+")


@message(api_key=68, kind="request", valid="0-1", flexible="0+")
@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatRequest(Struct):
    group_id: str = proto(STRING, "0+")
    member_id: str = proto(STRING, "0+")
    member_epoch: int = proto(INT32, "0+")
    instance_id: str | None = proto(STRING, "0+", nullable="0+", default=None)
    rack_id: str | None = proto(STRING, "0+", nullable="0+", default=None)
    rebalance_timeout_ms: int = proto(INT32, "0+", default=-1)
    subscribed_topic_names: tuple[str, ...] | None = proto(
        array(STRING), "0+", nullable="0+", default=None
    )
    subscribed_topic_regex: str | None = proto(STRING, "1+", nullable="1+", default=None)
    server_assignor: str | None = proto(STRING, "0+", nullable="0+", default=None)
    topic_partitions: tuple[HeartbeatTopicPartitions, ...] | None = proto(
        array(HeartbeatTopicPartitions), "0+", nullable="0+", default=None
    )


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatAssignment(Struct):
    topic_partitions: tuple[HeartbeatTopicPartitions, ...] = proto(
        array(HeartbeatTopicPartitions), "0+"
    )


@message(api_key=68, kind="response", valid="0-1", flexible="0+")
@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)
    member_id: str | None = proto(STRING, "0+", nullable="0+", default=None)
    member_epoch: int = proto(INT32, "0+")
    heartbeat_interval_ms: int = proto(INT32, "0+")
    assignment: ConsumerGroupHeartbeatAssignment | None = proto(
        ConsumerGroupHeartbeatAssignment, "0+", nullable="0+", default=None
    )
