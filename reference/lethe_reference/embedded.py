"""The reference broker in-process: the public entry point for tests and the conformance kit.

Theory of operation
-------------------
:class:`EmbeddedBroker` wraps a :class:`~lethe_reference.broker.Broker` and its
:class:`~lethe_reference.server.app.BrokerServer` on a real loopback port, so
any client library can use :attr:`EmbeddedBroker.bootstrap`. Two ways to run it:

* from synchronous code, ``with EmbeddedBroker(tmp_path) as kafka:`` starts an
  event loop in a background thread (daemon, named ``lethe-embedded``) and
  stops it on exit; every call that touches broker state is run *in that
  thread* (:meth:`EmbeddedBroker.call`), since the broker is single-threaded;
* from asyncio code, ``async with EmbeddedBroker(tmp_path) as kafka:`` serves on
  the running loop, no thread.

Virtual time: pass ``clock=ManualClock(start_ms)`` and drive it with
:meth:`EmbeddedBroker.advance`, which moves the clock and runs whatever became
due (retention, checkpoints, file deletion, purgatory deadlines) in the loop
thread before it returns. A jump runs each periodic task once, not once per
missed period (see :mod:`lethe_reference.scheduler`); step in smaller amounts
to see every tick.

:meth:`EmbeddedBroker.restart` shuts the broker down cleanly and starts a new
one on the same log directory, clock and port, so clients can reconnect to the
same bootstrap address (a restart as Kafka's own clients experience it). The
listening sockets are held over the restart (:mod:`lethe_reference.server.held_ports`),
so no other process can take the port in between.

SASL: ``sasl_port`` (0 = any free port) adds a SASL_PLAINTEXT listener beside
the PLAINTEXT one, configured from ``config`` as Kafka reads it
(``listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN`` and
``listener.name.sasl_plaintext.plain.sasl.jaas.config`` with ``user_<name>``
accounts, :mod:`lethe_reference.protocol.listeners`);
:attr:`EmbeddedBroker.sasl_bootstrap` is its address. It keeps its port over
restarts, as the PLAINTEXT one does.

Injected failures: :meth:`EmbeddedBroker.inject_failure` arms an environmental
failure (a log dir gone offline, an unexpected error while deleting;
:mod:`lethe_reference.injected_failures`) on the running broker, in its loop
thread; a restart clears them.

The static config defaults to Kafka's quickstart ``server.properties`` values
(:mod:`lethe_reference.server.defaults`); ``config`` replaces them. Files are
written without fsync by default (``durable=False``): an embedded broker dies
with its test, and the file contents are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from lethe_reference.broker import Broker
from lethe_reference.clock import Clock, ManualClock, SystemClock
from lethe_reference.config import BrokerConfig
from lethe_reference.injected_failures import inject
from lethe_reference.protocol.listeners import SASL_PLAINTEXT, listener_security
from lethe_reference.server.app import BrokerServer
from lethe_reference.server.defaults import broker_config
from lethe_reference.server.held_ports import HeldPorts
from lethe_reference.server.loop_thread import LoopThread

__all__ = ["EmbeddedBroker"]

T = TypeVar("T")
_START_TIMEOUT_S = 30.0


class EmbeddedBroker:
    """A reference broker on a loopback port; see the module docstring."""

    def __init__(
        self,
        log_dir: str | Path,
        *,
        config: BrokerConfig | None = None,
        clock: Clock | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        durable: bool = False,
        sasl_port: int | None = None,
    ) -> None:
        self.log_dir = Path(log_dir)
        self.sasl_port = sasl_port
        self.config = config if config is not None else broker_config()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.host = host
        self.port = port
        self.durable = durable
        self._server: BrokerServer | None = None
        self._runner = LoopThread("lethe-embedded", _START_TIMEOUT_S)
        #: the listening sockets, kept over restarts (server/held_ports.py)
        self._held = HeldPorts()

    # --- state ---------------------------------------------------------------------------

    @property
    def broker(self) -> Broker:
        """The broker's state (read it through :meth:`call` while a thread serves it)."""
        if self._server is None:
            raise RuntimeError("the embedded broker is not running")
        return self._server.broker

    @property
    def bootstrap(self) -> str:
        """``host:port`` for clients' ``bootstrap.servers``."""
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def _new_server(self) -> BrokerServer:
        broker = Broker(
            self.log_dir,
            config=self.config,
            clock=self.clock,
            host=self.host,
            port=self.port,
            durable=self.durable,
        )
        extra = []
        if self.sasl_port is not None:
            config = self.config
            layers = (config.dynamic_broker, config.dynamic_default, config.static)
            security = listener_security(layers, SASL_PLAINTEXT, SASL_PLAINTEXT)
            extra.append((security, self.host, self.sasl_port))
        return BrokerServer(broker, self.host, self.port, extra_listeners=extra, held=self._held)

    @property
    def sasl_bootstrap(self) -> str:
        """``host:port`` of the SASL_PLAINTEXT listener (only with ``sasl_port``)."""
        if self.sasl_port is None:
            raise RuntimeError("the embedded broker has no SASL listener (sasl_port=None)")
        return f"{self.host}:{self.sasl_port}"

    async def _start_server(self) -> None:
        server = self._new_server()
        await server.start()
        self.port = server.port
        if self.sasl_port is not None:
            self.sasl_port = server.listener_ports[SASL_PLAINTEXT]
        self._server = server

    async def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop()

    # --- synchronous use (background thread) ----------------------------------------------

    def start(self) -> EmbeddedBroker:
        """Start serving from a background thread; returns ``self``."""
        if self._runner.running or self._server is not None:
            raise RuntimeError("the embedded broker is already running")
        self._runner.start()
        self._submit(self._start_server())
        return self

    def stop(self, *, keep_ports: bool = False) -> None:
        """Clean shutdown, then stop the thread (idempotent). ``keep_ports``: the listening
        sockets stay bound for the next :meth:`start` (a restart in two calls), so no
        other process can take the port meanwhile; otherwise they are released."""
        try:
            if self._runner.running:
                try:
                    self._submit(self._stop_server())
                finally:
                    self._runner.stop()
        finally:
            if not keep_ports:
                self._held.close()

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._runner.submit(coroutine)

    def _in_loop_thread(self) -> bool:
        return self._runner.is_current()

    def call(self, fn: Callable[[Broker], T]) -> T:
        """Run ``fn(broker)`` where the broker lives (its loop thread) and return the result."""

        async def run() -> T:
            return fn(self.broker)

        if self._in_loop_thread():
            return fn(self.broker)
        return self._submit(run())

    # --- asynchronous use (current loop) ---------------------------------------------------

    async def __aenter__(self) -> EmbeddedBroker:
        if self._server is not None:
            raise RuntimeError("the embedded broker is already running")
        await self._start_server()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stop_server()
        self._held.close()

    # --- time and restarts -------------------------------------------------------------------

    def advance(self, ms: int) -> list[str]:
        """Move the manual clock ``ms`` forward and run what became due; returns task names."""
        if not isinstance(self.clock, ManualClock):
            raise TypeError("advance() needs the broker to run on a ManualClock")
        clock = self.clock

        def step(_: Broker) -> list[str]:
            clock.advance(ms)
            assert self._server is not None
            return self._server.run_due()

        return self.call(step)

    def trigger_cleaning(self) -> int:
        """Wake the log cleaner now, on the broker's task, and wait for it: every
        cleanable log is cleaned once (``LogCleaner.clean_now``), then segment
        deletion runs on compacted logs as after each cleaner attempt in Kafka.
        Returns the number of logs cleaned."""

        def clean(broker: Broker) -> int:
            cleaned = broker.cleaner.clean_now()
            broker.cleaner.delete_old_segments()
            return cleaned

        return self.call(clean)

    def inject_failure(self, kind: str, topic: str, partitions: list[int]) -> None:
        """Arm the environmental failure ``kind`` on ``topic``'s ``partitions``
        (:func:`lethe_reference.injected_failures.inject`; ValueError for an unknown kind)."""
        self.call(lambda broker: inject(broker, kind, topic, partitions))

    def restart(self) -> None:
        """Clean shutdown and a fresh broker on the same log dir, clock and port."""
        if self._runner.running:
            self._submit(self._restart())
        else:
            raise RuntimeError("restart() from async code: use `await restart_async()`")

    def crash_restart(self) -> None:
        """A crash and a start: the running broker stops serving with no shutdown work
        (:meth:`BrokerServer.halt`: no flush, checkpoints or ``.kafka_cleanshutdown``, as
        after SIGKILL; bytes already written stay, as the page cache keeps them), then a
        fresh broker recovers the same log dir, clock and port."""
        self._submit(self._crash_restart())

    async def _crash_restart(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.halt()
        await self._start_server()

    async def restart_async(self) -> None:
        """:meth:`restart` for ``async with`` use."""
        await self._restart()

    async def _restart(self) -> None:
        await self._stop_server()
        await self._start_server()
