"""WriteTxnMarkers (key 27, KIP-98), version 1 only (Kafka 4.0 dropped v0), flexible 1+.

Inter-broker: a transaction coordinator asks the leaders of a transaction's
partitions to append the COMMIT or ABORT control batch.

Request::

    markers [producer_id int64, producer_epoch int16,
             transaction_result bool (true: commit),
             topics [name string, partition_indexes [int32]],
             coordinator_epoch int32]

Response::

    markers [producer_id int64,
             topics [name string, partitions [partition_index int32, error_code int16]]]

``coordinator_epoch`` is the epoch of the coordinator's ``__transaction_state``
partition: a leader refuses a marker from an older coordinator
(TRANSACTION_COORDINATOR_FENCED) so a deposed coordinator cannot end a
transaction its successor already ended.
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
    "WritableTxnMarker",
    "WritableTxnMarkerPartitionResult",
    "WritableTxnMarkerResult",
    "WritableTxnMarkerTopic",
    "WritableTxnMarkerTopicResult",
    "WriteTxnMarkersRequest",
    "WriteTxnMarkersResponse",
]


@dataclass(frozen=True, slots=True)
class WritableTxnMarkerTopic(Struct):
    name: str = proto(STRING, "0+")
    partition_indexes: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class WritableTxnMarker(Struct):
    producer_id: int = proto(INT64, "0+")
    producer_epoch: int = proto(INT16, "0+")
    transaction_result: bool = proto(BOOL, "0+")
    topics: tuple[WritableTxnMarkerTopic, ...] = proto(array(WritableTxnMarkerTopic), "0+")
    coordinator_epoch: int = proto(INT32, "0+")


@message(api_key=27, kind="request", valid="1", flexible="1+")
@dataclass(frozen=True, slots=True)
class WriteTxnMarkersRequest(Struct):
    markers: tuple[WritableTxnMarker, ...] = proto(array(WritableTxnMarker), "0+")


@dataclass(frozen=True, slots=True)
class WritableTxnMarkerPartitionResult(Struct):
    partition_index: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class WritableTxnMarkerTopicResult(Struct):
    name: str = proto(STRING, "0+")
    partitions: tuple[WritableTxnMarkerPartitionResult, ...] = proto(
        array(WritableTxnMarkerPartitionResult), "0+"
    )


@dataclass(frozen=True, slots=True)
class WritableTxnMarkerResult(Struct):
    producer_id: int = proto(INT64, "0+")
    topics: tuple[WritableTxnMarkerTopicResult, ...] = proto(
        array(WritableTxnMarkerTopicResult), "0+"
    )


@message(api_key=27, kind="response", valid="1", flexible="1+")
@dataclass(frozen=True, slots=True)
class WriteTxnMarkersResponse(Struct):
    markers: tuple[WritableTxnMarkerResult, ...] = proto(array(WritableTxnMarkerResult), "0+")
