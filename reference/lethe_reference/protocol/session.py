"""A connection glued to the broker: bytes in, handlers run, response bytes out (sans-IO).

Theory of operation
-------------------
:class:`BrokerSession` owns one :class:`~.connection.BrokerConnection` and runs
its requests through :func:`~lethe_reference.handlers.dispatch.dispatch`
against a :class:`~lethe_reference.broker.Broker`. The owner supplies two
callbacks: ``send(buffer)`` (queue a buffer for the peer) and ``close()`` (drop the
connection). Nothing here blocks or touches a socket, so the asyncio server and
in-process tests (:mod:`.loopback`) share exactly this code.

Zero copy. A Fetch response's large record sets are file regions
(:mod:`lethe_reference.storage.file_region`). An owner that sends them itself
(``zero_copy``: the server on a plain TCP listener, with ``sendfile``) gets them
as they are; any other owner (TLS, the loopback) gets bytes: the session reads
every region of a response before sending any of it, and a region whose file
was truncated meanwhile (or any read error) closes the connection with nothing
sent, as Kafka closes a connection whose ``FileRecords.writeTo`` fails.

The pump (:meth:`BrokerSession.receive_data`) takes events out of the
connection until it needs data or is paused:

* a request whose handler returns a response: the response is encoded and sent
  at once, and the next buffered request is taken;
* a request whose handler returns a pending
  :class:`~lethe_reference.purgatory.Deferred`: the connection stays muted
  (``PAUSED``); when the deferred completes, whoever completed it (another
  connection's Produce, the scheduler's expiry) runs the session's callback,
  which sends the response and resumes the pump. Responses therefore leave in
  request order, one request at a time, as Kafka's muted channels do;
* ProtocolError or ConnectionClosed: the connection is closed.

TLS is the server's edge's business: a session on an SSL listener gets the
decrypted bytes and, as ``principal``, the client certificate's name
(``User:<RFC 2253 DN>``, :func:`lethe_formats.security.tls.certificate_principal`).

SASL. A session on a SASL_PLAINTEXT or SASL_SSL listener (``listener.sasl``) runs every
request through its :class:`~.sasl.SaslAuthenticator` until authentication
completes: ApiVersions is dispatched as usual, SaslHandshake and
SaslAuthenticate are answered by the authenticator, a request it refuses gets
its API's error response (the handler's ``error_response`` builder) or none,
and a failure closes the connection after the answer. On success the
connection's principal becomes ``User:<name>``, which every later
:class:`~lethe_reference.handlers.context.RequestContext` carries.

A handler that raises without an error-response builder, or a response that
cannot be encoded, is a broker bug: it is logged with its traceback and the
connection is closed; the broker keeps running and no stored data is touched.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lethe_formats.protocol.api_keys import api_name
from lethe_formats.protocol.regions import ByteRegion
from lethe_formats.protocol.schema import Struct

from lethe_reference.cluster.scram_credentials import scram_store
from lethe_reference.handlers.context import ANONYMOUS, RequestContext
from lethe_reference.handlers.dispatch import (
    ERROR_RESPONSES,
    NoHandlerError,
    dispatch,
    handled_api_keys,
)
from lethe_reference.protocol.connection import BrokerConnection, ResponseEncodingError
from lethe_reference.protocol.events import (
    ConnectionClosed,
    ProtocolError,
    RequestReceived,
    SaslTokenReceived,
)
from lethe_reference.protocol.listeners import ListenerSecurity
from lethe_reference.protocol.sasl import SaslAuthenticator
from lethe_reference.protocol.scram import ScramCredential
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["BrokerSession"]

_log = logging.getLogger(__name__)


def _scram_users(broker: Broker, mechanism: str) -> Mapping[str, ScramCredential]:
    return scram_store(broker).users(mechanism)


class BrokerSession:
    """One client connection served by ``broker``; see the module docstring."""

    def __init__(
        self,
        broker: Broker,
        connection_id: int,
        *,
        send: Callable[[bytes | ByteRegion], None],
        close: Callable[[], None],
        peer: str = "",
        listener: ListenerSecurity | None = None,
        principal: str | None = None,
        zero_copy: bool = False,
    ) -> None:
        self.broker = broker
        self.authenticator = (
            SaslAuthenticator(listener, functools.partial(_scram_users, broker))
            if listener is not None and listener.sasl
            else None
        )
        self.connection = BrokerConnection(
            connection_id,
            handled_api_keys(broker),
            max_frame_size=broker.config.get_int("socket.request.max.bytes"),
            peer=peer,
            listener=listener.name if listener is not None else "PLAINTEXT",
            principal=ANONYMOUS if principal is None else principal,
        )
        self._send = send
        self._close_callback = close
        #: the owner sends file regions itself (module docstring)
        self.zero_copy = zero_copy
        self._pumping = False
        self.closed = False

    @property
    def connection_id(self) -> int:
        return self.connection.connection_id

    @property
    def queued_bytes(self) -> int:
        """Bytes received and not handled yet (:mod:`.quotas`)."""
        return self.connection.buffered

    @property
    def wants_data(self) -> bool:
        """False while a response is deferred: the connection is muted, as Kafka
        mutes a channel with a request in flight, so its socket is not read."""
        return not self.closed and self.connection.in_flight is None

    def receive_data(self, data: bytes) -> None:
        """Bytes from the peer (``b""``: it closed); runs whatever became complete."""
        if self.closed:
            return
        self.connection.receive_data(data)
        self._pump()

    def close(self) -> None:
        """Close the connection (idempotent); pending responses are dropped."""
        if self.closed:
            return
        self.closed = True
        self.connection.close()
        try:
            self._close_callback()
        except Exception:
            _log.exception("connection %d: close callback failed", self.connection_id)

    # --- the pump -----------------------------------------------------------------------

    def _pump(self) -> None:
        if self._pumping:
            return  # a response completed inside the loop below: it continues
        self._pumping = True
        try:
            while not self.closed:
                event = self.connection.next_event()
                if isinstance(event, RequestReceived):
                    self._handle(event)
                elif isinstance(event, SaslTokenReceived):
                    self._raw_token(event.token)
                elif isinstance(event, ProtocolError | ConnectionClosed):
                    self.close()
                else:
                    return  # NEED_DATA or PAUSED
        finally:
            self._pumping = False

    def _handle(self, event: RequestReceived) -> None:
        ctx = event.context
        if self.authenticator is not None and not self.authenticator.complete:
            self._authenticate(ctx, event.request)
            return
        try:
            result = dispatch(self.broker, ctx, event.request)
        except NoHandlerError as error:  # pragma: no cover - the connection checks keys first
            _log.error("connection %d: %s", self.connection_id, error)
            self.close()
            return
        except Exception:
            _log.exception(
                "connection %d: %s v%d (correlation id %d) failed; closing the connection",
                self.connection_id,
                api_name(ctx.api_key),
                ctx.api_version,
                ctx.correlation_id,
            )
            self.close()
            return
        if isinstance(result, Deferred):
            deferred: Deferred[Any] = result
            deferred.add_callback(lambda response: self._complete(ctx, response))
        else:
            self._respond(ctx, result)

    def _authenticate(self, ctx: RequestContext, request: Struct) -> None:
        """One request before SASL authentication completed (module docstring)."""
        assert self.authenticator is not None
        action = self.authenticator.receive(ctx.api_key, ctx.api_version, request)
        response = action.response
        if action.dispatch:
            result = dispatch(self.broker, ctx, request)
            assert not isinstance(result, Deferred)  # ApiVersions answers at once
            response = result
        elif action.refuse is not None:
            builder = ERROR_RESPONSES.get(ctx.api_key)
            if builder is not None:
                response = builder(request, *action.refuse)
        if action.reason:
            _log.info("connection %d: SASL: %s", self.connection_id, action.reason)
        if response is not None:
            self._respond(ctx, response)
        if action.close:
            self.close()
        elif self.authenticator.complete and self.authenticator.principal is not None:
            self.connection.principal = self.authenticator.principal
        elif self.authenticator.raw_tokens:
            self.connection.expect_raw_token()  # SaslHandshake v0: a bare token follows

    def _raw_token(self, token: bytes) -> None:
        """A bare SASL token after a SaslHandshake v0 (answered bare, or the connection closed)."""
        if self.authenticator is None:  # pragma: no cover - only SASL sessions expect tokens
            self.close()
            return
        answer, reason = self.authenticator.receive_token(token)
        if answer is None:
            _log.info("connection %d: SASL: %s", self.connection_id, reason)
            self.close()
            return
        self._send(self.connection.send_raw_token(answer))
        if self.authenticator.complete and self.authenticator.principal is not None:
            self.connection.principal = self.authenticator.principal
        elif not self.authenticator.complete:
            self.connection.expect_raw_token()  # a multi-round mechanism (SCRAM)

    def _complete(self, ctx: RequestContext, response: Struct) -> None:
        """A deferred response is ready: send it, then take the next request."""
        self._respond(ctx, response)
        self._pump()

    def _respond(self, ctx: RequestContext, response: Struct) -> None:
        if self.closed:
            return
        try:
            buffers = self.connection.send_response_buffers(ctx, response)
        except ResponseEncodingError:
            _log.exception("connection %d: response not encodable; closing", self.connection_id)
            self.close()
            return
        if not self.zero_copy:
            try:
                buffers = [part if isinstance(part, bytes) else bytes(part) for part in buffers]
            except OSError as error:  # a region's file truncated or unreadable
                _log.warning("connection %d: %s; closing the connection", self.connection_id, error)
                self.close()
                return
        for data in buffers:  # record sets as read, uncopied (connection.py)
            self._send(data)
        if self.connection.must_close:
            self.close()
