"""DeleteGroups (key 42), versions 0-2, flexible 2+.

An admin tool deletes whole groups: their committed offsets and their group
metadata. Only a group without members can go::

    request   groups_names [string]
    response  throttle_time_ms int32
              results [group_id string, error_code int16]

One result per named group: NONE, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP,
NOT_COORDINATOR, INVALID_GROUP_ID, GROUP_AUTHORIZATION_FAILED. Version 1 is
version 0 with Kafka's throttling-before-response semantics (KIP-219); v2 is
the flexible encoding.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto

__all__ = ["DeletableGroupResult", "DeleteGroupsRequest", "DeleteGroupsResponse"]


@message(api_key=42, kind="request", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class DeleteGroupsRequest(Struct):
    groups_names: tuple[str, ...] = proto(array(STRING), "0+")


@dataclass(frozen=True, slots=True)
class DeletableGroupResult(Struct):
    group_id: str = proto(STRING, "0+")
    error_code: int = proto(INT16, "0+")


@message(api_key=42, kind="response", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class DeleteGroupsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    results: tuple[DeletableGroupResult, ...] = proto(array(DeletableGroupResult), "0+")
