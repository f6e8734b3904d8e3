"""An asyncio event loop on a background thread, for the embedded entry points.

Theory of operation
-------------------
:class:`~lethe_reference.embedded.EmbeddedBroker` and
:class:`~lethe_reference.embedded_cluster.EmbeddedCluster` serve from a loop of
their own so that synchronous callers (tests, the conformance runner) can drive
them. Both need the same four things, which live here once:

* :meth:`LoopThread.start` creates the loop, runs it forever on a daemon thread
  and returns once the thread has set it as its event loop;
* :meth:`LoopThread.submit` runs a coroutine on that loop and waits for its
  result (bounded, so a wedged broker fails the caller instead of hanging it);
* :meth:`LoopThread.stop` stops the loop, joins the thread and closes the loop;
* :meth:`LoopThread.is_current` tells whether the caller already is on that
  thread (or no thread runs), where work must be done directly, not submitted.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """One event loop on one daemon thread named ``name``."""

    def __init__(self, name: str, timeout_s: float) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self.name} is already running")
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            ready.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name=self.name, daemon=True)
        self._thread.start()
        ready.wait()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and return its result (at most ``timeout_s``)."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(self.timeout_s)

    def stop(self) -> None:
        """Stop the loop, join the thread, close the loop (nothing when not running)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(self.timeout_s)
            loop.close()
        finally:
            self._loop, self._thread = None, None

    def is_current(self) -> bool:
        """True on the loop's own thread, and when no thread runs."""
        return self._thread is None or threading.current_thread() is self._thread
