"""Whole request and response payloads: header plus body, both directions.

A frame payload (after ``framing`` removed the size) is a header followed by
the body. Which header version applies depends on the API and version, which
sit in the first four bytes of a request::

    request payload   api_key int16 | api_version int16 | correlation_id int32 | ...
    response payload  correlation_id int32 | [tagged fields] | body

A response carries no API key: the receiver must remember what it asked
(kafka-python's in-flight deque), so :func:`decode_response` takes the key
and version. A broker decodes in two steps when it needs to answer requests it
cannot serve: :func:`decode_request_header` (needs only a known API key), then
:func:`decode_request_body` (needs a supported version). Error positions are
offsets into the payload.
"""

from __future__ import annotations

import struct

from lethe_formats.errors import TruncatedError
from lethe_formats.protocol.compiler import decode, decode_prefix, encode
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.registry import header_versions, lookup
from lethe_formats.protocol.schema import Struct, message_info

__all__ = [
    "decode_request",
    "decode_request_body",
    "decode_request_header",
    "decode_response",
    "encode_request",
    "encode_response",
]


def decode_request_header(payload: bytes) -> tuple[RequestHeader, int]:
    """The request header and where the body starts (API key must be known)."""
    if len(payload) < 4:
        raise TruncatedError("data ends inside the request header", position=0, field="api_key")
    api_key, api_version = struct.unpack_from(">hh", payload)
    header_version, _ = header_versions(api_key, api_version)
    return decode_prefix(RequestHeader, header_version, payload)


def decode_request_body(header: RequestHeader, payload: bytes, offset: int) -> Struct:
    """The body of a request whose header :func:`decode_request_header` read."""
    spec = lookup(header.api_key, header.api_version)
    return decode(spec.request, header.api_version, payload[offset:], base=offset)


def decode_request(payload: bytes) -> tuple[RequestHeader, Struct]:
    """Header and typed body of one request payload."""
    header, offset = decode_request_header(payload)
    return header, decode_request_body(header, payload, offset)


def encode_request(header: RequestHeader, body: Struct) -> bytes:
    """The payload of a request (frame it with ``framing.frame``)."""
    spec = lookup(header.api_key, header.api_version)
    _check_class(body, spec.request, header.api_version)
    header_version, _ = header_versions(header.api_key, header.api_version)
    return encode(header, header_version) + encode(body, header.api_version)


def decode_response(
    api_key: int, api_version: int, payload: bytes
) -> tuple[ResponseHeader, Struct]:
    """Header and typed body of a response to a request at (api_key, api_version)."""
    spec = lookup(api_key, api_version)
    _, header_version = header_versions(api_key, api_version)
    header, offset = decode_prefix(ResponseHeader, header_version, payload)
    return header, decode(spec.response, api_version, payload[offset:], base=offset)


def encode_response(api_version: int, header: ResponseHeader, body: Struct) -> bytes:
    """The payload of a response; the API key comes from the body's class."""
    api_key = message_info(type(body)).api_key
    assert api_key is not None, "a response body class has an API key"
    spec = lookup(api_key, api_version)
    _check_class(body, spec.response, api_version)
    _, header_version = header_versions(api_key, api_version)
    return encode(header, header_version) + encode(body, api_version)


def _check_class(body: Struct, expected: type[Struct], version: int) -> None:
    if type(body) is not expected:
        raise TypeError(f"v{version}: expected a {expected.__name__}, got {type(body).__name__}")
