"""Size-prefixed frames and an incremental frame splitter (sans-IO).

Every Kafka request and response travels as one frame::

    +----------------+---------------------------------------+
    | size  int32 BE | size bytes: header, then message body |
    +----------------+---------------------------------------+

:class:`FrameBuffer` is the receiving half, written like h11's receive buffer:
feed it whatever bytes the socket produced (a whole frame, one byte, three
frames and a half) and take complete frame payloads out. The size is checked
as soon as its four bytes are there, before anything of that size is kept: a
negative size or one above ``max_frame_size`` raises at once (Kafka's
``InvalidReceiveException``; the broker then closes the connection). The
default maximum is Kafka's ``socket.request.max.bytes`` default, 104857600.
An error is sticky: the stream is out of sync and cannot be resumed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from lethe_formats.protocol.exceptions import FrameTooLargeError, MalformedMessageError

__all__ = ["DEFAULT_MAX_FRAME_SIZE", "FrameBuffer", "frame", "frame_prefix"]

DEFAULT_MAX_FRAME_SIZE = 104_857_600
_SIZE = struct.Struct(">i")


def frame(payload: bytes) -> bytes:
    """``payload`` with its 4-byte big-endian size prefix."""
    return _SIZE.pack(len(payload)) + payload


def frame_prefix(size: int) -> bytes:
    """The 4-byte size prefix of a ``size``-byte payload sent as several buffers."""
    return _SIZE.pack(size)


class FrameBuffer:
    """Bytes in, complete frame payloads (without the size prefix) out."""

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._data = bytearray()
        self._start = 0
        #: Stream offset of ``_data[0]``: errors name absolute stream positions.
        self._base = 0
        self._error: Exception | None = None

    def feed(self, data: bytes) -> None:
        """Append received bytes (an empty ``data`` is allowed and does nothing)."""
        self._data += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as part of a frame."""
        return len(self._data) - self._start

    @property
    def position(self) -> int:
        """Stream offset of the next frame's size field."""
        return self._base + self._start

    def next_frame(self) -> bytes | None:
        """The next complete payload, or None until more bytes arrive."""
        if self._error is not None:
            raise self._error
        if self.buffered < _SIZE.size:
            return None
        (size,) = _SIZE.unpack_from(self._data, self._start)
        self._check(size)
        end = self._start + _SIZE.size + size
        if len(self._data) < end:
            return None
        with memoryview(self._data) as view:  # one copy, not a slice and then bytes()
            payload = bytes(view[self._start + _SIZE.size : end])
        self._start = end
        self._compact()
        return payload

    def frames(self) -> Iterator[bytes]:
        """Every complete payload now buffered, in order."""
        while (payload := self.next_frame()) is not None:
            yield payload

    def _check(self, size: int) -> None:
        if size < 0:
            self._error = MalformedMessageError(
                f"Invalid receive (size = {size})", position=self.position, field="size"
            )
            raise self._error
        if size > self.max_frame_size:
            self._error = FrameTooLargeError(size, self.max_frame_size, position=self.position)
            raise self._error

    def _compact(self) -> None:
        if self._start > 65536 and self._start * 2 > len(self._data):
            del self._data[: self._start]
            self._base += self._start
            self._start = 0
