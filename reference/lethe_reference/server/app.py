"""The asyncio edge: a TCP listener, one task per connection, one timer task.

Theory of operation
-------------------
Everything with state is sans-IO (:class:`~lethe_reference.broker.Broker`,
:class:`~lethe_reference.protocol.session.BrokerSession`); this module only
moves bytes and time, all on one event loop, so the broker is never touched by
two threads:

* ``asyncio.start_server`` accepts; each connection gets a task that reads
  whatever arrived, hands it to its session (which runs the handlers and
  queues response buffers through ``send`` on the connection's
  :class:`~.output.ConnectionOutput`, written together once per loop turn),
  then awaits ``drain()`` so a slow reader applies back-pressure. Requests on a connection
  are handled one at a time and answered in order (the session mutes the
  connection while a response is deferred, as Kafka does);
* the timer task sleeps until :meth:`Broker.next_due_ms` (checkpoints,
  retention, file deletion, purgatory deadlines) or until poked, runs
  :meth:`Broker.run_due`, and repeats. Every request pokes it, because a
  request can make work due sooner (a Fetch that waits, a segment deleted).
  With a manual clock nothing becomes due by waiting; whoever advances the
  clock runs the due work (``EmbeddedBroker.advance``);
* long operations (the logs of thousands of new partitions) are background
  jobs of the broker: the timer runs one small slice of them per turn while
  any is pending and yields between slices, so the other connections and the
  signal handlers are served throughout (:mod:`lethe_reference.background`);
* :meth:`BrokerServer.stop` drops pending background jobs, closes the
  listener, answers parked requests (expiring the purgatories), lets the
  connections drain their output for a moment, closes them, and shuts the
  broker down cleanly (flush, checkpoints, ``.kafka_cleanshutdown``).

Listeners. The main listener (``host:port``) is PLAINTEXT unless ``listener``
says otherwise. ``extra_listeners`` adds more sockets, each with its
:class:`~lethe_reference.protocol.listeners.ListenerSecurity` (a SASL_PLAINTEXT
listener authenticates each connection before its requests reach the handlers,
:mod:`lethe_reference.protocol.sasl`; an SSL or SASL_SSL one first runs the TLS
handshake, :mod:`.tls`, with ``tls_contexts`` or contexts built from the
listeners' settings); their bound ports are in
:attr:`BrokerServer.listener_ports` by listener name, and ``advertised_listeners``
(by name) replaces the bound address in what Metadata hands out.

Every accepted connection gets Kafka's socket buffer sizes first
(:mod:`.socket_buffers`: ``socket.send.buffer.bytes``, ``socket.receive.buffer.bytes``).

Zero copy is a choice (``sendfile``, ``lethe broker --sendfile``). With it, a plain TCP
connection's session hands Fetch record sets on as file regions and
:mod:`.output` sends them with ``sendfile``, as Kafka's ``FileRecords.writeTo`` does; TLS
listeners always get bytes. It is off by default because, measured on loopback on the
2-CPU machine of ``benchmarks/``, ``sendfile`` made confluent-kafka's 1 and 4 MiB
fetches about three times slower (single fetches stalled for tens of milliseconds; the
cause in the kernel's loopback path was not pinned down), while Kafka's Java consumer
gained about 15 %; copies cost the broker a little more CPU.

Logging is one line per event as ``key=value`` pairs (logger
``lethe_reference.server``), e.g. ``event=accepted conn=3 peer=127.0.0.1:50432``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import socket
import ssl
from collections.abc import Mapping, Sequence
from typing import Any

from lethe_reference.broker import Broker
from lethe_reference.cluster.client_quotas import RESOLVER_KEY
from lethe_reference.handlers.endpoints import EXTENSION_KEY
from lethe_reference.protocol.listeners import ListenerSecurity
from lethe_reference.protocol.quotas import Admission, ConnectionQuotas, reading_allowed
from lethe_reference.protocol.session import BrokerSession
from lethe_reference.server.held_ports import HeldPorts
from lethe_reference.server.output import ConnectionOutput
from lethe_reference.server.socket_buffers import apply_socket_buffers
from lethe_reference.server.tls import handshake, listener_contexts, start_tls_server

__all__ = ["BrokerServer"]

_log = logging.getLogger("lethe_reference.server")
#: At most this much is taken from a connection's stream buffer per turn: a 1 MB
#: produce request then costs a few turns of the pump, not sixteen.
_READ_SIZE = 1024 * 1024
#: The stream reader buffers up to about twice this before it stops reading the socket
#: (asyncio's default is 64 KiB; the transport receives up to 256 KiB at a time).
_STREAM_LIMIT = 256 * 1024
_DRAIN_ON_STOP_S = 2.0


def _resolves(host: str) -> bool:
    """``InetAddress.getByName`` succeeds: an address literal or a name that resolves
    (an ``ip`` client-quota entity must be one)."""
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return True


def _kv(**fields: object) -> str:
    return " ".join(f"{key}={value}" for key, value in fields.items())


class BrokerServer:
    """Serves ``broker`` on ``host:port`` (port 0: any free port)."""

    def __init__(
        self,
        broker: Broker,
        host: str = "127.0.0.1",
        port: int = 9092,
        *,
        advertised: tuple[str, int] | None = None,
        extra_listeners: Sequence[tuple[ListenerSecurity, str, int]] = (),
        held: HeldPorts | None = None,
        listener: ListenerSecurity | None = None,
        advertised_listeners: Mapping[str, tuple[str, int]] | None = None,
        tls_contexts: Mapping[str, ssl.SSLContext] | None = None,
        sendfile: bool = False,
    ) -> None:
        self.broker = broker
        #: Fetch record sets leave by ``sendfile`` on plain TCP (module docstring)
        self.sendfile = sendfile
        broker.extensions[RESOLVER_KEY] = _resolves
        self.listener = listener
        #: listener name -> TLS context (SSL, SASL_SSL); None: built from the listeners
        self.tls_contexts = None if tls_contexts is None else dict(tls_contexts)
        self.extra_listeners = tuple(extra_listeners)
        self.advertised_listeners = dict(advertised_listeners or {})
        self.listener_ports: dict[str, int] = {}
        self._extra_servers: list[asyncio.Server] = []
        self.host = host
        self.port = port
        self.advertised = advertised
        self._server: asyncio.Server | None = None
        self._timer: asyncio.Task[None] | None = None
        self._poke = asyncio.Event()
        self._connections: dict[int, tuple[BrokerSession, ConnectionOutput]] = {}
        #: closed connections still writing what was queued (stop() aborts them)
        self._closing: set[ConnectionOutput] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._stopping = False
        #: set when the log dir failed (``LogManager.dir_failure``): the broker halts, as
        #: Kafka does when every log dir failed (``Exit.halt(1)``, no clean shutdown)
        self.halted = asyncio.Event()
        self.quotas = ConnectionQuotas(lambda: self.broker.config)
        #: set (and replaced) whenever a connection closes or handled bytes: waiters recheck
        self._changed = asyncio.Event()
        #: listening sockets kept across restarts (held_ports.py); None: bind per start
        self._held = held

    async def start(self) -> None:
        """Start the broker (if needed), listen, and start the timer."""
        if self.tls_contexts is None:
            listeners = [security for security, _, _ in self.extra_listeners]
            self.tls_contexts = listener_contexts(
                [self.listener, *listeners] if self.listener else listeners
            )
        if not self.broker.started:
            self.broker.startup()
        main = functools.partial(self._accept, listener=self.listener)
        main_tls = self.listener is not None and self.listener.tls
        self._server = await self._listen(main, self.host, self.port, main_tls)
        bound = self._server.sockets[0]
        self.port = bound.getsockname()[1]
        for security, host, port in self.extra_listeners:
            accept = functools.partial(self._accept, listener=security)
            extra = await self._listen(accept, host, port, security.tls)
            self._extra_servers.append(extra)
            self.listener_ports[security.name] = extra.sockets[0].getsockname()[1]
        self.broker.extensions[EXTENSION_KEY] = {
            security.name: self.advertised_listeners.get(
                security.name, (host, self.listener_ports[security.name])
            )
            for security, host, _ in self.extra_listeners
        }
        # Clients connect to what Metadata advertises: the bound address unless told otherwise.
        self.broker.host, self.broker.port = self.advertised or (self.host, self.port)
        self._timer = asyncio.create_task(self._run_timer(), name="lethe-timer")
        others = ",".join(f"{name}:{port}" for name, port in self.listener_ports.items())
        _log.info(
            _kv(event="listening", host=self.host, port=self.port, node=self.broker.node_id)
            + (f" listeners={others}" if others else "")
        )

    async def _listen(self, accept: Any, host: str, port: int, tls: bool = False) -> asyncio.Server:
        where = (
            {"host": host, "port": port}
            if self._held is None
            else {"sock": self._held.listener(host, port)}
        )
        if tls:  # reads nothing before the handshake (tls.start_tls_server)
            return await start_tls_server(accept, limit=_STREAM_LIMIT, **where)
        return await asyncio.start_server(accept, limit=_STREAM_LIMIT, **where)

    def poke(self) -> None:
        """Wake the timer: due times may have changed; and the waiting connections:
        requests were handled, so memory or a muted connection may be free."""
        self._poke.set()
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def queued_bytes(self) -> int:
        """Bytes received on all connections and not handled yet."""
        return sum(session.queued_bytes for session, _ in self._connections.values())

    def run_due(self) -> list[str]:
        """Run the broker's due work now (loop thread only)."""
        ran = self.broker.run_due()
        self.poke()
        return ran

    # --- connections ------------------------------------------------------------------

    async def _accept(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        listener: ListenerSecurity | None = None,
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            apply_socket_buffers(sock, self.broker.config)
        peer = writer.get_extra_info("peername")
        peer_text = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        address = str(peer[0]) if isinstance(peer, tuple) else peer_text
        try:
            if await self._admit(address):
                await self._serve(reader, writer, listener, peer_text, address)
            else:
                await self._refuse(writer)
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _admit(self, address: str) -> bool:
        """Wait for a broker-wide slot; False if ``address`` has its maximum (quotas)."""
        while not self._stopping:
            admission = self.quotas.admit(address)
            if admission is Admission.ACCEPT:
                return True
            if admission is Admission.REJECT:
                limit = self.quotas.limit_for(address)
                _log.info(
                    "Rejected connection from %s, address already has the configured "
                    "maximum of %d connections.",
                    address,
                    limit,
                )
                return False
            await self._changed.wait()  # Admission.WAIT: a connection must close first
        return False

    @staticmethod
    async def _refuse(writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()
            await writer.wait_closed()

    async def _serve(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        listener: ListenerSecurity | None,
        peer_text: str,
        address: str,
    ) -> None:
        connection_id = next(self._ids)
        principal = None
        if listener is not None and listener.tls:
            assert self.tls_contexts is not None
            principal = await handshake(
                writer,
                self.tls_contexts[listener.name],
                timeout_s=self.broker.config.get_int("connections.max.idle.ms") / 1000,
                connection_id=connection_id,
                peer=peer_text,
                rules=listener.ssl_settings.get("ssl.principal.mapping.rules", "DEFAULT"),
            )
            if principal is None:
                self.quotas.release(address)
                self._wake()
                await self._refuse(writer)
                return
        output = ConnectionOutput(writer, connection_id=connection_id)
        session = BrokerSession(
            self.broker,
            connection_id,
            send=output.send,
            close=output.close,
            peer=peer_text,
            listener=listener,
            principal=principal,
            zero_copy=self.sendfile and not (listener is not None and listener.tls),
        )
        self._connections[connection_id] = (session, output)
        _log.info(_kv(event="accepted", conn=connection_id, peer=peer_text))
        try:
            await self._pump(reader, output, session)
        except (ConnectionError, OSError) as error:
            _log.info(_kv(event="connection-error", conn=connection_id, error=repr(error)))
        except Exception:
            _log.exception(_kv(event="connection-crashed", conn=connection_id))
        finally:
            session.close()
            self._connections.pop(connection_id, None)
            self.quotas.release(address)
            self._wake()
            output.close()
            self._closing.add(output)
            try:
                await output.wait_closed()
            finally:
                self._closing.discard(output)
            _log.info(_kv(event="closed", conn=connection_id))

    async def _pump(
        self, reader: asyncio.StreamReader, output: ConnectionOutput, session: BrokerSession
    ) -> None:
        while not session.closed and not self._stopping:
            if not await self._until_readable(session):
                break
            data = await reader.read(_READ_SIZE)
            output.hold()  # the answers to every request of this read leave in one write
            try:
                session.receive_data(data)
            finally:
                output.release()
            self.poke()
            if not data:
                break
            await output.drain()

    async def _until_readable(self, session: BrokerSession) -> bool:
        """Kafka reads no muted connection (a request in flight), and starts no new
        request while its request memory is used up; a request already begun (a
        partial frame buffered) has its memory and is read to its end. Both
        waits end when requests are handled. False: the connection is done."""
        while not (session.closed or self._stopping):
            if session.wants_data and (
                session.queued_bytes > 0 or reading_allowed(self.broker.config, self.queued_bytes())
            ):
                return True
            await self._changed.wait()
        return False

    # --- time -------------------------------------------------------------------------

    async def _run_timer(self) -> None:
        while not self.halted.is_set():  # a halted broker does no more work (halt())
            due = self.broker.next_due_ms()
            timeout = None if due is None else max(0, due - self.broker.clock.now_ms()) / 1000
            self._poke.clear()
            if timeout is None or timeout > 0:
                await self._until_poked(timeout)
            if self.halted.is_set():
                return
            ran = self._run_due_if_any()
            failure = self.broker.log_manager.dir_failure
            if failure is not None:
                _log.critical(_kv(event="halt", reason="all log dirs failed", error=failure))
                await self.halt()
                return
            if ran:
                self._wake()  # due work may have answered a parked request
            await asyncio.sleep(0)

    async def _until_poked(self, timeout: float | None) -> None:
        """Wait for :meth:`poke` or ``timeout`` seconds. Every request pokes, so
        this is a timer handle and the event's own future, not ``wait_for``'s
        task per wait."""
        handle = (
            None
            if timeout is None
            else asyncio.get_running_loop().call_later(timeout, self._poke.set)
        )
        try:
            await self._poke.wait()
        finally:
            if handle is not None:
                handle.cancel()

    def _run_due_if_any(self) -> bool:
        """Run the broker's due work; False when nothing was due (a poke by a
        request that scheduled nothing due yet), which skips the wake-up."""
        due = self.broker.next_due_ms()
        if due is None or due > self.broker.clock.now_ms():
            return False
        try:
            self.broker.run_due()
        except Exception:
            _log.exception(_kv(event="timer-failed"))
        return True

    # --- shutdown ---------------------------------------------------------------------

    async def halt(self) -> None:
        """Stop serving at once, with no shutdown work (no flush, checkpoints or
        ``.kafka_cleanshutdown``): Kafka's ``Exit.halt`` after its last log dir failed.
        The next start recovers the log dir as after a crash."""
        self._stopping = True
        self.halted.set()
        self._wake()
        self.broker.background.abandon()
        if self._server is not None:
            self._server.close()
        for extra in self._extra_servers:
            extra.close()
        for session, output in list(self._connections.values()):
            session.close()
            output.close()
        if self._timer is not None and self._timer is not asyncio.current_task():
            # the loop also ends on ``halted``: a cancel racing a poke can be swallowed
            # by asyncio.wait_for before Python 3.12, and the timer must not run again
            self._timer.cancel()
            await asyncio.wait({self._timer}, timeout=_DRAIN_ON_STOP_S)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), _DRAIN_ON_STOP_S)

    async def stop(self) -> None:
        """Clean shutdown (see the module docstring); idempotent."""
        if self._stopping:
            return
        self._stopping = True
        self._wake()  # connections waiting for a slot, memory or an answer give up
        _log.info(_kv(event="stopping", port=self.port))
        # long jobs end now, not after their last slice; the registry is committed and
        # the next startup creates the logs they left (lethe_reference.background)
        self.broker.background.abandon()
        if self._server is not None:
            self._server.close()
        for extra in self._extra_servers:
            extra.close()
        for purgatory in self.broker.purgatories.all():
            purgatory.expire_all()
        await self._drain_all()
        for session, output in list(self._connections.values()):
            session.close()
            output.close()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=_DRAIN_ON_STOP_S)
        for output in [*(out for _, out in self._connections.values()), *self._closing]:
            output.abort()  # a peer that reads nothing does not hold the shutdown
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), _DRAIN_ON_STOP_S)
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        self.broker.shutdown()
        _log.info(_kv(event="stopped", port=self.port))

    async def _drain_all(self) -> None:
        drains = [output.drain() for _, output in self._connections.values()]
        if drains:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    asyncio.gather(*drains, return_exceptions=True), _DRAIN_ON_STOP_S
                )
