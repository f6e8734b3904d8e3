"""Answering a request once its background jobs have finished.

Theory of operation
-------------------
CreateTopics and CreatePartitions commit the registry at once and leave the
logs to :class:`~lethe_reference.log_creation.LogCreation` jobs. The response
must not leave before those logs exist (a client that saw success produces to
the new partitions straight away), yet a large job must not run inside the
handler. :func:`reply_after` does both: jobs with at most
:data:`INLINE_LOGS` logs to create are finished on the spot (the usual case:
a few partitions, answered at once as before), larger ones stay queued and the
response becomes a :class:`~lethe_reference.purgatory.Deferred` that completes
when the last of them finishes. The session keeps that connection muted
meanwhile, as for any parked request; the other connections are served
between the jobs' slices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from lethe_formats.protocol.schema import Struct

from lethe_reference.log_creation import LogCreation
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["INLINE_LOGS", "reply_after"]

R = TypeVar("R", bound=Struct)

#: Logs a handler creates itself before answering (a few ms each); a job with
#: more runs in the background slices.
INLINE_LOGS = 8


class _AfterJobs(Deferred[R], Generic[R]):
    """``response`` once every job it waits for has finished."""

    def __init__(self, response: R, waiting: int) -> None:
        super().__init__()
        self.response = response
        self.waiting = waiting

    def job_done(self) -> None:
        self.waiting -= 1
        if self.waiting <= 0:
            self.complete(self.response)

    def try_complete(self) -> R | None:
        return self.response if self.waiting <= 0 else None

    def on_expire(self) -> R:
        return self.response


def reply_after(broker: Broker, jobs: Sequence[LogCreation], response: R) -> R | Deferred[R]:
    """``response`` now if every job is done (small ones are finished here), else a
    deferred completed by the last job's end."""
    for job in jobs:
        if job.remaining <= INLINE_LOGS:
            broker.background.finish(job)
    pending = [job for job in jobs if broker.background.is_pending(job)]
    if not pending:
        return response
    deferred = _AfterJobs(response, len(pending))
    for job in pending:
        broker.background.when_done(job, deferred.job_done)
    return deferred
