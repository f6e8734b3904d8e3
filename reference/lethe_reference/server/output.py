"""One connection's outgoing side: responses gathered per loop turn, written together.

Theory of operation
-------------------
The session hands every response over as buffers through ``send`` (sans-IO, it
never waits). Writing each one at once costs a ``send()`` syscall per response:
under a producer with five requests in flight that is most of what the broker
spends on output. :class:`ConnectionOutput` therefore only queues what ``send``
gets and writes the queue once per turn of the event loop:

* the connection's pump calls :meth:`ConnectionOutput.flush` right after the
  session handled what one read brought, so the responses to pipelined requests
  leave in one write, and a lone response is not delayed at all;
* a response completed elsewhere (a deferred Produce or Fetch answered by
  another connection's request or by the timer) schedules a flush with
  ``call_soon``: the end of the current turn, after whatever else that turn
  completes.

Order is the order of ``send``; back-pressure is unchanged (the pump awaits
:meth:`ConnectionOutput.drain`, the transport's own high-water mark). Closing
writes what is queued first, as ``transport.close()`` flushes its buffer.

Small buffers are joined into one write (``writelines`` joins them anyway before
Python 3.12); a buffer of :data:`_OWN_WRITE_BYTES` or more (a record set) is
written on its own rather than copied into the join.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

__all__ = ["ConnectionOutput"]

#: A buffer this long is written by itself instead of joined with its neighbours.
_OWN_WRITE_BYTES = 32 * 1024


class ConnectionOutput:
    """The queue between a session's ``send`` and a stream writer."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._transport = writer.transport
        self._pending: list[bytes] = []
        self._scheduled = False
        self.closed = False

    def send(self, data: bytes) -> None:
        """Queue ``data``; it leaves at the end of this loop turn at the latest."""
        if self.closed or not data:
            return
        self._pending.append(data)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._scheduled_flush)

    def _scheduled_flush(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Write everything queued (module docstring)."""
        if not self._pending or self._transport.is_closing():
            self._pending.clear()
            return
        pending, self._pending = self._pending, []
        _write(self._transport, pending)

    async def drain(self) -> None:
        """Wait while the transport holds more than its high-water mark."""
        self.flush()
        await self._writer.drain()

    def close(self) -> None:
        """Write what is queued, then close (idempotent)."""
        if self.closed:
            return
        self.flush()
        self.closed = True
        self._writer.close()


def _write(transport: asyncio.WriteTransport, buffers: Sequence[bytes]) -> None:
    """Small neighbours joined, large buffers alone (module docstring)."""
    if len(buffers) == 1:
        transport.write(buffers[0])
        return
    small: list[bytes] = []
    for data in buffers:
        if len(data) < _OWN_WRITE_BYTES:
            small.append(data)
            continue
        if small:
            transport.write(b"".join(small))
            small = []
        transport.write(data)
    if small:
        transport.write(b"".join(small))
