"""SaslHandshake (key 17), versions 0-1, never flexible.

Request: ``mechanism string`` (e.g. ``PLAIN``, ``SCRAM-SHA-256``). Response:
``error_code int16``, ``mechanisms [string]`` (the mechanisms the listener
enables; sent with UNSUPPORTED_SASL_MECHANISM too, so the client can choose).

v0: the SASL tokens follow as raw size-prefixed frames with no Kafka header.
v1: they travel in SaslAuthenticate (key 36) requests. Kafka cannot add a
flexible version (KAFKA-9577: clients up to 2.4 negotiate it wrongly), so both
versions use the classic encodings and request header v1.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, STRING, Struct, array, message, proto

__all__ = ["SaslHandshakeRequest", "SaslHandshakeResponse"]


@message(api_key=17, kind="request", valid="0-1", flexible="none")
@dataclass(frozen=True, slots=True)
class SaslHandshakeRequest(Struct):
    mechanism: str = proto(STRING, "0+")


@message(api_key=17, kind="response", valid="0-1", flexible="none")
@dataclass(frozen=True, slots=True)
class SaslHandshakeResponse(Struct):
    error_code: int = proto(INT16, "0+")
    mechanisms: tuple[str, ...] = proto(array(STRING), "0+")
