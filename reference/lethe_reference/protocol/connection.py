"""One client connection, sans-IO: bytes in, request events out, responses to bytes.

Theory of operation
-------------------
:class:`BrokerConnection` is h11's ``Connection`` for Kafka's broker side. The
owner (the asyncio server, or a test) feeds it whatever the socket produced
with :meth:`~BrokerConnection.receive_data` (``b""`` = the peer closed), takes
events out with :meth:`~BrokerConnection.next_event`, and turns each response
into bytes with :meth:`~BrokerConnection.send_response`. The connection never
touches a socket, a clock or the broker's data.

Per frame, in Kafka's order (``SocketServer.processCompletedReceives``,
``RequestContext.parseRequest``)::

    size int32        < 0 or > socket.request.max.bytes     -> ProtocolError "frame-size"
    request header    truncated / malformed                 -> ProtocolError "header"
    api_key           unknown, or no handler here           -> ProtocolError "unknown-api"
    api_version       outside the advertised range:
                        ApiVersions: body not parsed, RequestReceived with an empty
                        ApiVersionsRequest (the handler answers UNSUPPORTED_VERSION
                        and send_response encodes it as v0, header v0; KIP-511)
                        any other API                       -> ProtocolError "unsupported-version"
    body              does not decode                       -> ProtocolError "body"
                      (bytes left after the body are ignored, as Kafka's parser does)

Every ProtocolError means "close without answering": that is what a Kafka
broker does with an ``InvalidRequestException`` from the network layer. It is
logged (logger ``lethe_reference.protocol.connection``, INFO) and is never raised at
the caller, so no client input can crash the broker. The other two ways a
client can go wrong are logged at INFO too: an ApiVersions request at a
version this broker does not know (answered, see above), and a peer that
closes its side in the middle of a frame (a plain disconnect, as in Kafka).

Raw SASL tokens. After answering a SaslHandshake v0 the owner calls
:meth:`~BrokerConnection.expect_raw_token`: the next frame is then not parsed
as a request but returned as :class:`~.events.SaslTokenReceived`, and its
answer goes out with :meth:`~BrokerConnection.send_raw_token` (a size-prefixed
frame with no header), as Kafka's authenticator exchanges tokens before
KIP-152.

Muting. After a RequestReceived the connection is ``IN_FLIGHT`` and
:meth:`next_event` answers :data:`~.events.PAUSED` until the response is sent
(see :mod:`.state`), so responses leave in request order by construction.

Responses. :meth:`send_response` picks the body version (the request's; v0 for
an ApiVersions request at an unsupported version) and the response header
version (v0 for ApiVersions, else v1 for flexible versions), and frames the
payload. A Produce with ``acks=0`` gets no response at all; if any partition
failed, the connection is closed instead (``KafkaApis.handleProduceRequest``),
which the caller sees as :attr:`BrokerConnection.must_close`.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from lethe_formats.errors import FormatError
from lethe_formats.protocol.api_keys import ApiKey, api_name
from lethe_formats.protocol.compiler import decode_prefix, encode, encode_buffers
from lethe_formats.protocol.envelope import decode_request_header
from lethe_formats.protocol.exceptions import UnknownApiKeyError
from lethe_formats.protocol.framing import (
    DEFAULT_MAX_FRAME_SIZE,
    FrameBuffer,
    frame,
    frame_prefix,
)
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.regions import ByteRegion
from lethe_formats.protocol.registry import api, header_versions
from lethe_formats.protocol.schema import Struct

from lethe_reference.handlers.context import ANONYMOUS, RequestContext
from lethe_reference.protocol.events import (
    NEED_DATA,
    PAUSED,
    ConnectionClosed,
    Event,
    ProtocolError,
    RequestReceived,
    SaslTokenReceived,
    Sentinel,
)
from lethe_reference.protocol.state import (
    ConnectionState,
    Input,
    LocalProtocolError,
    StateMachine,
)

__all__ = ["BrokerConnection", "ResponseEncodingError", "response_version"]

#: A leading body part shorter than this is joined to the size prefix and header.
_JOINED_BYTES = 32 * 1024
_log = logging.getLogger(__name__)


class ResponseEncodingError(RuntimeError):
    """A handler built a response its version cannot carry (a broker bug): the
    connection is closed, as Kafka closes when a response fails to serialize."""


def response_version(ctx: RequestContext) -> int:
    """The version a response to ``ctx`` is encoded at (``RequestContext.apiVersion()``)."""
    if ctx.api_key == ApiKey.API_VERSIONS and ctx.api_version not in api(ctx.api_key).versions:
        return 0
    return ctx.api_version


class BrokerConnection:
    """The broker's half of one connection; see the module docstring."""

    def __init__(
        self,
        connection_id: int,
        api_keys: Collection[int],
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        principal: str = ANONYMOUS,
        peer: str = "",
        listener: str = "PLAINTEXT",
    ) -> None:
        self.connection_id = connection_id
        self.listener = listener
        self.api_keys = frozenset(api_keys)
        self.principal = principal
        self.peer = peer
        self._frames = FrameBuffer(max_frame_size)
        self._machine = StateMachine()
        self._eof = False
        self._in_flight: tuple[RequestContext, Struct] | None = None
        self._error_reported = False
        self._raw_token_next = False
        self._raw_token_in_flight = False

    # --- state --------------------------------------------------------------------------

    @property
    def state(self) -> ConnectionState:
        return self._machine.state

    @property
    def must_close(self) -> bool:
        """True once the owner should close the socket (error, or closed)."""
        return self.state in (ConnectionState.ERROR, ConnectionState.CLOSED)

    @property
    def buffered(self) -> int:
        """Bytes received and not yet taken as a request (``queued.max.request.bytes``)."""
        return self._frames.buffered

    @property
    def in_flight(self) -> RequestContext | None:
        return None if self._in_flight is None else self._in_flight[0]

    def close(self) -> None:
        """The owner closed the connection (idempotent)."""
        self._machine.process(Input.CLOSE)

    # --- receiving ----------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes from the peer; ``b""`` means end of stream."""
        if not data:
            self._eof = True
        elif self.state not in (ConnectionState.ERROR, ConnectionState.CLOSED):
            self._frames.feed(data)

    def next_event(self) -> Event | Sentinel:
        """The next event, :data:`NEED_DATA` or :data:`PAUSED` (module docstring)."""
        state = self.state
        if state is ConnectionState.CLOSED:
            return ConnectionClosed()
        if state is ConnectionState.ERROR:
            return ConnectionClosed("closed after a protocol error")
        if state is ConnectionState.IN_FLIGHT:
            return self._peer_gone() or PAUSED
        position = self._frames.position
        try:
            payload = self._frames.next_frame()
        except FormatError as error:
            return self._bad_input("frame-size", str(error), position)
        if payload is None:
            return self._peer_gone() or NEED_DATA
        if self._raw_token_next:
            self._raw_token_next = False
            self._raw_token_in_flight = True
            self._machine.process(Input.REQUEST)
            return SaslTokenReceived(payload)
        return self._request(payload, position)

    def expect_raw_token(self) -> None:
        """The next frame is a raw SASL token (module docstring)."""
        self._raw_token_next = True

    def send_raw_token(self, token: bytes) -> bytes:
        """The framed answer to the in-flight raw token (``b""`` if the connection closed)."""
        if self.state is ConnectionState.CLOSED:
            return b""
        if not self._raw_token_in_flight:
            raise LocalProtocolError(f"connection {self.connection_id}: no raw token in flight")
        self._raw_token_in_flight = False
        self._machine.process(Input.RESPONSE)
        return frame(token)

    def _peer_gone(self) -> ConnectionClosed | None:
        if not self._eof:
            return None
        if self._frames.buffered and self.state is ConnectionState.OPEN:
            _log.info(
                "connection %d%s: peer closed with %d bytes of an incomplete frame",
                self.connection_id,
                self._from(),
                self._frames.buffered,
            )
        self._machine.process(Input.PEER_CLOSED)
        self._in_flight = None
        return ConnectionClosed()

    def _request(self, payload: bytes, position: int) -> Event:
        """Decode one frame payload (``position``: stream offset of its size field)."""
        base = position + 4
        try:
            header, offset = decode_request_header(payload)
        except UnknownApiKeyError as error:
            return self._bad_input("unknown-api", str(error), base)
        except FormatError as error:
            return self._bad_input("header", f"request header: {error}", base)
        if header.api_key not in self.api_keys:
            return self._bad_input(
                "unknown-api",
                f"Received request api key {api_name(header.api_key)} ({header.api_key}) "
                "which is not enabled",
                base,
            )
        body = self._body(header, payload, offset, base)
        if isinstance(body, ProtocolError):
            return body
        ctx = RequestContext(
            api_key=header.api_key,
            api_version=header.api_version,
            correlation_id=header.correlation_id,
            client_id=header.client_id,
            connection_id=self.connection_id,
            principal=self.principal,
            client_host=self.peer.rpartition(":")[0].strip("[]"),
            listener=self.listener,
        )
        self._machine.process(Input.REQUEST)
        self._in_flight = (ctx, body)
        return RequestReceived(ctx, body, len(payload))

    def _body(
        self, header: RequestHeader, payload: bytes, offset: int, base: int
    ) -> Struct | ProtocolError:
        spec = api(header.api_key)
        if header.api_version not in spec.versions:
            if header.api_key == ApiKey.API_VERSIONS:
                _log.info(
                    "connection %d%s: ApiVersions v%d is not supported; answering "
                    "UNSUPPORTED_VERSION at v0",
                    self.connection_id,
                    self._from(),
                    header.api_version,
                )
                return spec.request()  # unsupported ApiVersions: answered, not parsed
            return self._bad_input(
                "unsupported-version",
                f"Received request api key {spec.name} with version {header.api_version} "
                "which is not enabled",
                base,
            )
        try:
            body, _ = decode_prefix(spec.request, header.api_version, payload, offset)
        except FormatError as error:
            return self._bad_input(
                "body",
                f"Error getting request for apiKey: {spec.name}, apiVersion: "
                f"{header.api_version}, connectionId: {self.connection_id}: {error}",
                base,
            )
        return body

    def _bad_input(self, kind: str, message: str, position: int | None) -> ProtocolError:
        self._machine.process(Input.BAD_INPUT)
        _log.info(
            "closing connection %d%s: %s (%s)", self.connection_id, self._from(), message, kind
        )
        return ProtocolError(kind, message, position)

    def _from(self) -> str:
        return f" from {self.peer}" if self.peer else ""

    # --- sending ------------------------------------------------------------------------

    def send_response(self, ctx: RequestContext, response: Struct) -> bytes:
        """The framed bytes of ``response`` to the in-flight request ``ctx``.

        Returns ``b""`` when Kafka sends nothing (acks=0 Produce); check
        :attr:`must_close` afterwards. Raises :class:`LocalProtocolError` when
        ``ctx`` is not the in-flight request and :class:`ResponseEncodingError`
        (after closing) when the response cannot be encoded.
        """
        return b"".join(bytes(part) for part in self.send_response_buffers(ctx, response))

    def send_response_buffers(
        self, ctx: RequestContext, response: Struct
    ) -> list[bytes | ByteRegion]:
        """:meth:`send_response` as buffers to write in order (``[]``: nothing to
        send). A Fetch response's record sets stay the objects the handler read
        (bytes, or file regions the server sends with ``sendfile``), so the frame is
        never copied whole (what Kafka's zero-copy send saves)."""
        if self.state is ConnectionState.CLOSED:
            return []  # the peer went away meanwhile: the response is dropped
        if self._in_flight is None or self._in_flight[0] != ctx:
            raise LocalProtocolError(f"connection {self.connection_id}: {ctx} is not in flight")
        request = self._in_flight[1]
        if _expects_no_response(ctx, request):
            return self._no_response(ctx, response)
        version = response_version(ctx)
        try:
            _, header_version = header_versions(ctx.api_key, version)
            head = encode(ResponseHeader(ctx.correlation_id), header_version)
            body = encode_buffers(response, version)
        except (FormatError, TypeError, ValueError) as error:
            self._in_flight = None
            self._machine.process(Input.CLOSE)
            raise ResponseEncodingError(
                f"{api_name(ctx.api_key)} v{version} response to correlation id "
                f"{ctx.correlation_id}: {error}"
            ) from error
        self._in_flight = None
        self._machine.process(Input.RESPONSE)
        size = len(head) + sum(len(part) for part in body)
        first = body[0] if body else b""
        if isinstance(first, bytes) and len(first) < _JOINED_BYTES:
            return [frame_prefix(size) + head + first, *body[1:]]
        return [frame_prefix(size) + head, *body]

    def _no_response(self, ctx: RequestContext, response: Struct) -> list[bytes | ByteRegion]:
        self._in_flight = None
        if _has_partition_errors(response):
            _log.info(
                "closing connection %d: acks=0 produce (correlation id %d) failed",
                self.connection_id,
                ctx.correlation_id,
            )
            self._machine.process(Input.CLOSE)
        else:
            self._machine.process(Input.NO_RESPONSE)
        return []


def _expects_no_response(ctx: RequestContext, request: Struct) -> bool:
    return ctx.api_key == ApiKey.PRODUCE and getattr(request, "acks", None) == 0


def _has_partition_errors(response: Any) -> bool:
    """Any non-zero ``error_code`` in a Produce response's partitions."""
    for topic in getattr(response, "responses", ()):
        for partition in getattr(topic, "partition_responses", ()):
            if getattr(partition, "error_code", 0) != 0:
                return True
    return False
