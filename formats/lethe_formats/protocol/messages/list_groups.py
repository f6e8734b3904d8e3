"""ListGroups (key 16), versions 0-5, flexible 3+.

Every group the broker coordinates, optionally filtered::

    request:  states_filter [string] (v4+) | types_filter [string] (v5+)
    response: throttle_time_ms int32 (v1+) | error_code int16
              | groups [group_id, protocol_type, group_state (v4+), group_type (v5+)]

Empty filters mean "all". States are the state names ("Stable", "Empty",
...); types are "classic", "consumer", "share" (KIP-848). The filters are not
ignorable (a version without them cannot filter, so encoding a filter there
raises); the response's ``group_state`` and ``group_type`` are.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto

__all__ = ["ListGroupsRequest", "ListGroupsResponse", "ListedGroup"]


@message(api_key=16, kind="request", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class ListGroupsRequest(Struct):
    states_filter: tuple[str, ...] = proto(array(STRING), "4+")
    types_filter: tuple[str, ...] = proto(array(STRING), "5+")


@dataclass(frozen=True, slots=True)
class ListedGroup(Struct):
    group_id: str = proto(STRING, "0+")
    protocol_type: str = proto(STRING, "0+")
    group_state: str = proto(STRING, "4+", ignorable=True)
    group_type: str = proto(STRING, "5+", ignorable=True)


@message(api_key=16, kind="response", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class ListGroupsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    error_code: int = proto(INT16, "0+")
    groups: tuple[ListedGroup, ...] = proto(array(ListedGroup), "0+")
