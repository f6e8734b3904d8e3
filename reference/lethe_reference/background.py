"""Work too long for one turn of the event loop, done a bounded step at a time (sans-IO).

Theory of operation
-------------------
The broker has one event loop. A request whose effect is large (growing a topic
to thousands of partitions: a directory, a segment, two indexes and two fsyncs
each) would, done in one go, stop every other client for minutes and leave
SIGTERM unanswered until it ends. Kafka never stalls its request handlers on
such work: the controller commits the metadata, and the broker's replica
manager creates the logs afterwards.

Here such work is a :class:`Job`: an object whose :meth:`Job.step` does at most
a small, bounded amount and says whether it has finished. :class:`BackgroundWork`
keeps the jobs in submission order (a later job never overtakes an earlier one,
as Kafka's controller queue applies operations in order) and
:meth:`BackgroundWork.run` runs at most ``steps`` steps. Whoever drives the
broker's time runs it: :meth:`~lethe_reference.broker.Broker.run_due` takes one
slice, and :meth:`~lethe_reference.broker.Broker.next_due_ms` says "now" while
work is pending, so the asyncio timer runs a slice, yields to the other
connections, and runs the next. Nothing here knows about threads or sockets.

A job's ``on_done`` callbacks run once it finished (a deferred response is
answered from there). :meth:`BackgroundWork.abandon` drops what is left at
shutdown: the jobs are written so that the durable state is already committed
before they start (the metadata), and a restart finishes what they left
(the broker creates the missing logs of registered partitions at startup).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Protocol

__all__ = ["BackgroundWork", "Job"]

_log = logging.getLogger(__name__)

#: Steps per :meth:`BackgroundWork.run` slice by default. A step is one partition
#: log: a directory, a segment and two fsyncs (``partition.metadata``), a few ms
#: idle and up to ~25 ms on a busy disk; with one step per slice another
#: client's request waits about two slices (measured while 10,000 partitions
#: were being created: another client's Metadata answered in 0.047 s median,
#: 0.29 s at worst; 0.11 s median with 4 steps per slice).
DEFAULT_STEPS_PER_SLICE = 1


class Job(Protocol):
    """One long operation, advanced a bounded step at a time."""

    name: str

    def step(self) -> bool:
        """Do one bounded piece of the work; True once nothing is left."""
        ...


class BackgroundWork:
    """The broker's pending jobs, first in first out."""

    def __init__(self) -> None:
        self._jobs: deque[tuple[Job, list[Callable[[], None]]]] = deque()

    def __len__(self) -> int:
        return len(self._jobs)

    @property
    def pending(self) -> bool:
        return bool(self._jobs)

    def submit(self, job: Job) -> None:
        """Queue ``job`` behind the ones already pending."""
        self._jobs.append((job, []))

    def when_done(self, job: Job, callback: Callable[[], None]) -> None:
        """Run ``callback`` once ``job`` finished (at once if it is not pending)."""
        for queued, callbacks in self._jobs:
            if queued is job:
                callbacks.append(callback)
                return
        callback()

    def is_pending(self, job: Job) -> bool:
        return any(queued is job for queued, _ in self._jobs)

    def run(self, steps: int = DEFAULT_STEPS_PER_SLICE) -> int:
        """Run up to ``steps`` steps of the oldest jobs; returns how many ran.

        A step that raises ends its job (logged): the work it did stays, and
        what is left is redone where it is idempotent (broker startup).
        """
        ran = 0
        while self._jobs and ran < steps:
            job, callbacks = self._jobs[0]
            ran += 1
            try:
                finished = job.step()
            except Exception:
                _log.exception("background job %s failed; dropping it", job.name)
                finished = True
            if finished:
                self._jobs.popleft()
                self._run_callbacks(job, callbacks)
        return ran

    @staticmethod
    def _run_callbacks(job: Job, callbacks: list[Callable[[], None]]) -> None:
        for callback in callbacks:
            try:
                callback()
            except Exception:
                _log.exception("completion callback of job %s failed", job.name)

    def finish(self, job: Job) -> None:
        """Run ``job`` to its end now, ahead of the others (a small job a caller
        needs done before it answers; jobs on different topics are independent)."""
        index = next((i for i, (queued, _) in enumerate(self._jobs) if queued is job), None)
        if index is None:
            return
        callbacks = self._jobs[index][1]
        del self._jobs[index]
        try:
            while not job.step():
                pass
        except Exception:
            _log.exception("background job %s failed; dropping it", job.name)
        self._run_callbacks(job, callbacks)

    def run_all(self) -> None:
        """Run every pending job to its end (synchronous callers: tests, tools)."""
        while self._jobs:
            self.run()

    def abandon(self) -> int:
        """Drop every pending job without running it (shutdown); returns how many."""
        dropped = len(self._jobs)
        for job, _ in self._jobs:
            _log.info("shutting down: background job %s left for the next startup", job.name)
        self._jobs.clear()
        return dropped
