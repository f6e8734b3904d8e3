"""A connection glued to the broker: bytes in, handlers run, response bytes out (sans-IO).

Theory of operation
-------------------
:class:`BrokerSession` owns one :class:`~.connection.BrokerConnection` and runs
its requests through :func:`~lethe_reference.handlers.dispatch.dispatch`
against a :class:`~lethe_reference.broker.Broker`. The owner supplies two
callbacks: ``send(bytes)`` (queue bytes for the peer) and ``close()`` (drop the
connection). Nothing here blocks or touches a socket, so the asyncio server and
in-process tests (:mod:`.loopback`) share exactly this code.

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

A handler that raises without an error-response builder, or a response that
cannot be encoded, is a broker bug: it is logged with its traceback and the
connection is closed; the broker keeps running and no stored data is touched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lethe_formats.protocol.api_keys import api_name
from lethe_formats.protocol.schema import Struct

from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import NoHandlerError, dispatch, handled_api_keys
from lethe_reference.protocol.connection import BrokerConnection, ResponseEncodingError
from lethe_reference.protocol.events import ConnectionClosed, ProtocolError, RequestReceived
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["BrokerSession"]

_log = logging.getLogger(__name__)


class BrokerSession:
    """One client connection served by ``broker``; see the module docstring."""

    def __init__(
        self,
        broker: Broker,
        connection_id: int,
        *,
        send: Callable[[bytes], None],
        close: Callable[[], None],
        peer: str = "",
    ) -> None:
        self.broker = broker
        self.connection = BrokerConnection(
            connection_id,
            handled_api_keys(broker),
            max_frame_size=broker.config.get_int("socket.request.max.bytes"),
            peer=peer,
        )
        self._send = send
        self._close_callback = close
        self._pumping = False
        self.closed = False

    @property
    def connection_id(self) -> int:
        return self.connection.connection_id

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
                elif isinstance(event, ProtocolError | ConnectionClosed):
                    self.close()
                else:
                    return  # NEED_DATA or PAUSED
        finally:
            self._pumping = False

    def _handle(self, event: RequestReceived) -> None:
        ctx = event.context
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

    def _complete(self, ctx: RequestContext, response: Struct) -> None:
        """A deferred response is ready: send it, then take the next request."""
        self._respond(ctx, response)
        self._pump()

    def _respond(self, ctx: RequestContext, response: Struct) -> None:
        if self.closed:
            return
        try:
            data = self.connection.send_response(ctx, response)
        except ResponseEncodingError:
            _log.exception("connection %d: response not encodable; closing", self.connection_id)
            self.close()
            return
        if data:
            self._send(data)
        if self.connection.must_close:
            self.close()
