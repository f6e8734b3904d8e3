"""LeaveGroup (key 13), versions 0-5, flexible 4+.

A member (v0-2) or a batch of members (v3+, KIP-345: static members are named
by group instance id) leaves a classic group, which triggers a rebalance::

    request  v0-2: group_id | member_id
             v3+:  group_id | members [member_id, group_instance_id nullable,
                                       reason nullable (v5+)]
    response v0-2: throttle_time_ms int32 (v1+) | error_code int16
             v3+:  throttle_time_ms | error_code
                   | members [member_id, group_instance_id nullable, error_code]

The top-level error is about the group (e.g. NOT_COORDINATOR); per-member
errors (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) are in ``members`` from v3.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto

__all__ = [
    "LeaveGroupMemberIdentity",
    "LeaveGroupMemberResponse",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
]


@dataclass(frozen=True, slots=True)
class LeaveGroupMemberIdentity(Struct):
    member_id: str = proto(STRING, "3+")
    group_instance_id: str | None = proto(STRING, "3+", nullable="3+", default=None)
    reason: str | None = proto(STRING, "5+", nullable="5+", default=None, ignorable=True)


@message(api_key=13, kind="request", valid="0-5", flexible="4+")
@dataclass(frozen=True, slots=True)
class LeaveGroupRequest(Struct):
    group_id: str = proto(STRING, "0+")
    member_id: str = proto(STRING, "0-2")
    members: tuple[LeaveGroupMemberIdentity, ...] = proto(array(LeaveGroupMemberIdentity), "3+")


@dataclass(frozen=True, slots=True)
class LeaveGroupMemberResponse(Struct):
    member_id: str = proto(STRING, "3+")
    group_instance_id: str | None = proto(STRING, "3+", nullable="3+")
    error_code: int = proto(INT16, "3+")


@message(api_key=13, kind="response", valid="0-5", flexible="4+")
@dataclass(frozen=True, slots=True)
class LeaveGroupResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    members: tuple[LeaveGroupMemberResponse, ...] = proto(array(LeaveGroupMemberResponse), "3+")
