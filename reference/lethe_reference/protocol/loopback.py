"""An in-process client for a :class:`~lethe_reference.broker.Broker`: no sockets, real bytes.

Theory of operation
-------------------
:class:`LoopbackClient` speaks to a :class:`~.session.BrokerSession` exactly as a
TCP client would, minus the socket: requests are encoded to framed bytes
(request header with the client id, a correlation id counting from 1), fed to
the session, and the response bytes it sends back are split into frames and
decoded with the API and version remembered per correlation id (Kafka
responses do not name their API). Every byte therefore passes through the same
framing, header and version rules as on the wire, which makes it the fast
target for handler tests and for anything that wants the reference broker's
answers without a port::

    client = LoopbackClient(broker)
    metadata = client.request(MetadataRequest(topics=None), version=12)

:meth:`LoopbackClient.send` / :meth:`LoopbackClient.responses` split the two
halves for requests that wait in a purgatory; :meth:`LoopbackClient.send_raw`
feeds arbitrary bytes (golden frames, garbage) and :attr:`LoopbackClient.closed`
tells whether the broker closed the connection. ``listener`` makes it a
connection to that listener (a SASL_PLAINTEXT one authenticates first).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, TypeVar

from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct, message_info

from lethe_reference.protocol.listeners import ListenerSecurity
from lethe_reference.protocol.session import BrokerSession

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["LoopbackClient", "NoResponseError"]

R = TypeVar("R", bound=Struct)
_connection_ids = itertools.count(1_000_000)


class NoResponseError(AssertionError):
    """:meth:`LoopbackClient.request` expected an immediate response and got none."""


class LoopbackClient:
    """One in-process connection to ``broker``."""

    def __init__(
        self,
        broker: Broker,
        *,
        client_id: str | None = "lethe-loopback",
        listener: ListenerSecurity | None = None,
    ) -> None:
        self.client_id = client_id
        self.closed = False
        self._received = FrameBuffer()
        self._correlation = itertools.count(1)
        self._pending: dict[int, tuple[int, int]] = {}
        self.session = BrokerSession(
            broker,
            next(_connection_ids),
            send=lambda data: self._received.feed(bytes(data)),  # regions come read
            close=self._on_close,
            listener=listener,
        )

    def _on_close(self) -> None:
        self.closed = True

    # --- sending ------------------------------------------------------------------------

    def send(self, body: Struct, version: int | None = None) -> int:
        """Encode and send a request; returns its correlation id."""
        api_key = message_info(type(body)).api_key
        assert api_key is not None, f"{type(body).__name__} is not a request"
        if version is None:
            version = api(api_key).max_version
        correlation_id = next(self._correlation)
        header = RequestHeader(api_key, version, correlation_id, self.client_id)
        self._pending[correlation_id] = (api_key, version)
        self.send_raw(frame(encode_request(header, body)))
        return correlation_id

    def send_raw(self, data: bytes, *, expect: tuple[int, int, int] | None = None) -> None:
        """Feed raw bytes; ``expect=(correlation id, api key, version)`` registers the
        response to decode (for hand-made or recorded request frames)."""
        if expect is not None:
            self._pending[expect[0]] = (expect[1], expect[2])
        self.session.receive_data(data)

    def close(self) -> None:
        """The client closes its side."""
        self.session.receive_data(b"")

    # --- receiving ----------------------------------------------------------------------

    def raw_frames(self) -> list[bytes]:
        """Response payloads received so far and not yet taken (size prefix removed)."""
        return list(self._received.frames())

    def responses(self) -> list[tuple[ResponseHeader, Struct]]:
        """Every response received so far, decoded, in arrival order."""
        out = []
        for payload in self.raw_frames():
            correlation_id = int.from_bytes(payload[:4], "big", signed=True)
            api_key, version = self._pending.pop(correlation_id)
            out.append(decode_response(api_key, version, payload))
        return out

    def request(self, body: Struct, version: int | None = None) -> Struct:
        """Send ``body`` and return the response, which must be immediate."""
        correlation_id = self.send(body, version)
        got = self.responses()
        if len(got) != 1 or got[0][0].correlation_id != correlation_id:
            raise NoResponseError(f"expected the response to {correlation_id}, got {got!r}")
        return got[0][1]

    def call(self, body: Struct, response_type: type[R], version: int | None = None) -> R:
        """:meth:`request` with the response's type checked (for typed callers)."""
        response = self.request(body, version)
        assert isinstance(response, response_type), type(response)
        return response
