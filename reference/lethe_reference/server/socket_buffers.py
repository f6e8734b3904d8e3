"""A connection's socket buffer sizes, as Kafka's ``SocketServer`` sets them.

Kafka sets ``socket.send.buffer.bytes`` (``SO_SNDBUF``) on every accepted
connection and ``socket.receive.buffer.bytes`` (``SO_RCVBUF``) on the listening
socket, which its connections inherit; -1 (``Selectable.USE_DEFAULT_BUFFER_SIZE``)
leaves the operating system's size and its autotuning. Both default to 102400,
the quickstart ``server.properties`` value too. lethe sets both on the accepted
socket, before any byte is exchanged.

It matters for speed, not only for fidelity: with the kernel's autotuned send
buffer, librdkafka's default 1 MiB fetches from ``lethe broker`` ran at 86 MB/s
on the loopback of the benchmark machine, with Kafka's 102400 at 523 MB/s (Kafka
4.0.0 itself: 500 to 523 MB/s), while 4 MiB fetches were unchanged
(``benchmarks/README.md``).
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lethe_reference.config.broker import BrokerConfig

__all__ = ["USE_DEFAULT_BUFFER_SIZE", "apply_socket_buffers"]

#: Kafka's ``Selectable.USE_DEFAULT_BUFFER_SIZE``: keep the operating system's buffer.
USE_DEFAULT_BUFFER_SIZE = -1


def apply_socket_buffers(sock: socket.socket, config: BrokerConfig) -> None:
    """Set ``sock``'s send and receive buffers from ``config`` (module docstring)."""
    for option, name in (
        (socket.SO_SNDBUF, "socket.send.buffer.bytes"),
        (socket.SO_RCVBUF, "socket.receive.buffer.bytes"),
    ):
        size = config.get_int(name)
        if size != USE_DEFAULT_BUFFER_SIZE:
            sock.setsockopt(socket.SOL_SOCKET, option, size)
