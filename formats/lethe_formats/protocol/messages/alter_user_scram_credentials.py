"""AlterUserScramCredentials (key 51, KIP-554), version 0, flexible 0+.

Request::

    deletions  [name string, mechanism int8]
    upsertions [name string, mechanism int8, iterations int32,
                salt bytes, salted_password bytes]

The client salts the password (``Hi(password, salt, iterations)`` of RFC 5802) so
the password never travels; the broker derives StoredKey and ServerKey from it.

Response::

    throttle_time_ms  int32
    results [user string, error_code int16, error_message string (nullable)]

One result per user named in the request (a user may be named once).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BYTES,
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
    "AlterUserScramCredentialsRequest",
    "AlterUserScramCredentialsResponse",
    "ScramDeletion",
    "ScramUpsertion",
    "ScramUserResult",
]


@dataclass(frozen=True, slots=True)
class ScramDeletion(Struct):
    name: str = proto(STRING, "0+")
    mechanism: int = proto(INT8, "0+")


@dataclass(frozen=True, slots=True)
class ScramUpsertion(Struct):
    name: str = proto(STRING, "0+")
    mechanism: int = proto(INT8, "0+")
    iterations: int = proto(INT32, "0+")
    salt: bytes = proto(BYTES, "0+")
    salted_password: bytes = proto(BYTES, "0+")


@message(api_key=51, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class AlterUserScramCredentialsRequest(Struct):
    deletions: tuple[ScramDeletion, ...] = proto(array(ScramDeletion), "0+")
    upsertions: tuple[ScramUpsertion, ...] = proto(array(ScramUpsertion), "0+")


@dataclass(frozen=True, slots=True)
class ScramUserResult(Struct):
    user: str = proto(STRING, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")


@message(api_key=51, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class AlterUserScramCredentialsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    results: tuple[ScramUserResult, ...] = proto(array(ScramUserResult), "0+")
