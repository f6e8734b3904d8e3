"""DeletePartitions (key 10694, a lethe extension for KIP-694), version 0, flexible 0+.

KIP-694 proposes the API without a key, with a schema its own AdminClient and
metadata record disagree with. lethe's requirement catalog
(``fixtures/requirements/kip694.json``) fixes what the KIP leaves open:

* key 10694 (10000 + the KIP number: Kafka allocates keys sequentially below
  100, so this one never collides), version 0 only, flexible from v0 (request
  header v2, response header v1), as the KIP's compact types say
  (KIP694-API-1);
* each topic carries the **new total partition count**, as the AdminClient's
  ``totalCount`` and the topic command's ``--partitions`` do (KIP694-API-2);
* each topic result carries its own error code and message, as
  CreatePartitions' results do (KIP694-API-3).

Request v0 (compact strings and arrays, a tagged-field section after every
struct)::

    timeout_ms                 int32   how long the caller waits for the mode change
    immediate_delete           bool    delete at once, whatever the delay says
    delete_partitions_delay_ms int64   keep removed partitions ReadOnly this long
    topics [
        name                   compact string
        count                  int32   the new total partition count
    ]

Response v0::

    throttle_time_ms   int32
    error_code         int16            request-level error
    error_message      compact nullable string
    responses [
        name           compact string
        error_code     int16            topic-level error
        error_message  compact nullable string
        partitions [
            partition_index  int32
            status_code      int8       the partition's mode after the request:
                                        1 ReadOnly (delayed), -1 None (deleted at once)
            error_code       int16
            error_message    compact nullable string
        ]
    ]
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
    INT8,
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
    "DELETE_PARTITIONS_API_KEY",
    "DeletePartitionsPartitionResult",
    "DeletePartitionsRequest",
    "DeletePartitionsResponse",
    "DeletePartitionsTopic",
    "DeletePartitionsTopicResult",
]

#: 10000 + 694 (catalog decision KIP694-API-1).
DELETE_PARTITIONS_API_KEY = 10694


@dataclass(frozen=True, slots=True)
class DeletePartitionsTopic(Struct):
    name: str = proto(STRING, "0+")
    count: int = proto(INT32, "0+")


@message(api_key=DELETE_PARTITIONS_API_KEY, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DeletePartitionsRequest(Struct):
    timeout_ms: int = proto(INT32, "0+", default=30000)
    immediate_delete: bool = proto(BOOL, "0+")
    delete_partitions_delay_ms: int = proto(INT64, "0+")
    topics: tuple[DeletePartitionsTopic, ...] = proto(array(DeletePartitionsTopic), "0+")


@dataclass(frozen=True, slots=True)
class DeletePartitionsPartitionResult(Struct):
    partition_index: int = proto(INT32, "0+")
    status_code: int = proto(INT8, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)


@dataclass(frozen=True, slots=True)
class DeletePartitionsTopicResult(Struct):
    name: str = proto(STRING, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)
    partitions: tuple[DeletePartitionsPartitionResult, ...] = proto(
        array(DeletePartitionsPartitionResult), "0+"
    )


@message(api_key=DELETE_PARTITIONS_API_KEY, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DeletePartitionsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+", default=None)
    responses: tuple[DeletePartitionsTopicResult, ...] = proto(
        array(DeletePartitionsTopicResult), "0+"
    )
