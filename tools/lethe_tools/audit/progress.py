"""Progress while Spark runs: stage lines from the status tracker, and per-table lines.

Theory of operation
-------------------
Spark's own console progress bar is switched off (it draws over other
output and cannot be captured sensibly); instead a daemon thread polls
``SparkContext.statusTracker()`` twice a second and prints a line whenever
an active stage's completed-task count changes::

    lethe audit: stage 3: 5/12 tasks

On a terminal the line is redrawn in place (``\\r``); otherwise only changes
are printed, at most one line per stage per second, so a log file stays
short. The job adds one line per table written (:meth:`StageProgress.say`).
Everything goes to stderr: stdout carries only the job's summary.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

from pyspark import SparkContext

__all__ = ["StageProgress"]

_POLL_SECONDS = 0.5
_MIN_INTERVAL = 1.0


class StageProgress:
    """Context manager printing stage progress of ``context`` until it exits."""

    def __init__(self, context: SparkContext, stream: TextIO | None = None) -> None:
        self._tracker = context.statusTracker()
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lethe-audit-progress", daemon=True)
        self._seen: dict[int, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> StageProgress:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._end_line()

    def say(self, text: str) -> None:
        """One line of the job's own progress (a table written, a step begun)."""
        with self._lock:
            self._end_line()
            print(f"lethe audit: {text}", file=self._stream, flush=True)

    def _end_line(self) -> None:
        if self._tty and self._seen:
            print(file=self._stream, flush=True)

    def _run(self) -> None:
        while not self._stop.wait(_POLL_SECONDS):
            try:
                self._poll()
            except Exception:  # a status query after shutdown must not kill the job
                return

    def _poll(self) -> None:
        now = time.monotonic()
        for stage_id in self._tracker.getActiveStageIds():
            info = self._tracker.getStageInfo(stage_id)
            if info is None:
                continue
            done, total = info.numCompletedTasks, info.numTasks
            last = self._seen.get(stage_id)
            if last is not None and (last[0] == done or now - last[1] < _MIN_INTERVAL):
                continue
            self._seen[stage_id] = (done, now)
            with self._lock:
                line = f"lethe audit: stage {stage_id}: {done}/{total} tasks"
                if self._tty:
                    print(f"\r{line}", end="", file=self._stream, flush=True)
                else:
                    print(line, file=self._stream, flush=True)
