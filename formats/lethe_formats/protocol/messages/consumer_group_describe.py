"""ConsumerGroupDescribe (key 69, KIP-848), versions 0-1, flexible 0+.

What Kafka 4.0's admin client (``describeConsumerGroups``, so
``kafka-consumer-groups.sh --describe``) sends first; it falls back to
DescribeGroups (key 15) for a group this API answers GROUP_ID_NOT_FOUND::

    request:  group_ids [string] | include_authorized_operations bool
    response: throttle_time_ms int32
              | groups [error_code int16 | error_message string? | group_id
                        | group_state | group_epoch int32 | assignment_epoch int32
                        | assignor_name
                        | members [member_id | instance_id string? | rack_id string?
                                   | member_epoch int32 | client_id | client_host
                                   | subscribed_topic_names [string]
                                   | subscribed_topic_regex string?
                                   | assignment | target_assignment
                                   | member_type int8 (v1+, -1 unknown, 0 classic, 1 consumer)]
                        | authorized_operations int32 (default INT32_MIN)]

    assignment: topic_partitions [topic_id uuid | topic_name | partitions [int32]]

Version 1 adds ``member_type`` (KIP-1099); the request is the same in both.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
    INT8,
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
    "MEMBER_TYPE_CLASSIC",
    "MEMBER_TYPE_CONSUMER",
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "DescribedConsumerGroup",
    "DescribedConsumerGroupMember",
    "DescribedTopicPartitions",
    "MemberAssignment",
]

MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1
_OMITTED = -2147483648


@message(api_key=69, kind="request", valid="0-1", flexible="0+")
@dataclass(frozen=True, slots=True)
class ConsumerGroupDescribeRequest(Struct):
    group_ids: tuple[str, ...] = proto(array(STRING), "0+")
    include_authorized_operations: bool = proto(BOOL, "0+")


@dataclass(frozen=True, slots=True)
class DescribedTopicPartitions(Struct):
    topic_id: uuid.UUID = proto(UUID, "0+", default=ZERO_UUID)
    topic_name: str = proto(STRING, "0+")
    partitions: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class MemberAssignment(Struct):
    topic_partitions: tuple[DescribedTopicPartitions, ...] = proto(
        array(DescribedTopicPartitions), "0+"
    )


@dataclass(frozen=True, slots=True)
class DescribedConsumerGroupMember(Struct):
    member_id: str = proto(STRING, "0+")
    instance_id: str | None = proto(STRING, "0+", nullable="0+", default=None)
    rack_id: str | None = proto(STRING, "0+", nullable="0+", default=None)
    member_epoch: int = proto(INT32, "0+")
    client_id: str = proto(STRING, "0+")
    client_host: str = proto(STRING, "0+")
    subscribed_topic_names: tuple[str, ...] = proto(array(STRING), "0+")
    subscribed_topic_regex: str | None = proto(STRING, "0+", nullable="0+", default=None)
    assignment: MemberAssignment = proto(MemberAssignment, "0+")
    target_assignment: MemberAssignment = proto(MemberAssignment, "0+")
    member_type: int = proto(INT8, "1+", default=-1, ignorable=True)


@dataclass(frozen=True, slots=True)
class DescribedConsumerGroup(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)
    group_id: str = proto(STRING, "0+")
    group_state: str = proto(STRING, "0+")
    group_epoch: int = proto(INT32, "0+")
    assignment_epoch: int = proto(INT32, "0+")
    assignor_name: str = proto(STRING, "0+")
    members: tuple[DescribedConsumerGroupMember, ...] = proto(
        array(DescribedConsumerGroupMember), "0+"
    )
    authorized_operations: int = proto(INT32, "0+", default=_OMITTED)


@message(api_key=69, kind="response", valid="0-1", flexible="0+")
@dataclass(frozen=True, slots=True)
class ConsumerGroupDescribeResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    groups: tuple[DescribedConsumerGroup, ...] = proto(array(DescribedConsumerGroup), "0+")
