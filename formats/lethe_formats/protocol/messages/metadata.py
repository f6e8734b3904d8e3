"""Metadata (key 3), versions 0-13, flexible 9+.

Request: ``topics`` (null = all topics from v1; in v0 an empty array means
all), each ``[topic_id uuid (v10+), name (nullable v10+)]``;
``allow_auto_topic_creation`` (v4+, default true);
``include_cluster_authorized_operations`` (v8-10);
``include_topic_authorized_operations`` (v8+).

Response: ``throttle_time_ms`` (v3+), ``brokers [node_id, host, port, rack
(v1+, nullable)]``, ``cluster_id`` (v2+, nullable), ``controller_id`` (v1+,
-1), ``topics [error_code, name (nullable v12+), topic_id (v10+), is_internal
(v1+), partitions [error_code, partition_index, leader_id, leader_epoch (v7+),
replica_nodes, isr_nodes, offline_replicas (v5+), mode (tag 10694, v9+)],
topic_authorized_operations
(v8+)]``, ``cluster_authorized_operations`` (v8-10), ``error_code`` (v13+).
Authorized-operations fields default to INT32_MIN ("not requested").

KIP-694 (a lethe extension, catalog KIP694-META-1): a partition's mode travels
as **tagged field 10694** (int8) in the flexible versions, written only when it
is not ReadWrite (0); ReadOnly is 1, None is -1. Kafka's own decoders skip a
tag they do not know, and a ReadWrite partition's bytes are exactly Kafka's.
Versions below 9 cannot carry it (no tagged fields): the broker reports such
partitions otherwise (LEADER_NOT_AVAILABLE, KIP694-META-2).
"""

# proto() returns a dataclasses.field; ruff cannot tell (RUF009 on non-builtin types).

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
    "AUTHORIZED_OPERATIONS_OMITTED",
    "PARTITION_MODE_TAG",
    "MetadataRequest",
    "MetadataRequestTopic",
    "MetadataResponse",
    "MetadataResponseBroker",
    "MetadataResponsePartition",
    "MetadataResponseTopic",
]

#: The tag of the KIP-694 partition mode (catalog KIP694-META-1).
PARTITION_MODE_TAG = 10694

#: Kafka's default for the authorized-operations bit fields (-2147483648).
AUTHORIZED_OPERATIONS_OMITTED = -(1 << 31)


@dataclass(frozen=True, slots=True)
class MetadataRequestTopic(Struct):
    topic_id: uuid.UUID = proto(UUID, "10+", ignorable=True)
    name: str | None = proto(STRING, "0+", nullable="10+")


@message(api_key=3, kind="request", valid="0-13", flexible="9+")
@dataclass(frozen=True, slots=True)
class MetadataRequest(Struct):
    topics: tuple[MetadataRequestTopic, ...] | None = proto(
        array(MetadataRequestTopic), "0+", nullable="1+"
    )
    allow_auto_topic_creation: bool = proto(BOOL, "4+", default=True)
    include_cluster_authorized_operations: bool = proto(BOOL, "8-10")
    include_topic_authorized_operations: bool = proto(BOOL, "8+")


@dataclass(frozen=True, slots=True)
class MetadataResponseBroker(Struct):
    node_id: int = proto(INT32, "0+")
    host: str = proto(STRING, "0+")
    port: int = proto(INT32, "0+")
    rack: str | None = proto(STRING, "1+", nullable="1+", default=None, ignorable=True)


@dataclass(frozen=True, slots=True)
class MetadataResponsePartition(Struct):
    error_code: int = proto(INT16, "0+")
    partition_index: int = proto(INT32, "0+")
    leader_id: int = proto(INT32, "0+")
    leader_epoch: int = proto(INT32, "7+", default=-1, ignorable=True)
    replica_nodes: tuple[int, ...] = proto(array(INT32), "0+")
    isr_nodes: tuple[int, ...] = proto(array(INT32), "0+")
    offline_replicas: tuple[int, ...] = proto(array(INT32), "5+", ignorable=True)
    #: KIP-694 mode: 0 ReadWrite (never written), 1 ReadOnly, -1 None.
    mode: int = proto(INT8, "9+", tag=PARTITION_MODE_TAG)


@dataclass(frozen=True, slots=True)
class MetadataResponseTopic(Struct):
    error_code: int = proto(INT16, "0+")
    name: str | None = proto(STRING, "0+", nullable="12+")
    topic_id: uuid.UUID = proto(UUID, "10+", default=ZERO_UUID, ignorable=True)
    is_internal: bool = proto(BOOL, "1+", ignorable=True)
    partitions: tuple[MetadataResponsePartition, ...] = proto(
        array(MetadataResponsePartition), "0+"
    )
    topic_authorized_operations: int = proto(INT32, "8+", default=AUTHORIZED_OPERATIONS_OMITTED)


@message(api_key=3, kind="response", valid="0-13", flexible="9+")
@dataclass(frozen=True, slots=True)
class MetadataResponse(Struct):
    throttle_time_ms: int = proto(INT32, "3+", ignorable=True)
    brokers: tuple[MetadataResponseBroker, ...] = proto(array(MetadataResponseBroker), "0+")
    cluster_id: str | None = proto(STRING, "2+", nullable="2+", default=None, ignorable=True)
    controller_id: int = proto(INT32, "1+", default=-1, ignorable=True)
    topics: tuple[MetadataResponseTopic, ...] = proto(array(MetadataResponseTopic), "0+")
    cluster_authorized_operations: int = proto(INT32, "8-10", default=AUTHORIZED_OPERATIONS_OMITTED)
    error_code: int = proto(INT16, "13+", ignorable=True)
