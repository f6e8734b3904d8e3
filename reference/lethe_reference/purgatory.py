"""Delayed responses, sans-IO: Kafka's ``DelayedOperationPurgatory`` without threads.

Theory of operation
-------------------
Some requests cannot be answered at once: a Fetch waits for ``fetch.min.bytes``
(or ``max_wait_ms``), a Produce with ``acks=-1`` waits for the ISR, a
DeleteRecords waits for every replica's low watermark. Kafka parks such a
request in a purgatory as a *delayed operation* and re-checks it whenever
something it depends on changes; when its timeout passes it is completed as it
stands.

Here the same thing is two small objects over plain state:

* :class:`Deferred` is one pending response. A subclass says how to answer
  (:meth:`Deferred.try_complete`: the response if the condition now holds,
  else ``None``) and what to answer at the deadline (:meth:`Deferred.on_expire`).
  A deferred completes exactly once; its callbacks (the connection layer adds
  one that queues the encoded response) then run with the response.
* :class:`Purgatory` indexes pending deferreds by *watch keys* (any hashable,
  e.g. ``("orders", 0)``). :meth:`Purgatory.watch` tries once and parks the
  deferred if it is not yet complete (``tryCompleteElseWatch``); whoever changes
  the state behind a key calls :meth:`Purgatory.check` (``checkAndComplete``),
  which re-runs ``try_complete`` of the deferreds watching that key.
  :meth:`Purgatory.expire_due` completes every deferred whose deadline has come
  with ``on_expire()``.

Deadlines are absolute times on the broker's clock (``clock.now_ms() +
timeout``). When the purgatory is given a scheduler, each parked deferred also
gets a one-shot scheduler task at its deadline, so whatever drives the scheduler
(the asyncio timer, ``EmbeddedBroker.advance``) expires deferreds too; without
one, the driver calls :meth:`Purgatory.expire_due` itself.

Lifecycle of a deferred (a transition table; anything else is a bug)::

    NEW --watch, try_complete() is T--> DONE
    NEW --watch, None----------------> WATCHED
    WATCHED --check(key), T----------> DONE
    WATCHED --deadline, on_expire()--> DONE

A ``try_complete`` that raises is logged and the deferred completes through
``on_expire()`` at once, so a handler bug yields a response instead of a client
hanging until its own timeout.
"""

from __future__ import annotations

import enum
import itertools
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from lethe_reference.scheduler import Scheduler

__all__ = ["Deferred", "DeferredState", "Purgatory"]

_log = logging.getLogger(__name__)
T = TypeVar("T")
_ids = itertools.count(1)


class DeferredState(enum.Enum):
    NEW = "new"
    WATCHED = "watched"
    DONE = "done"


class Deferred(ABC, Generic[T]):
    """A response that is not ready yet; subclass and implement the two hooks."""

    def __init__(self) -> None:
        self.id = next(_ids)
        self.state = DeferredState.NEW
        self._result: T | None = None
        self._callbacks: list[Callable[[T], None]] = []
        self._keys: tuple[Hashable, ...] = ()
        self._purgatory: Purgatory | None = None
        self.deadline_ms: int | None = None

    @abstractmethod
    def try_complete(self) -> T | None:
        """The response if it can be given now, else ``None``."""

    @abstractmethod
    def on_expire(self) -> T:
        """The response at the deadline (Kafka's ``onExpiration`` + ``onComplete``)."""

    @property
    def done(self) -> bool:
        return self.state is DeferredState.DONE

    def result(self) -> T:
        """The response; only once :attr:`done`."""
        if self._result is None:
            raise RuntimeError(f"deferred #{self.id} is not complete")
        return self._result

    def add_callback(self, callback: Callable[[T], None]) -> None:
        """Run ``callback(response)`` on completion (at once if already done)."""
        if self._result is not None:
            callback(self._result)
        else:
            self._callbacks.append(callback)

    def attempt(self) -> bool:
        """Run :meth:`try_complete`; complete and return True if it answered."""
        if self.done:
            return True
        try:
            response = self.try_complete()
        except Exception:
            _log.exception("try_complete of deferred #%d failed; expiring it", self.id)
            response = self.on_expire()
        if response is None:
            return False
        self.complete(response)
        return True

    def expire(self) -> None:
        """Complete with :meth:`on_expire` unless already done."""
        if not self.done:
            self.complete(self.on_expire())

    def complete(self, response: T) -> None:
        """Force completion with ``response`` (idempotent: the first one wins)."""
        if self.done:
            return
        self.state = DeferredState.DONE
        self._result = response
        if self._purgatory is not None:
            self._purgatory._forget(self)
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(response)
            except Exception:
                _log.exception("completion callback of deferred #%d failed", self.id)


