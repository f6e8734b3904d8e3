"""DescribeTopicPartitions (key 75, KIP-966), version 0, flexible 0+.

Request::

    topics                    [name string] (empty: every topic)
    response_partition_limit  int32 (default 2000)
    cursor                    [topic_name string, partition_index int32],
                              a nullable struct (default null): where to start

Response::

    throttle_time_ms  int32
    topics [error_code int16, name string (nullable), topic_id uuid,
            is_internal bool, partitions [error_code int16, partition_index int32,
            leader_id int32, leader_epoch int32 (default -1), replica_nodes [int32],
            isr_nodes [int32], eligible_leader_replicas [int32] (nullable),
            last_known_elr [int32] (nullable), offline_replicas [int32]],
            topic_authorized_operations int32 (default INT32_MIN)]
    next_cursor       the cursor struct, nullable (default null: nothing left)

What Kafka 4.0's admin client (``describeTopics``, so ``kafka-topics.sh
--describe``) sends first; it falls back to Metadata only when the broker does
not list this key, and then prints the ELR columns as ``N/A``. The ``cursor``
fields are one of the few nullable structs in Kafka's protocol: a marker byte
(-1 null, 1 present) precedes them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
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
    "DEFAULT_PARTITION_LIMIT",
    "DescribeTopicPartitionsCursor",
    "DescribeTopicPartitionsPartition",
    "DescribeTopicPartitionsRequest",
    "DescribeTopicPartitionsRequestTopic",
    "DescribeTopicPartitionsResponse",
    "DescribeTopicPartitionsTopic",
]

#: ``response_partition_limit`` when the client does not set one.
DEFAULT_PARTITION_LIMIT = 2000
_OMITTED = -2147483648


@dataclass(frozen=True, slots=True)
class DescribeTopicPartitionsRequestTopic(Struct):
    name: str = proto(STRING, "0+")


@dataclass(frozen=True, slots=True)
class DescribeTopicPartitionsCursor(Struct):
    """A (topic, first partition) position: the request's and the response's."""

    topic_name: str = proto(STRING, "0+")
    partition_index: int = proto(INT32, "0+")


@message(api_key=75, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeTopicPartitionsRequest(Struct):
    topics: tuple[DescribeTopicPartitionsRequestTopic, ...] = proto(
        array(DescribeTopicPartitionsRequestTopic), "0+"
    )
    response_partition_limit: int = proto(INT32, "0+", default=DEFAULT_PARTITION_LIMIT)
    cursor: DescribeTopicPartitionsCursor | None = proto(
        DescribeTopicPartitionsCursor, "0+", nullable="0+", default=None
    )


@dataclass(frozen=True, slots=True)
class DescribeTopicPartitionsPartition(Struct):
    error_code: int = proto(INT16, "0+")
    partition_index: int = proto(INT32, "0+")
    leader_id: int = proto(INT32, "0+")
    leader_epoch: int = proto(INT32, "0+", default=-1, ignorable=True)
    replica_nodes: tuple[int, ...] = proto(array(INT32), "0+")
    isr_nodes: tuple[int, ...] = proto(array(INT32), "0+")
    eligible_leader_replicas: tuple[int, ...] | None = proto(
        array(INT32), "0+", nullable="0+", default=None
    )
    last_known_elr: tuple[int, ...] | None = proto(array(INT32), "0+", nullable="0+", default=None)
    offline_replicas: tuple[int, ...] = proto(array(INT32), "0+", ignorable=True)


@dataclass(frozen=True, slots=True)
class DescribeTopicPartitionsTopic(Struct):
    error_code: int = proto(INT16, "0+")
    name: str | None = proto(STRING, "0+", nullable="0+")
    topic_id: uuid.UUID = proto(UUID, "0+", default=ZERO_UUID, ignorable=True)
    is_internal: bool = proto(BOOL, "0+", ignorable=True)
    partitions: tuple[DescribeTopicPartitionsPartition, ...] = proto(
        array(DescribeTopicPartitionsPartition), "0+"
    )
    topic_authorized_operations: int = proto(INT32, "0+", default=_OMITTED)


@message(api_key=75, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeTopicPartitionsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+", ignorable=True)
    topics: tuple[DescribeTopicPartitionsTopic, ...] = proto(
        array(DescribeTopicPartitionsTopic), "0+"
    )
    next_cursor: DescribeTopicPartitionsCursor | None = proto(
        DescribeTopicPartitionsCursor, "0+", nullable="0+", default=None
    )
