"""FindCoordinator (key 10), versions 0-6, flexible 3+.

Which broker coordinates a group (or a transactional id, or a share group).
Two shapes, split at v4 (KIP-699, batching)::

    request  v0-3:  key string | key_type int8 (v1+)
             v4+:   key_type int8 | coordinator_keys [string]
    response v0-3:  throttle_time_ms int32 (v1+) | error_code int16
                    | error_message nullable string (v1+) | node_id int32
                    | host string | port int32
             v4+:   throttle_time_ms int32 | coordinators [key, node_id, host,
                    port, error_code, error_message nullable]

``key_type`` is 0 group, 1 transaction, 2 share group (v6+). It is not
ignorable: a v0 request cannot ask for a transaction coordinator, and encoding
one raises rather than silently asking for a group. v5 only allows the
TRANSACTION_ABORTABLE error; v6 allows key type 2. Until the coordinating
partition of ``__consumer_offsets`` exists and is loaded, the broker answers
COORDINATOR_NOT_AVAILABLE (15) and clients retry. Errors in v0-3 carry host ""
and node_id/port -1.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "KEY_TYPE_GROUP",
    "KEY_TYPE_SHARE",
    "KEY_TYPE_TRANSACTION",
    "Coordinator",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
]

#: ``key_type``: the key is a consumer (classic or KIP-848) group id.
KEY_TYPE_GROUP = 0
#: ``key_type``: the key is a transactional id.
KEY_TYPE_TRANSACTION = 1
#: ``key_type``: the key is a share group id (v6+).
KEY_TYPE_SHARE = 2


@message(api_key=10, kind="request", valid="0-6", flexible="3+")
@dataclass(frozen=True, slots=True)
class FindCoordinatorRequest(Struct):
    key: str = proto(STRING, "0-3")
    key_type: int = proto(INT8, "1+", default=KEY_TYPE_GROUP)
    coordinator_keys: tuple[str, ...] = proto(array(STRING), "4+")


@dataclass(frozen=True, slots=True)
class Coordinator(Struct):
    key: str = proto(STRING, "4+")
    node_id: int = proto(INT32, "4+")
    host: str = proto(STRING, "4+")
    port: int = proto(INT32, "4+")
    error_code: int = proto(INT16, "4+")
    error_message: str | None = proto(STRING, "4+", nullable="4+", ignorable=True)


@message(api_key=10, kind="response", valid="0-6", flexible="3+")
@dataclass(frozen=True, slots=True)
class FindCoordinatorResponse(Struct):
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    error_code: int = proto(INT16, "0-3")
    error_message: str | None = proto(STRING, "1-3", nullable="1-3", ignorable=True)
    node_id: int = proto(INT32, "0-3")
    host: str = proto(STRING, "0-3")
    port: int = proto(INT32, "0-3")
    coordinators: tuple[Coordinator, ...] = proto(array(Coordinator), "4+")
