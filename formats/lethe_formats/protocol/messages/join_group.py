"""JoinGroup (key 11), versions 2-9 (Kafka 4.0 dropped v0-1, KIP-896), flexible 6+.

The first step of the classic group protocol: a member offers the protocols
(assignors) it supports; the coordinator picks one for the whole group, elects
a leader and hands the leader every member's metadata::

    request:  group_id | session_timeout_ms int32 | rebalance_timeout_ms int32
              | member_id | group_instance_id nullable (v5+)
              | protocol_type | protocols [name, metadata bytes]
              | reason nullable (v8+)
    response: throttle_time_ms int32 | error_code int16 | generation_id int32
              | protocol_type nullable (v7+) | protocol_name (nullable v7+)
              | leader | skip_assignment bool (v9+) | member_id
              | members [member_id, group_instance_id nullable (v5+), metadata bytes]

From v4 a member joining with an empty member id is answered
MEMBER_ID_REQUIRED (79) with its new member id, and must join again with it.
``members`` is filled only in the leader's response. ``skip_assignment`` (v9)
tells a leader that the coordinator assigns by itself; it is not ignorable.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
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
    "JoinGroupRequest",
    "JoinGroupRequestProtocol",
    "JoinGroupResponse",
    "JoinGroupResponseMember",
]


@dataclass(frozen=True, slots=True)
class JoinGroupRequestProtocol(Struct):
    name: str = proto(STRING, "0+")
    metadata: bytes = proto(BYTES, "0+")


@message(api_key=11, kind="request", valid="2-9", flexible="6+")
@dataclass(frozen=True, slots=True)
class JoinGroupRequest(Struct):
    group_id: str = proto(STRING, "0+")
    session_timeout_ms: int = proto(INT32, "0+")
    # -1 is only a placeholder: without it, the session timeout applies.
    rebalance_timeout_ms: int = proto(INT32, "1+", default=-1, ignorable=True)
    member_id: str = proto(STRING, "0+")
    group_instance_id: str | None = proto(STRING, "5+", nullable="5+", default=None)
    protocol_type: str = proto(STRING, "0+")
    protocols: tuple[JoinGroupRequestProtocol, ...] = proto(array(JoinGroupRequestProtocol), "0+")
    reason: str | None = proto(STRING, "8+", nullable="8+", default=None, ignorable=True)


@dataclass(frozen=True, slots=True)
class JoinGroupResponseMember(Struct):
    member_id: str = proto(STRING, "0+")
    group_instance_id: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)
    metadata: bytes = proto(BYTES, "0+")


@message(api_key=11, kind="response", valid="2-9", flexible="6+")
@dataclass(frozen=True, slots=True)
class JoinGroupResponse(Struct):
    throttle_time_ms: int = proto(INT32, "2+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    generation_id: int = proto(INT32, "0+", default=-1)
    protocol_type: str | None = proto(STRING, "7+", nullable="7+", default=None, ignorable=True)
    protocol_name: str | None = proto(STRING, "0+", nullable="7+")
    leader: str = proto(STRING, "0+")
    skip_assignment: bool = proto(BOOL, "9+")
    member_id: str = proto(STRING, "0+")
    members: tuple[JoinGroupResponseMember, ...] = proto(array(JoinGroupResponseMember), "0+")
