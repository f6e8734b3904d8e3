"""DescribeGroups (key 15), versions 0-6, flexible 5+.

State and members of classic groups, by id::

    request:  groups [string] | include_authorized_operations bool (v3+)
    response: throttle_time_ms int32 (v1+)
              | groups [error_code int16, error_message nullable (v6+), group_id,
                        group_state, protocol_type, protocol_data,
                        members [member_id, group_instance_id nullable (v4+),
                                 client_id, client_host, member_metadata bytes,
                                 member_assignment bytes],
                        authorized_operations int32 (v3+)]

``group_state`` is the state's name ("Stable", "Empty", "Dead", ...);
``protocol_data`` (the chosen assignor) and the members' metadata and
assignment are filled only in the Stable state. An unknown group is described
as Dead with no members, except in v6 (KIP-1043), which answers
GROUP_ID_NOT_FOUND (69) with an error message. ``authorized_operations`` is
INT32_MIN unless requested. ``include_authorized_operations`` and
``error_message`` are not ignorable.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
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
    "DescribeGroupsRequest",
    "DescribeGroupsResponse",
    "DescribedGroup",
    "DescribedGroupMember",
]


@message(api_key=15, kind="request", valid="0-6", flexible="5+")
@dataclass(frozen=True, slots=True)
class DescribeGroupsRequest(Struct):
    groups: tuple[str, ...] = proto(array(STRING), "0+")
    include_authorized_operations: bool = proto(BOOL, "3+")


@dataclass(frozen=True, slots=True)
class DescribedGroupMember(Struct):
    member_id: str = proto(STRING, "0+")
    group_instance_id: str | None = proto(STRING, "4+", nullable="4+", default=None, ignorable=True)
    client_id: str = proto(STRING, "0+")
    client_host: str = proto(STRING, "0+")
    member_metadata: bytes = proto(BYTES, "0+")
    member_assignment: bytes = proto(BYTES, "0+")


@dataclass(frozen=True, slots=True)
class DescribedGroup(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "6+", nullable="6+", default=None)
    group_id: str = proto(STRING, "0+")
    group_state: str = proto(STRING, "0+")
    protocol_type: str = proto(STRING, "0+")
    protocol_data: str = proto(STRING, "0+")
    members: tuple[DescribedGroupMember, ...] = proto(array(DescribedGroupMember), "0+")
    authorized_operations: int = proto(INT32, "3+", default=AUTHORIZED_OPERATIONS_OMITTED)


@message(api_key=15, kind="response", valid="0-6", flexible="5+")
@dataclass(frozen=True, slots=True)
class DescribeGroupsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    groups: tuple[DescribedGroup, ...] = proto(array(DescribedGroup), "0+")
