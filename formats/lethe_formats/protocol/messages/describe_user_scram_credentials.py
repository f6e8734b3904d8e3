"""DescribeUserScramCredentials (key 50, KIP-554), version 0, flexible 0+.

Request::

    users [name string] (nullable: null or empty describes every user)

Response::

    throttle_time_ms  int32
    error_code        int16    (request-level: authorization)
    error_message     string (nullable)
    results [user string, error_code int16, error_message string (nullable),
             credential_infos [mechanism int8, iterations int32]]

``mechanism``: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512 (0 is Kafka's UNKNOWN).
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
    "CredentialInfo",
    "DescribeUserScramCredentialsRequest",
    "DescribeUserScramCredentialsResponse",
    "ScramUserName",
    "UserScramResult",
]


@dataclass(frozen=True, slots=True)
class ScramUserName(Struct):
    name: str = proto(STRING, "0+")


@message(api_key=50, kind="request", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeUserScramCredentialsRequest(Struct):
    users: tuple[ScramUserName, ...] | None = proto(array(ScramUserName), "0+", nullable="0+")


@dataclass(frozen=True, slots=True)
class CredentialInfo(Struct):
    mechanism: int = proto(INT8, "0+")
    iterations: int = proto(INT32, "0+")


@dataclass(frozen=True, slots=True)
class UserScramResult(Struct):
    user: str = proto(STRING, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    credential_infos: tuple[CredentialInfo, ...] = proto(array(CredentialInfo), "0+")


@message(api_key=50, kind="response", valid="0", flexible="0+")
@dataclass(frozen=True, slots=True)
class DescribeUserScramCredentialsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    results: tuple[UserScramResult, ...] = proto(array(UserScramResult), "0+")
