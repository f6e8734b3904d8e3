"""Heartbeat (key 12), versions 0-4, flexible 4+.

A classic-group member proves it is alive, and learns from the error code
that a rebalance started (REBALANCE_IN_PROGRESS, 27) or that it was fenced
(UNKNOWN_MEMBER_ID 25, ILLEGAL_GENERATION 22, FENCED_INSTANCE_ID 82)::

    request:  group_id | generation_id int32 | member_id
              | group_instance_id nullable (v3+)
    response: throttle_time_ms int32 (v1+) | error_code int16

v1 and v2 are v0 on the wire; v4 is v3 in the flexible encoding.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, message, proto

__all__ = ["HeartbeatRequest", "HeartbeatResponse"]


@message(api_key=12, kind="request", valid="0-4", flexible="4+")
@dataclass(frozen=True, slots=True)
class HeartbeatRequest(Struct):
    group_id: str = proto(STRING, "0+")
    generation_id: int = proto(INT32, "0+")
    member_id: str = proto(STRING, "0+")
    group_instance_id: str | None = proto(STRING, "3+", nullable="3+", default=None)


@message(api_key=12, kind="response", valid="0-4", flexible="4+")
@dataclass(frozen=True, slots=True)
class HeartbeatResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    error_code: int = proto(INT16, "0+")