class Purgatory:
    """Deferreds parked under watch keys until completion or deadline."""

    def __init__(self, name: str, scheduler: Scheduler | None = None) -> None:
        self.name = name
        self.scheduler = scheduler
        self._watchers: dict[Hashable, dict[int, Deferred[object]]] = {}
        self._pending: dict[int, Deferred[object]] = {}

    def __len__(self) -> int:
        """Deferreds parked and not yet complete."""
        return len(self._pending)

    def watching(self, key: Hashable) -> int:
        """How many pending deferreds watch ``key``."""
        return len(self._watchers.get(key, ()))

    def watch(self, deferred: Deferred[T], keys: Iterable[Hashable], deadline_ms: int) -> bool:
        """Try ``deferred`` once; park it under ``keys`` if not complete.

        Returns whether it completed at once. ``deadline_ms`` is absolute, on
        the broker's clock.
        """
        if deferred.state is not DeferredState.NEW:
            raise RuntimeError(f"deferred #{deferred.id} is already {deferred.state.value}")
        deferred.deadline_ms = deadline_ms
        if deferred.attempt():
            return True
        deferred.state = DeferredState.WATCHED
        deferred._keys = tuple(keys)
        deferred._purgatory = self
        entry: Deferred[object] = deferred  # type: ignore[assignment]
        self._pending[deferred.id] = entry
        for key in deferred._keys:
            self._watchers.setdefault(key, {})[deferred.id] = entry
        if self.scheduler is not None:
            delay = max(0, deadline_ms - self.scheduler.clock.now_ms())
            self.scheduler.schedule(self._task_name(deferred), delay, deferred.expire)
        return False

    def check(self, key: Hashable) -> int:
        """Re-try the deferreds watching ``key``; returns how many completed."""
        watchers = self._watchers.get(key)
        if not watchers:
            return 0
        return sum(1 for deferred in list(watchers.values()) if deferred.attempt())

    def expire_due(self, now_ms: int) -> int:
        """Complete every pending deferred whose deadline is ``<= now_ms``."""
        due = [d for d in self._pending.values() if (d.deadline_ms or 0) <= now_ms]
        for deferred in due:
            deferred.expire()
        return len(due)

    def next_deadline_ms(self) -> int | None:
        """The earliest deadline of a pending deferred, or None."""
        return min((d.deadline_ms or 0 for d in self._pending.values()), default=None)

    def expire_all(self) -> int:
        """Complete everything now (shutdown)."""
        pending = list(self._pending.values())
        for deferred in pending:
            deferred.expire()
        return len(pending)

    def _task_name(self, deferred: Deferred[T]) -> str:
        return f"purgatory-{self.name}-{deferred.id}"

    def _forget(self, deferred: Deferred[T]) -> None:
        self._pending.pop(deferred.id, None)
        for key in deferred._keys:
            watchers = self._watchers.get(key)
            if watchers is not None:
                watchers.pop(deferred.id, None)
                if not watchers:
                    del self._watchers[key]
        if self.scheduler is not None:
            self.scheduler.cancel(self._task_name(deferred))

    def __repr__(self) -> str:
        return f"Purgatory({self.name!r}, pending={len(self._pending)})"
