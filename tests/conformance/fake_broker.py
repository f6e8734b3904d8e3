"""A scripted TCP peer for client and target tests: it answers what a test tells it to.

Real brokers answer correctly; to see the client's handling of *wrong* answers
(another correlation id, garbage bytes, silence, a closed socket, a missing
API) the tests need a peer that misbehaves on purpose. :class:`FakeBroker`
accepts connections on a loopback port and, for every request frame, calls
``answer(header, payload)``, which returns the bytes to send back (a whole
frame, or several, or nothing) or ``None`` to close the connection. Every
request header it received is kept in ``requests``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Self

from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.envelope import decode_request_header
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from lethe_formats.protocol.registry import header_versions, supported_versions
from lethe_formats.protocol.schema import Struct

Answer = Callable[[RequestHeader, bytes], bytes | None]


def response_frame(
    header: RequestHeader, body: Struct, *, correlation_id: int | None = None
) -> bytes:
    """A correct response frame to ``header`` (optionally with another correlation id)."""
    _, response_header_version = header_versions(header.api_key, header.api_version)
    cid = header.correlation_id if correlation_id is None else correlation_id
    payload = encode(ResponseHeader(cid), response_header_version) + encode(
        body, header.api_version
    )
    return frame(payload)


def api_versions_body(
    drop: frozenset[int] = frozenset(), extra: tuple[ApiVersion, ...] = ()
) -> ApiVersionsResponse:
    """Everything lethe_formats defines, minus ``drop``, plus ``extra``."""
    keys = tuple(ApiVersion(k, lo, hi) for k, lo, hi in supported_versions() if k not in drop)
    return ApiVersionsResponse(error_code=0, api_keys=keys + extra)


class LoopbackServer:
    """Accepts connections on a loopback port and talks on each in a thread of its own
    (:meth:`_talk`, defined by subclasses); a context manager that stops on exit."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.05)  # accept() wakes up to see the stop flag
        self.port = self._server.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._server.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        raise NotImplementedError


class FakeBroker(LoopbackServer):
    """See the module docstring; use as a context manager."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer
        self.requests: list[RequestHeader] = []

    def _talk(self, conn: socket.socket) -> None:
        buffer = FrameBuffer()
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buffer.feed(data)
                for payload in buffer.frames():
                    header, _ = decode_request_header(payload)
                    self.requests.append(header)
                    reply = self.answer(header, payload)
                    if reply is None:
                        return
                    conn.sendall(reply)
