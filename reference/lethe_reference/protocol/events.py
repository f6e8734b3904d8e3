"""What :meth:`BrokerConnection.next_event` returns.

Three events and two "nothing yet" sentinels, as h11 has them:

* :class:`RequestReceived` - one decoded request: a
  :class:`~lethe_reference.handlers.context.RequestContext` (header fields plus
  connection id) and the typed request body;
* :class:`SaslTokenReceived` - a raw SASL token frame (no Kafka header), which a
  client sends after a SaslHandshake v0 once the connection was told to expect
  one (:meth:`BrokerConnection.expect_raw_token`);
* :class:`ConnectionClosed` - the peer closed its side (or the connection was
  closed after an error); nothing more will come;
* :class:`ProtocolError` - the peer sent bytes Kafka would not accept; the
  caller must close the connection, as Kafka's ``SocketServer`` does. It is
  reported once; afterwards the connection only yields ConnectionClosed.
* :data:`NEED_DATA` - feed more bytes with ``receive_data``;
* :data:`PAUSED` - a request is in flight: Kafka mutes a connection from the
  moment a request is read until its response is sent, so requests on one
  connection are handled strictly one after another and responses go out in
  request order. Send the response, then ask again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lethe_formats.protocol.schema import Struct

from lethe_reference.handlers.context import RequestContext

__all__ = [
    "NEED_DATA",
    "PAUSED",
    "ConnectionClosed",
    "Event",
    "ProtocolError",
    "RequestReceived",
    "SaslTokenReceived",
    "Sentinel",
]


class Sentinel(enum.Enum):
    NEED_DATA = "need data"
    PAUSED = "paused"


NEED_DATA = Sentinel.NEED_DATA
PAUSED = Sentinel.PAUSED


@dataclass(frozen=True)
class RequestReceived:
    """A whole request, decoded (``size`` is the frame payload size)."""

    context: RequestContext
    request: Struct
    size: int


@dataclass(frozen=True)
class SaslTokenReceived:
    """A raw SASL token (SaslHandshake v0 framing): answered with a raw frame or a close."""

    token: bytes


@dataclass(frozen=True)
class ConnectionClosed:
    """No more requests will arrive on this connection."""

    reason: str = "closed by peer"


@dataclass(frozen=True)
class ProtocolError:
    """The peer broke the protocol; the connection must be closed (no reply).

    ``message`` says what and where (absolute stream position where known);
    ``kind`` is a short stable tag for logs and tests: ``frame-size``,
    ``header``, ``unknown-api``, ``unsupported-version``, ``body``.
    """

    kind: str
    message: str
    position: int | None = None


Event = RequestReceived | SaslTokenReceived | ConnectionClosed | ProtocolError
