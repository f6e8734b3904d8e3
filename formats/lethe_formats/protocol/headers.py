"""Request and response headers, and which header version goes with which API version.

Byte layouts (big-endian)::

    RequestHeader v0    api_key int16 | api_version int16 | correlation_id int32
    RequestHeader v1    v0 | client_id int16-length string (-1 = null)
    RequestHeader v2    v1 | tagged fields                (client_id stays int16-length!)
    ResponseHeader v0   correlation_id int32
    ResponseHeader v1   correlation_id int32 | tagged fields

A request at a flexible version of its API uses request header v2 and gets a
response with header v1; non-flexible versions use v1 / v0. Request header v0
exists only for ControlledShutdown v0, which lethe does not serve. ApiVersions
responses always use response header v0, whatever the request version: a client
that does not yet know which versions the broker speaks must still be able to
read the reply (KIP-511).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, message, proto

__all__ = [
    "RequestHeader",
    "ResponseHeader",
    "request_header_version",
    "response_header_version",
]


@message(api_key=None, kind="header", valid="0-2", flexible="2+")
@dataclass(frozen=True, slots=True)
class RequestHeader(Struct):
    """The header in front of every request body."""

    api_key: int = proto(INT16, "0+")
    api_version: int = proto(INT16, "0+")
    correlation_id: int = proto(INT32, "0+")
    #: Kafka keeps the classic int16 length here even in the flexible header v2.
    client_id: str | None = proto(STRING, "1+", nullable="1+", ignorable=True, flexible="none")


@message(api_key=None, kind="header", valid="0-1", flexible="1+")
@dataclass(frozen=True, slots=True)
class ResponseHeader(Struct):
    """The header in front of every response body."""

    correlation_id: int = proto(INT32, "0+")


def request_header_version(flexible: bool) -> int:
    """Header version of a request whose body version is (not) flexible."""
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    """Header version of a response; ApiVersions always answers with v0."""
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if flexible else 0
