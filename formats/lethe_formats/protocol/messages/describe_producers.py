"""DescribeProducers (key 61, KIP-664), version 0, flexible 0+.

Request::

    topics [name string, partition_indexes [int32]]

Response::

    throttle_time_ms  int32
    topics [name string, partitions [partition_index int32, error_code int16,
            error_message string (nullable, default null),
            active_producers [producer_id int64, producer_epoch int32,
                              last_sequence int32 (default -1), last_timestamp int64
                              (default -1), coordinator_epoch int32,
                              current_txn_start_offset int64 (default -1)]]]

``kafka-transactions.sh describe-producers`` prints the active producers of
one partition: the partition's producer state (what its ``.snapshot`` files
hold), so an operator can find a producer whose open transaction holds the
last stable offset back.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, array, message, proto

__all__ = [
    "DescribeProducersPartition",
    "DescribeProducersRequest",
    "DescribeProducersRequestTopic",
    "DescribeProducersResponse",
    "DescribeProducersTopic",
    "ProducerState",
]


@dataclass(frozen=True, slots=True)
class DescribeProducersRequestTopic(Struct):
    name: str = proto(STRING, "0+")
    partition_indexes: tuple[int, ...] = proto(array(INT32), "0+")


@message(api_key=61, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeProducersRequest(Struct):
    topics: tuple[DescribeProducersRequestTopic, ...] = proto(
        array(DescribeProducersRequestTopic), "0+"
    )


@dataclass(frozen=True, slots=True)
class ProducerState(Struct):
    producer_id: int = proto(INT64, "0+")
    producer_epoch: int = proto(INT32, "0+")
    last_sequence: int = proto(INT32, "0+", default=-1)
    last_timestamp: int = proto(INT64, "0+", default=-1)
    coordinator_epoch: int = proto(INT32, "0+")
    current_txn_start_offset: int = proto(INT64, "0+", default=-1)


@dataclass(frozen=True, slots=True)
class DescribeProducersPartition(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)
    active_producers: tuple[ProducerState, ...] = proto(array(ProducerState), "0+")


@dataclass(frozen=True, slots=True)
class DescribeProducersTopic(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[DescribeProducersPartition, ...] = proto(
        array(DescribeProducersPartition), "0+"
    )


@message(api_key=61, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeProducersResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    topics: tuple[DescribeProducersTopic, ...] = proto(array(DescribeProducersTopic), "0+")
