"""Small parts of the coordinator: partition choice, keyed timers, pending replies.

Theory of operation
-------------------
* :func:`partition_for` puts a group in ``__consumer_offsets`` partition
  ``abs(hashCode(group_id)) % partitions``, with Java's ``String.hashCode``
  (31-based over UTF-16 code units, wrapped to int32) and Kafka's
  ``Utils.abs`` (which maps ``Integer.MIN_VALUE`` to 0).
* :class:`Timers` is Kafka's coordinator timer without a thread: one deadline
  per key; scheduling a key again replaces its deadline; :meth:`Timers.fire_due`
  runs what is due, earliest first, ties in scheduling order. Callbacks may
  schedule or cancel timers; a new timer already due runs in the same call.
* :class:`Pending` is a reply that is not known yet (a JoinGroup waiting for the
  rebalance, a SyncGroup waiting for the leader). The coordinator completes it
  exactly once, later, from another request or a timer; the server layer hooks
  :meth:`Pending.add_done_callback` to send the response then.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Pending", "PendingError", "Timers", "java_string_hash", "partition_for"]

T = TypeVar("T")


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` of ``text`` (an int32)."""
    units = text.encode("utf-16-be", "surrogatepass")
    value = 0
    for index in range(0, len(units), 2):
        value = (31 * value + int.from_bytes(units[index : index + 2], "big")) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def partition_for(group_id: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition that holds ``group_id``."""
    hashed = java_string_hash(group_id)
    return (0 if hashed == -(1 << 31) else abs(hashed)) % partitions


class PendingError(RuntimeError):
    """A pending reply read before it was completed, or completed twice."""


class Pending(Generic[T]):
    """A reply the coordinator will produce later."""

    __slots__ = ("_callbacks", "_done", "_result", "label")

    def __init__(self, label: str = "") -> None:
        self.label = label
        self._done = False
        self._result: T | None = None
        self._callbacks: list[Callable[[T], None]] = []

    @property
    def done(self) -> bool:
        return self._done

    def result(self) -> T:
        """The reply; :class:`PendingError` while it is not known."""
        if not self._done:
            raise PendingError(f"{self.label or 'reply'} is still pending")
        return self._result  # type: ignore[return-value]

    def add_done_callback(self, callback: Callable[[T], None]) -> None:
        """Call ``callback(result)`` on completion (now, if already complete)."""
        if self._done:
            callback(self.result())
        else:
            self._callbacks.append(callback)

    def complete(self, result: T) -> None:
        """Set the reply (coordinator side); a second completion is an error."""
        if self._done:
            raise PendingError(f"{self.label or 'reply'} completed twice")
        self._done = True
        self._result = result
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(result)

    def __repr__(self) -> str:
        state = f"done: {self._result!r}" if self._done else "pending"
        return f"Pending({self.label!r}, {state})"


@dataclass(order=True)
class _Entry:
    deadline: int
    seq: int
    key: Hashable = field(compare=False)
    callback: Callable[[], None] = field(compare=False)
    live: bool = field(default=True, compare=False)


class Timers:
    """Keyed one-shot deadlines; see the module docstring."""

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._by_key: dict[Hashable, _Entry] = {}
        self._seq = 0

    def schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[], None]) -> None:
        """Run ``callback`` at ``deadline_ms``, replacing any timer under ``key``."""
        self.cancel(key)
        self._seq += 1
        entry = _Entry(deadline_ms, self._seq, key, callback)
        self._by_key[key] = entry
        heapq.heappush(self._heap, entry)

    def cancel(self, key: Hashable) -> None:
        entry = self._by_key.pop(key, None)
        if entry is not None:
            entry.live = False

    def deadline(self, key: Hashable) -> int | None:
        entry = self._by_key.get(key)
        return None if entry is None else entry.deadline

    def next_deadline(self) -> int | None:
        while self._heap and not self._heap[0].live:
            heapq.heappop(self._heap)
        return self._heap[0].deadline if self._heap else None

    def fire_due(self, now_ms: int) -> int:
        """Run every timer due at ``now_ms``; returns how many ran."""
        ran = 0
        while (deadline := self.next_deadline()) is not None and deadline <= now_ms:
            entry = heapq.heappop(self._heap)
            del self._by_key[entry.key]
            entry.live = False
            entry.callback()
            ran += 1
        return ran
