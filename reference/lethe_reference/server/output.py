"""One connection's outgoing side: responses gathered per loop turn, record sets by sendfile.

Theory of operation
-------------------
The session hands every response over as buffers through ``send`` (sans-IO, it
never waits). Writing each one at once costs a ``send()`` syscall per response:
under a producer with five requests in flight that is most of what the broker
spends on output. :class:`ConnectionOutput` therefore only queues what ``send``
gets and writes the queue once per turn of the event loop:

* the connection's pump handles what one read brought between
  :meth:`ConnectionOutput.hold` and :meth:`ConnectionOutput.release` (a flush),
  so the responses to pipelined requests leave in one write, and a lone
  response is not delayed at all;
* a response completed elsewhere (a deferred Produce or Fetch answered by
  another connection's request or by the timer) schedules a flush with
  ``call_soon``: the end of the current turn, after whatever else that turn
  completes.

Small buffers are joined into one write (``writelines`` joins them anyway before
Python 3.12); a buffer of :data:`_OWN_WRITE_BYTES` or more (a record set) is
written on its own rather than copied into the join.

Zero copy. When the server sends with ``sendfile`` (an option, :mod:`.app`), on a plain
TCP listener a Fetch response's record sets arrive as
:class:`~lethe_reference.storage.file_region.FileRegion` s and leave with
``loop.sendfile`` (``os.sendfile``: page cache to socket, as Kafka's
``FileRecords.writeTo``). That is asynchronous, so from the first region on the
queue is written by a sender task, which takes whatever ``send`` adds meanwhile,
in order, and ends when the queue is empty. Before each region it checks that
the file still holds it (Kafka's truncation check); a truncated region, a short
``sendfile`` or a socket error aborts the connection, so the peer never gets a
frame shorter than its size prefix.

Order is the order of ``send``. Back-pressure is unchanged: the pump awaits
:meth:`ConnectionOutput.drain` (the sender, then the transport's high-water
mark) before it reads again. Closing writes what is queued first, as
``transport.close()`` flushes its buffer; :meth:`ConnectionOutput.abort` drops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Iterable

from lethe_formats.protocol.regions import ByteRegion

from lethe_reference.storage.file_region import FileRegion

__all__ = ["ConnectionOutput"]

_log = logging.getLogger("lethe_reference.server")
#: A buffer this long is written by itself instead of joined with its neighbours.
_OWN_WRITE_BYTES = 32 * 1024

Buffer = bytes | ByteRegion


class ConnectionOutput:
    """The queue between a session's ``send`` and a stream writer."""

    def __init__(self, writer: asyncio.StreamWriter, *, connection_id: int = 0) -> None:
        self._writer = writer
        self._transport = writer.transport
        self._loop = asyncio.get_running_loop()
        self._held = False
        self._connection_id = connection_id
        self._pending: deque[Buffer] = deque()
        self._scheduled = False
        self._sender: asyncio.Task[None] | None = None
        self.closed = False

    def send(self, data: Buffer) -> None:
        """Queue ``data``; it leaves at the end of this loop turn at the latest."""
        if self.closed or not len(data):
            _release(data)
            return
        self._pending.append(data)
        if not (self._scheduled or self._held) and self._sender is None:
            self._scheduled = True
            self._loop.call_soon(self._scheduled_flush)

    def hold(self) -> None:
        """Queue without scheduling a flush until :meth:`release` (the pump's turn)."""
        self._held = True

    def release(self) -> None:
        """Write what was queued since :meth:`hold`."""
        self._held = False
        self.flush()

    def _scheduled_flush(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Write everything queued, up to the first file region; from there the
        sender task goes on (module docstring)."""
        if self._sender is not None or not self._pending:
            return  # the sender takes what is queued, in order
        if self._transport.is_closing():
            self._drop()
            return
        run = self._take_run()
        if run:
            _write(self._transport, run)
        if self._pending:  # a region is next
            self._sender = self._loop.create_task(self._send_queue())

    async def drain(self) -> None:
        """Wait for the sender, then while the transport holds more than its high-water mark."""
        self.flush()
        if self._sender is not None:
            await asyncio.wait({self._sender})
        await self._writer.drain()

    def close(self) -> None:
        """Write what is queued, then close (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self.flush()
        if self._sender is None:
            self._writer.close()
        # else: the sender closes when the queue is written

    def abort(self) -> None:
        """Drop what is queued and close at once."""
        self.closed = True
        if self._sender is not None:
            self._sender.cancel()
        self._drop()
        self._transport.abort()

    async def wait_closed(self) -> None:
        """Wait for the sender (close() closes after it) and the transport."""
        if self._sender is not None:
            await asyncio.wait({self._sender})
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()

    # --- the sender ---------------------------------------------------------------------

    def _take_run(self) -> list[bytes]:
        """The buffers queued before the next file region."""
        run: list[bytes] = []
        pending = self._pending
        while pending and not isinstance(pending[0], FileRegion):
            data = pending.popleft()
            run.append(data if isinstance(data, bytes) else bytes(data))
        return run

    async def _send_queue(self) -> None:
        loop = self._loop
        try:
            while self._pending:
                run = self._take_run()
                if run:
                    _write(self._transport, run)
                    continue
                region = self._pending.popleft()
                assert isinstance(region, FileRegion)
                try:
                    await self._send_region(loop, region)
                finally:
                    region.close()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # any failure ends the connection, not the broker
            _log.warning(
                "event=send-failed conn=%d error=%r; closing the connection",
                self._connection_id,
                error,
            )
            self.closed = True
            self._drop()
            if isinstance(error, ConnectionError):
                self._transport.abort()
            # else (a truncated region): Kafka's channel.close(), what was written goes first
        finally:
            self._sender = None
        if self.closed:
            self._writer.close()

    async def _send_region(self, loop: asyncio.AbstractEventLoop, region: FileRegion) -> None:
        region.check()  # FileRecords.writeTo: a truncated region is never sent short
        with open(region.fileno(), "rb", buffering=0, closefd=False) as file:
            try:
                sent = await loop.sendfile(
                    self._transport, file, region.position, len(region), fallback=False
                )
            except asyncio.SendfileNotAvailableError:  # e.g. a file system without it
                self._transport.write(bytes(region))
                return
        if sent != len(region):
            region.check()
            raise OSError(f"sendfile sent {sent} of the {len(region)} bytes of {region!r}")

    def _drop(self) -> None:
        while self._pending:
            _release(self._pending.popleft())


def _release(data: Buffer) -> None:
    if isinstance(data, FileRegion):
        data.close()


def _write(transport: asyncio.WriteTransport, buffers: Iterable[bytes]) -> None:
    """Small neighbours joined, large buffers alone (module docstring)."""
    small: list[bytes] = []
    for data in buffers:
        if len(data) < _OWN_WRITE_BYTES:
            small.append(data)
            continue
        if small:
            transport.write(small[0] if len(small) == 1 else b"".join(small))
            small = []
        transport.write(data)
    if small:
        transport.write(small[0] if len(small) == 1 else b"".join(small))
