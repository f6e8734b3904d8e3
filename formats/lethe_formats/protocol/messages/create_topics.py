"""CreateTopics (key 19), versions 2-7 (Kafka 4.0 dropped v0-1), flexible 5+.

Request::

    topics [                          one entry per topic to create
        name                string
        num_partitions      int32     -1: broker default (v4+ also with no assignments)
        replication_factor  int16     -1: broker default
        assignments [partition_index int32, broker_ids [int32]]   manual placement
        configs [name string, value string (nullable)]
    ]
    timeout_ms       int32  (default 60000)
    validate_only    bool   (v1+; not ignorable: a broker must not create by mistake)

Response::

    throttle_time_ms  int32 (v2+)
    topics [
        name                    string
        topic_id                uuid   (v7+)
        error_code              int16
        error_message           string, nullable (v1+)
        topic_config_error_code int16  (tag 0, v5+: configs could not be described)
        num_partitions          int32  (v5+, -1 when unknown)
        replication_factor      int16  (v5+, -1 when unknown)
        configs [name, value (nullable), read_only, config_source int8 (-1),
                 is_sensitive]  (v5+, nullable: the created topic's configs, KIP-525)
    ]

v6 may answer THROTTLING_QUOTA_EXCEEDED (KIP-599); v7 adds the topic id.
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
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "USE_BROKER_DEFAULT",
    "CreatableReplicaAssignment",
    "CreatableTopic",
    "CreatableTopicConfig",
    "CreatableTopicConfigs",
    "CreatableTopicResult",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
]

#: ``num_partitions`` / ``replication_factor`` meaning "use the broker's default".
USE_BROKER_DEFAULT = -1
#: ``timeout_ms`` when the request does not say.
DEFAULT_TIMEOUT_MS = 60_000


@dataclass(frozen=True, slots=True)
class CreatableReplicaAssignment(Struct):
    partition_index: int = proto(INT32, "0+")
    broker_ids: tuple[int, ...] = proto(array(INT32), "0+")


@dataclass(frozen=True, slots=True)
class CreatableTopicConfig(Struct):
    name: str = proto(STRING, "0+")
    value: str | None = proto(STRING, "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class CreatableTopic(Struct):
    name: str = proto(STRING, "0+")
    num_partitions: int = proto(INT32, "0+")
    replication_factor: int = proto(INT16, "0+")
    assignments: tuple[CreatableReplicaAssignment, ...] = proto(
        array(CreatableReplicaAssignment), "0+"
    )
    configs: tuple[CreatableTopicConfig, ...] = proto(array(CreatableTopicConfig), "0+")


@message(api_key=19, kind="request", valid="2-7", flexible="5+")
@dataclass(frozen=True, slots=True)
class CreateTopicsRequest(Struct):
    topics: tuple[CreatableTopic, ...] = proto(array(CreatableTopic), "0+")
    timeout_ms: int = proto(INT32, "0+", default=DEFAULT_TIMEOUT_MS)
    validate_only: bool = proto(BOOL, "1+")


@dataclass(frozen=True, slots=True)
class CreatableTopicConfigs(Struct):
    name: str = proto(STRING, "5+")
    value: str | None = proto(STRING, "5+", nullable="5+")
    read_only: bool = proto(BOOL, "5+")
    config_source: int = proto(INT8, "5+", default=-1, ignorable=True)
    is_sensitive: bool = proto(BOOL, "5+")


@dataclass(frozen=True, slots=True)
class CreatableTopicResult(Struct):
    name: str = proto(STRING, "0+")
    topic_id: uuid.UUID = proto(UUID, "7+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "1+", nullable="0+", ignorable=True)
    topic_config_error_code: int = proto(INT16, "5+", tag=0, ignorable=True)
    num_partitions: int = proto(INT32, "5+", default=-1, ignorable=True)
    replication_factor: int = proto(INT16, "5+", default=-1, ignorable=True)
    configs: tuple[CreatableTopicConfigs, ...] | None = proto(
        array(CreatableTopicConfigs), "5+", nullable="5+", ignorable=True
    )


@message(api_key=19, kind="response", valid="2-7", flexible="5+")
@dataclass(frozen=True, slots=True)
class CreateTopicsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "2+", ignorable=True)
    topics: tuple[CreatableTopicResult, ...] = proto(array(CreatableTopicResult), "0+")
