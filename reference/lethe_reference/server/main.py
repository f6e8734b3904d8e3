"""Run the reference broker in the foreground until SIGTERM or SIGINT.

``lethe broker`` calls :func:`run_broker`. Its listeners come from Kafka's
``listeners`` setting (every entry served, the first one the main listener;
e.g. ``listeners=PLAINTEXT://:9092,SASL_PLAINTEXT://127.0.0.1:9093,SSL://:9094``
with the SASL and ``ssl.*`` settings of :mod:`lethe_reference.protocol.listeners`),
and what Metadata
advertises from ``advertised.listeners``; the ``--listen`` / ``--advertise``
addresses only fill in when the config names no listener, as Kafka's
defaults do. Every port is bound before the log directory is touched: a port
in use, or a TLS listener whose keystore, truststore or password cannot be
used (:mod:`.tls`), ends the run with exit status 1, nothing initialised and no
"started" line. Logs go to stderr, one line per event. SIGTERM and SIGINT
start a clean shutdown (:meth:`BrokerServer.stop`: close the listener, answer
parked requests, flush and checkpoint the logs, write
``.kafka_cleanshutdown``); the exit status is 0 after a clean shutdown and 1
when the broker could not start (port in use, unreadable log directory,
invalid config) or halted because its log directory failed (an I/O error
writing in it, e.g. the dir replaced by a file: Kafka halts with status 1 when
every log dir failed, without the shutdown work).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import ssl
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lethe_reference.broker import Broker
from lethe_reference.config import BrokerConfig
from lethe_reference.protocol.listeners import (
    ListenerSecurity,
    advertised_listeners,
    configured_listeners,
)
from lethe_reference.server.allocator import keep_large_buffers
from lethe_reference.server.app import BrokerServer
from lethe_reference.server.held_ports import HeldPorts
from lethe_reference.server.tls import listener_contexts

__all__ = ["configure_logging", "parse_listen", "run_broker"]

_log = logging.getLogger("lethe_reference.server")


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) -> (host, port); ValueError if malformed."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit():
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    port = int(port_text)
    if not 0 <= port <= 65535:
        raise ValueError(f"port out of range in {text!r}")
    return host.strip("[]") or "0.0.0.0", port


def configure_logging(level: int = logging.INFO) -> None:
    """One line per record on stderr: time, level, logger, message."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


Listener = tuple[ListenerSecurity, str, int]


async def _serve(
    broker: Broker,
    listeners: Sequence[Listener],
    advertised: Mapping[str, tuple[str, int]],
    held: HeldPorts,
    tls: Mapping[str, ssl.SSLContext],
    *,
    sendfile: bool = False,
) -> int:
    (main, host, port), *extra = listeners
    server = BrokerServer(
        broker,
        host,
        port,
        advertised=advertised.get(main.name),
        extra_listeners=extra,
        held=held,
        listener=main,
        advertised_listeners=advertised,
        tls_contexts=tls,
        sendfile=sendfile,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
    except OSError as error:
        _log.error("event=start-failed error=%r", error)
        broker.shutdown()
        return 1
    halted = asyncio.create_task(server.halted.wait())
    signalled = asyncio.create_task(stop.wait())
    await asyncio.wait({halted, signalled}, return_when=asyncio.FIRST_COMPLETED)
    if server.halted.is_set():  # its log dir failed: exit 1 with no shutdown work, as Kafka
        signalled.cancel()
        return 1
    halted.cancel()
    _log.info("event=signal action=shutdown")
    await server.stop()
    return 0


def _routable(host: str) -> str:
    """Kafka advertises the canonical host name for a listener bound to every interface."""
    return socket.getfqdn() if host in ("", "0.0.0.0", "::") else host


def _bind_all(listeners: Sequence[Listener], held: HeldPorts) -> list[Listener]:
    """Bind every listener (OSError if one cannot be); port 0 becomes the bound port."""
    return [(security, host, held.bind(host, port)) for security, host, port in listeners]


def run_broker(
    log_dir: str | Path,
    *,
    config: BrokerConfig,
    host: str = "127.0.0.1",
    port: int = 9092,
    node_id: int | None = None,
    advertised: tuple[str, int] | None = None,
    sendfile: bool = False,
) -> int:
    """Serve until a signal; returns the exit status (module docstring). ``sendfile``:
    Fetch record sets leave by ``sendfile`` on plain TCP listeners (:mod:`.app`)."""
    keep_large_buffers()  # this process is the broker's own (allocator.py)
    layers = (config.dynamic_broker, config.dynamic_default, config.static)
    held = HeldPorts()
    try:
        listeners = configured_listeners(layers) or [(ListenerSecurity(), host, port)]
        addresses = advertised_listeners(layers)
        tls = listener_contexts(security for security, _, _ in listeners)
        listeners = _bind_all(listeners, held)
    except Exception as error:  # a listener it cannot serve or bind: nothing initialised
        held.close()
        _log.error("event=start-failed log_dir=%s error=%s", log_dir, error)
        return 1
    main, main_host, main_port = listeners[0]
    own = {security.name: (_routable(h), p) for security, h, p in listeners}
    if advertised is not None:
        own[main.name] = advertised
    addresses = own | addresses  # advertised.listeners first, then --advertise, then bound
    try:
        broker = Broker(
            Path(log_dir),
            config=config,
            host=main_host,
            port=main_port,
            node_id=-1 if node_id is None else node_id,
        )
        broker.startup()
    except Exception as error:
        held.close()
        _log.error("event=start-failed log_dir=%s error=%s", log_dir, error)
        return 1
    try:
        return asyncio.run(_serve(broker, listeners, addresses, held, tls, sendfile=sendfile))
    finally:
        held.close()
