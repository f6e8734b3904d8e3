"""SaslAuthenticate (key 36, KIP-152), versions 0-2, flexible 2+.

Carries the SASL tokens after a SaslHandshake v1, so authentication failures
come back as Kafka errors instead of a closed connection.

Request: ``auth_bytes bytes`` (the mechanism's client token). Response::

    error_code            int16
    error_message         string, nullable
    auth_bytes            bytes   (the server's token; empty when there is none)
    session_lifetime_ms   int64   (v1+, KIP-368: 0 = no re-authentication needed)

v1 adds the session lifetime, v2 is the first flexible version.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import BYTES, INT16, INT64, STRING, Struct, message, proto

__all__ = ["SaslAuthenticateRequest", "SaslAuthenticateResponse"]


@message(api_key=36, kind="request", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class SaslAuthenticateRequest(Struct):
    auth_bytes: bytes = proto(BYTES, "0+")


@message(api_key=36, kind="response", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class SaslAuthenticateResponse(Struct):
    error_code: int = proto(INT16, "0+")
    error_message: str | None = proto(STRING, "0+", nullable="0+")
    auth_bytes: bytes = proto(BYTES, "0+")
    session_lifetime_ms: int = proto(INT64, "1+", ignorable=True)
