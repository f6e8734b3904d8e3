"""Listening sockets that outlive one server, so a restart cannot lose its port.

Theory of operation
-------------------
A restart of the embedded broker (:class:`~lethe_reference.embedded.EmbeddedBroker`)
used to close its listener and bind the same port again. Between the two, the
port is free, and on a busy machine another process's outgoing connection may
take it (an ephemeral port from port 0 lies in the range the kernel hands out
for outgoing connections): the new bind fails with EADDRINUSE and the broker
stays down. :class:`HeldPorts` binds each listener once and keeps that socket
open for the broker's whole life; every server gets a duplicate of it
(``socket.dup``), so closing a server closes only its duplicate and the port
stays bound and listening. Connections arriving during the restart wait in
the listen backlog and are accepted by the next server, as a client of a
restarting Kafka broker would see a slow connect rather than a refusal.
:meth:`HeldPorts.close` releases the ports (the broker's final stop).
"""

from __future__ import annotations

import socket

__all__ = ["HeldPorts"]

_BACKLOG = 128


class HeldPorts:
    """Bound, listening sockets by (host, port), handed out as duplicates."""

    def __init__(self) -> None:
        self._sockets: dict[tuple[str, int], socket.socket] = {}

    def listener(self, host: str, port: int) -> socket.socket:
        """A duplicate of the listening socket for ``host:port`` (port 0: a new port,
        then held under the port the kernel chose)."""
        held = self._sockets.get((host, port)) if port else None
        if held is None:
            held = socket.create_server((host, port), backlog=_BACKLOG)
            self._sockets[(host, held.getsockname()[1])] = held
        return held.dup()

    def bind(self, host: str, port: int) -> int:
        """Bind ``host:port`` now (OSError if it cannot be) and hold it; the bound port.

        ``lethe broker`` binds every listener this way before it touches the log
        directory, so a port in use stops it before anything is initialised."""
        held = socket.create_server((host, port), backlog=_BACKLOG)
        bound: int = held.getsockname()[1]
        self._sockets[(host, bound)] = held
        return bound

    def close(self) -> None:
        for held in self._sockets.values():
            held.close()
        self._sockets.clear()
