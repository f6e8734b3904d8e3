"""DeleteTopics (key 20), versions 1-6 (Kafka 4.0 dropped v0), flexible 4+.

Request::

    topics [name string (nullable), topic_id uuid]   v6+: by name or by id
    topic_names [string]                             v0-5: by name only
    timeout_ms  int32

Response::

    throttle_time_ms  int32 (v1+)
    responses [
        name           string (nullable v6+: a topic named by id that is unknown)
        topic_id       uuid   (v6+)
        error_code     int16
        error_message  string, nullable (v5+, default null)
    ]

v1-3 are v0 plus the throttle time and error-code semantics (TOPIC_DELETION_DISABLED
from v3); v5 may answer THROTTLING_QUOTA_EXCEEDED (KIP-599).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, UUID, Struct, array, message, proto

__all__ = [
    "DeletableTopicResult",
    "DeleteTopicState",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
]


@dataclass(frozen=True, slots=True)
class DeleteTopicState(Struct):
    name: str | None = proto(STRING, "6+", nullable="6+", default=None)
    topic_id: uuid.UUID = proto(UUID, "6+")


@message(api_key=20, kind="request", valid="1-6", flexible="4+")
@dataclass(frozen=True, slots=True)
class DeleteTopicsRequest(Struct):
    topics: tuple[DeleteTopicState, ...] = proto(array(DeleteTopicState), "6+")
    topic_names: tuple[str, ...] = proto(array(STRING), "0-5", ignorable=True)
    timeout_ms: int = proto(INT32, "0+")


@dataclass(frozen=True, slots=True)
class DeletableTopicResult(Struct):
    name: str | None = proto(STRING, "0+", nullable="6+")
    topic_id: uuid.UUID = proto(UUID, "6+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)


@message(api_key=20, kind="response", valid="1-6", flexible="4+")
@dataclass(frozen=True, slots=True)
class DeleteTopicsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    responses: tuple[DeletableTopicResult, ...] = proto(array(DeletableTopicResult), "0+")
