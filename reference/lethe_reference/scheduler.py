"""Sans-IO task scheduler: named one-shot and periodic tasks keyed by due time.

Theory of operation
-------------------
Kafka runs its background work on ``KafkaScheduler``: ``kafka-log-retention``
every ``log.retention.check.interval.ms``, the checkpoint writers, the delayed
``delete-file`` of ``.deleted`` segments, and so on. This scheduler keeps the
same idea but owns no thread and no event loop. It is a priority queue of
``(due_ms, seq)`` over a :class:`~lethe_reference.clock.Clock`:

* :meth:`Scheduler.schedule` queues ``fn`` to run ``delay_ms`` after the clock's
  current time, and then every ``period_ms`` if a period is given.
* :meth:`Scheduler.run_due` runs every task whose due time is ``<= clock.now_ms()``,
  earliest first, and returns their names in the order they ran.
* :meth:`Scheduler.next_due_ms` tells the driver when to call again: the asyncio
  edge sleeps exactly until then; a virtual-time driver sets a
  :class:`~lethe_reference.clock.ManualClock` to it and calls :meth:`run_due`.

Ordering is deterministic. Tasks due at the same millisecond run in the order they
were queued (``seq`` is a counter that only grows); a periodic task's next run is
queued again after it runs, so it goes behind tasks already waiting at that time.

Periodic tasks run at a fixed rate: the next due time is ``due + period``. When
the clock jumped over several periods at once, the missed runs are merged into
one (the next due time is the first ``due + k * period`` after now), so a task
runs at most once per :meth:`run_due` call and a jump of a day does not replay
thousands of identical checks at one instant. A driver that wants every tick
steps the clock through :meth:`next_due_ms` instead of jumping.

A task that raises is logged (logger ``lethe_reference.scheduler``) and does not
stop the others, as ``KafkaScheduler`` wraps each run; a periodic task stays
scheduled. Tasks may schedule or cancel tasks (including themselves) while
:meth:`run_due` is running; new tasks already due run in the same call. A running
task may schedule a new task under its own name (the usual "run me again in X"
pattern); the new one replaces it, and a periodic task is then not requeued.
(A task that keeps rescheduling itself with delay 0 is due again at once and
would keep :meth:`run_due` busy forever; give such loops a positive delay.)
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from lethe_reference.clock import Clock

__all__ = ["Scheduler", "SchedulerError", "TaskInfo"]

_log = logging.getLogger(__name__)


class SchedulerError(ValueError):
    """A bad scheduling request: duplicate name, negative delay, period <= 0."""


@dataclass(slots=True)
class _Task:
    name: str
    fn: Callable[[], object]
    due_ms: int
    period_ms: int | None
    seq: int
    cancelled: bool = field(default=False)


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A read-only view of one queued task."""

    name: str
    due_ms: int
    period_ms: int | None


class Scheduler:
    """Named tasks on a clock; see the module docstring for the rules."""

    def __init__(self, clock: Clock, logger: logging.Logger | None = None) -> None:
        self._clock = clock
        self._log = logger if logger is not None else _log
        self._heap: list[tuple[int, int, _Task]] = []
        self._by_name: dict[str, _Task] = {}
        self._seq = 0
        self._running: _Task | None = None

    @property
    def clock(self) -> Clock:
        return self._clock

    def schedule(
        self,
        name: str,
        delay_ms: int,
        fn: Callable[[], object],
        period_ms: int | None = None,
    ) -> None:
        """Run ``fn`` ``delay_ms`` from now, then every ``period_ms`` if given.

        Names are unique among queued tasks, so that :meth:`cancel` is unambiguous;
        name per-object work accordingly (``delete-file:topic-0/00000.log``).
        """
        current = self._by_name.get(name)
        if current is not None and current is not self._running:
            raise SchedulerError(f"a task named {name!r} is already scheduled")
        if delay_ms < 0:
            raise SchedulerError(f"delay must not be negative, got {delay_ms} ms for {name!r}")
        if period_ms is not None and period_ms <= 0:
            raise SchedulerError(f"period must be positive, got {period_ms} ms for {name!r}")
        self._push(_Task(name, fn, self._clock.now_ms() + delay_ms, period_ms, 0))

    def cancel(self, name: str) -> bool:
        """Remove the task ``name``; returns whether it was scheduled."""
        task = self._by_name.pop(name, None)
        if task is None:
            return False
        task.cancelled = True
        return True

    def is_scheduled(self, name: str) -> bool:
        return name in self._by_name

    def next_due_ms(self) -> int | None:
        """Absolute due time of the earliest task, or None when nothing is queued."""
        self._drop_cancelled()
        return self._heap[0][0] if self._heap else None

    def delay_until_next_ms(self) -> int | None:
        """Milliseconds from now until the earliest task (0 if overdue), or None."""
        due = self.next_due_ms()
        return None if due is None else max(0, due - self._clock.now_ms())

    def run_due(self) -> list[str]:
        """Run every task due at the clock's current time; names in run order."""
        ran: list[str] = []
        now = self._clock.now_ms()
        while True:
            self._drop_cancelled()
            if not self._heap or self._heap[0][0] > now:
                return ran
            _, _, task = heapq.heappop(self._heap)
            self._run(task)
            ran.append(task.name)
            if self._by_name.get(task.name) is not task:
                continue  # cancelled, or replaced by a task of the same name
            if task.period_ms is None:
                del self._by_name[task.name]
            else:
                self._requeue(task, now)

    def tasks(self) -> list[TaskInfo]:
        """Queued tasks in the order they would run."""
        live = sorted((due, seq, t) for due, seq, t in self._heap if not t.cancelled)
        return [TaskInfo(t.name, t.due_ms, t.period_ms) for _, _, t in live]

    def clear(self) -> None:
        """Drop every task (broker shutdown)."""
        for task in self._by_name.values():
            task.cancelled = True
        self._by_name.clear()
        self._heap.clear()

    def __len__(self) -> int:
        return len(self._by_name)

    def _run(self, task: _Task) -> None:
        self._running = task
        try:
            task.fn()
        except Exception:
            self._log.exception("Uncaught exception in scheduled task '%s'", task.name)
        finally:
            self._running = None

    def _requeue(self, task: _Task, now: int) -> None:
        assert task.period_ms is not None
        period = task.period_ms
        missed = max(0, (now - task.due_ms) // period)
        task.due_ms += (missed + 1) * period
        self._push(task)

    def _push(self, task: _Task) -> None:
        replaced = self._by_name.get(task.name)
        if replaced is not None and replaced is not task:
            replaced.cancelled = True  # a running task rescheduled under its own name
        self._seq += 1
        task.seq = self._seq
        self._by_name[task.name] = task
        heapq.heappush(self._heap, (task.due_ms, task.seq, task))

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
