"""The broker's one injectable clock: wall time by default, virtual time on demand.

Theory of operation
-------------------
Every timing rule lethe reproduces (retention.ms, delete.retention.ms, checkpoint
intervals, session timeouts, the scheduler) reads time through a :class:`Clock`
passed in by whoever builds the broker; no module calls :mod:`time` itself. That
gives two ways to run the same code:

* :class:`SystemClock` reads the operating system, for a broker serving real
  clients.
* :class:`ManualClock` only moves when told to (:meth:`ManualClock.advance`,
  :meth:`ManualClock.set`), so the conformance runner can jump a day ahead and
  see one-day retention happen in milliseconds, and tests are deterministic.

Two readings, as Kafka's ``org.apache.kafka.common.utils.Time`` has them:

* ``now_ms()``: wall-clock epoch milliseconds. This is what Kafka compares record
  timestamps and file mtimes with (``time.milliseconds()``), so it is the value
  written into LogAppendTime batches and compared against retention.ms.
* ``monotonic_ns()``: a clock that never goes backwards, for measuring
  durations (timeouts, backoffs). Only differences of two readings mean anything.

Running on another date (tests only). ``SystemClock(offset_ms)`` reads the
operating system's time plus ``offset_ms``; without the argument it takes the
offset from the environment variable :data:`OFFSET_ENV` (``LETHE_CLOCK_OFFSET_MS``,
default 0), which a test run sets so that every reference broker it starts, in
process or launched as ``lethe broker``, lives as if it were that much later: how
the kit proves that no scenario and no wall-clock test depends on today's date
(fixture record timestamps are absolute). Only ``now_ms`` moves; file mtimes stay
the operating system's, as under libfaketime (which Python 3.11's ``time.sleep``
does not survive). Never set it on a broker serving real clients.

A manual clock never goes backwards: Kafka's rules assume time only moves forward
(a segment whose age was checked cannot become younger), and a test that moves it
back is almost always a mistake, so it is refused with :class:`ClockError`.
"""

from __future__ import annotations

import os
import time
from typing import Protocol, runtime_checkable

__all__ = ["OFFSET_ENV", "Clock", "ClockError", "ManualClock", "SystemClock"]

#: The environment variable giving :class:`SystemClock`'s default offset in ms (tests only).
OFFSET_ENV = "LETHE_CLOCK_OFFSET_MS"

_NS_PER_MS = 1_000_000


class ClockError(ValueError):
    """A manual clock was asked to move backwards (or by a negative amount)."""


@runtime_checkable
class Clock(Protocol):
    """What the broker needs from time; see the module docstring."""

    def now_ms(self) -> int:
        """Wall-clock time in epoch milliseconds."""
        ...

    def monotonic_ns(self) -> int:
        """A non-decreasing nanosecond counter with an arbitrary origin."""
        ...


class SystemClock:
    """The operating system's clocks (``time.time_ns`` and ``time.monotonic_ns``), the
    wall clock shifted by ``offset_ms`` (default: :data:`OFFSET_ENV`; module docstring)."""

    __slots__ = ("_offset_ms",)

    def __init__(self, offset_ms: int | None = None) -> None:
        self._offset_ms = int(os.environ.get(OFFSET_ENV, "0")) if offset_ms is None else offset_ms

    def now_ms(self) -> int:
        return time.time_ns() // _NS_PER_MS + self._offset_ms

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def __repr__(self) -> str:
        return f"SystemClock(offset_ms={self._offset_ms})" if self._offset_ms else "SystemClock()"


class ManualClock:
    """Virtual time that moves only through :meth:`advance` and :meth:`set`.

    ``monotonic_ns()`` counts from the start value: it is
    ``(now_ms() - start_ms) * 1_000_000``, so durations measured with it agree
    exactly with the wall-clock jumps the test made.
    """

    __slots__ = ("_now_ms", "_start_ms")

    def __init__(self, start_ms: int = 0) -> None:
        if start_ms < 0:
            raise ClockError(f"start time must not be negative, got {start_ms}")
        self._start_ms = start_ms
        self._now_ms = start_ms

    def now_ms(self) -> int:
        return self._now_ms

    def monotonic_ns(self) -> int:
        return (self._now_ms - self._start_ms) * _NS_PER_MS

    def advance(self, ms: int) -> int:
        """Move forward by ``ms`` (>= 0) milliseconds; returns the new time."""
        if ms < 0:
            raise ClockError(f"cannot advance a clock by a negative amount ({ms} ms)")
        self._now_ms += ms
        return self._now_ms

    def set(self, ms: int) -> int:
        """Jump to the absolute time ``ms``, which must not be in the past."""
        if ms < self._now_ms:
            raise ClockError(f"clock cannot go backwards from {self._now_ms} to {ms} ms")
        self._now_ms = ms
        return self._now_ms

    def __repr__(self) -> str:
        return f"ManualClock(now_ms={self._now_ms})"
