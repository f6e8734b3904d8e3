"""Accepted connections get Kafka's socket buffer sizes (``SocketServer``).

Kafka sets ``SO_SNDBUF`` to ``socket.send.buffer.bytes`` and ``SO_RCVBUF`` to
``socket.receive.buffer.bytes`` (both 102400 by default), and leaves the operating
system's sizes for -1. The expected values are what this kernel reports for a
socket given the same sizes (Linux doubles the number asked for), or, for -1, what
an untouched socket reports.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from lethe_reference.broker import Broker
from lethe_reference.server import BrokerServer
from lethe_reference.server.defaults import broker_config


def _reported(sizes: dict[int, int]) -> dict[int, int]:
    """The buffer sizes the kernel reports for a TCP socket given ``sizes``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        for option, size in sizes.items():
            probe.setsockopt(socket.SOL_SOCKET, option, size)
        return {
            option: probe.getsockopt(socket.SOL_SOCKET, option)
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF)
        }


def _served_buffers(tmp_path: Path, overrides: dict[str, str]) -> dict[int, int]:
    """The buffer sizes of the broker's side of one accepted connection."""
    broker = Broker(tmp_path, config=broker_config(overrides=overrides))

    async def scenario() -> dict[int, int]:
        server = BrokerServer(broker, "127.0.0.1", 0)
        await server.start()
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        while not server._connections:
            await asyncio.sleep(0.01)
        (_, output), *_ = server._connections.values()
        sock = output._transport.get_extra_info("socket")
        sizes = {
            option: sock.getsockopt(socket.SOL_SOCKET, option)
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF)
        }
        writer.close()
        await server.stop()
        return sizes

    return asyncio.run(scenario())


def test_kafkas_default_buffer_sizes_are_set_on_every_connection(tmp_path: Path) -> None:
    served = _served_buffers(tmp_path, {})
    assert served == _reported({socket.SO_SNDBUF: 102400, socket.SO_RCVBUF: 102400})


@pytest.mark.parametrize(
    ("send", "receive"), [("65536", "131072"), ("-1", "-1")], ids=["configured", "os-default"]
)
def test_configured_sizes_apply_and_minus_one_keeps_the_os_default(
    tmp_path: Path, send: str, receive: str
) -> None:
    overrides = {"socket.send.buffer.bytes": send, "socket.receive.buffer.bytes": receive}
    served = _served_buffers(tmp_path, overrides)
    asked = {
        option: int(value)
        for option, value in ((socket.SO_SNDBUF, send), (socket.SO_RCVBUF, receive))
        if value != "-1"
    }
    expected = _reported(asked)
    if not asked:  # an accepted socket's untouched sizes: compare with another accepted one
        with socket.create_server(("127.0.0.1", 0)) as listener:
            client = socket.create_connection(listener.getsockname())
            accepted, _ = listener.accept()
            expected = {
                option: accepted.getsockopt(socket.SOL_SOCKET, option)
                for option in (socket.SO_SNDBUF, socket.SO_RCVBUF)
            }
            accepted.close()
            client.close()
    assert served == expected
    if asked:
        assert served != _served_buffers(tmp_path / "other", {})  # the setting made a difference
