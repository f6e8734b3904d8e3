"""Run the reference broker in the foreground until SIGTERM or SIGINT.

``lethe broker`` calls :func:`run_broker`. It serves PLAINTEXT on the
``--listen`` address and, besides, every SASL_PLAINTEXT listener named in
the ``listeners`` config (e.g. ``listeners=PLAINTEXT://:9092,
SASL_PLAINTEXT://127.0.0.1:9093`` with the SASL settings of
:mod:`lethe_reference.protocol.listeners`). Logs go to stderr, one line per
event. SIGTERM and SIGINT start a clean shutdown (:meth:`BrokerServer.stop`:
close the listener, answer parked requests, flush and checkpoint the logs,
write ``.kafka_cleanshutdown``); the exit status is 0 after a clean shutdown
and 1 when the broker could not start (port in use, unreadable log directory,
invalid config) or halted because its log directory failed (an I/O error
writing in it, e.g. the dir replaced by a file: Kafka halts with status 1 when
every log dir failed, without the shutdown work).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path

from lethe_reference.broker import Broker
from lethe_reference.config import BrokerConfig
from lethe_reference.protocol.listeners import ListenerSecurity, secured_listeners
from lethe_reference.server.app import BrokerServer

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


async def _serve(
    broker: Broker,
    host: str,
    port: int,
    advertised: tuple[str, int] | None,
    extra: list[tuple[ListenerSecurity, str, int]],
) -> int:
    server = BrokerServer(broker, host, port, advertised=advertised, extra_listeners=extra)
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


def run_broker(
    log_dir: str | Path,
    *,
    config: BrokerConfig,
    host: str = "127.0.0.1",
    port: int = 9092,
    node_id: int | None = None,
    advertised: tuple[str, int] | None = None,
) -> int:
    """Serve until a signal; returns the exit status (module docstring)."""
    try:
        layers = (config.dynamic_broker, config.dynamic_default, config.static)
        extra = secured_listeners(layers)  # a SASL listener it cannot serve: exit 1
        broker = Broker(
            Path(log_dir),
            config=config,
            host=host,
            port=port,
            node_id=-1 if node_id is None else node_id,
        )
        broker.startup()
    except Exception as error:
        _log.error("event=start-failed log_dir=%s error=%s", log_dir, error)
        return 1
    return asyncio.run(_serve(broker, host, port, advertised, extra))
