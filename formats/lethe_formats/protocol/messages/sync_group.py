"""SyncGroup (key 14), versions 0-5, flexible 4+.

The second step of the classic group protocol: the leader sends the
assignment of every member, the others send none, and each member gets its
own assignment back once the leader's has arrived::

    request:  group_id | generation_id int32 | member_id
              | group_instance_id nullable (v3+)
              | protocol_type nullable (v5+) | protocol_name nullable (v5+)
              | assignments [member_id, assignment bytes]
    response: throttle_time_ms int32 (v1+) | error_code int16
              | protocol_type nullable (v5+) | protocol_name nullable (v5+)
              | assignment bytes

From v5 (KIP-559) the client names the protocol type and name it joined
with; the broker answers INCONSISTENT_GROUP_PROTOCOL when they disagree with
the group's, and echoes both back. For a consumer group the assignment bytes
are a ConsumerProtocolAssignment (``lethe_formats.coordinator``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BYTES,
    INT16,
    INT32,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "SyncGroupRequest",
    "SyncGroupRequestAssignment",
    "SyncGroupResponse",
]


@dataclass(frozen=True, slots=True)
class SyncGroupRequestAssignment(Struct):
    member_id: str = proto(STRING, "0+")
    assignment: bytes = proto(BYTES, "0+")


@message(api_key=14, kind="request", valid="0-5", flexible="4+")
@dataclass(frozen=True, slots=True)
class SyncGroupRequest(Struct):
    group_id: str = proto(STRING, "0+")
    generation_id: int = proto(INT32, "0+")
    member_id: str = proto(STRING, "0+")
    group_instance_id: str | None = proto(STRING, "3+", nullable="3+", default=None)
    protocol_type: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)
    protocol_name: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)
    assignments: tuple[SyncGroupRequestAssignment, ...] = proto(
        array(SyncGroupRequestAssignment), "0+"
    )


@message(api_key=14, kind="response", valid="0-5", flexible="4+")
@dataclass(frozen=True, slots=True)
class SyncGroupResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    protocol_type: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)
    protocol_name: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)
    assignment: bytes = proto(BYTES, "0+")
