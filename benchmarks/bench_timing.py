"""Timing primitives: best of N in-process, best of N subprocesses, CPU pinning.

Theory of operation
-------------------
Every figure is the *best* of N runs (``time.perf_counter`` wall time): on a
shared machine the fastest run is the one least disturbed by other work, and
it is what the code can do; the other runs are kept in the results so the
spread is visible. In-process runs must return the same value each time (a
record count), which catches a reader that silently stops early.

Subprocess runs time the whole process, interpreter start included, as
``time kafka-dump-log.sh ...`` times the JVM's; stdout goes to ``/dev/null``
and a non-zero exit status or any stderr output fails the benchmark rather
than producing a figure for work that was not done.

:class:`OtherWork` says how busy the machine was with *other* processes:
all CPUs' busy time from ``/proc/stat`` minus this process's and its waited-for
children's CPU time (``os.times``), over the run. The load average cannot
tell, since this benchmark's own busy process is part of it.

``pinned(cpu)`` restricts this process to one CPU for the "one core" figures
and restores the previous mask afterwards, so subprocesses started outside
the block are not pinned.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["BenchError", "OtherWork", "best_of", "pinned", "run_command", "time_command"]

T = TypeVar("T")


class BenchError(RuntimeError):
    """A measured step did not do its work (wrong count, failed command)."""


def best_of(repeat: int, work: Callable[[], T]) -> tuple[list[float], T]:
    """Run ``work`` ``repeat`` times; (seconds of each run, the result all runs agree on)."""
    runs: list[float] = []
    result: T | None = None
    for index in range(max(1, repeat)):
        start = time.perf_counter()
        value = work()
        runs.append(time.perf_counter() - start)
        if index and value != result:
            raise BenchError(f"run {index} returned {value!r}, run 0 returned {result!r}")
        result = value
    assert result is not None
    return runs, result


def run_command(command: Sequence[str], env: dict[str, str]) -> float:
    """Seconds for one run of ``command`` (stdout discarded); raises on failure."""
    start = time.perf_counter()
    done = subprocess.run(
        list(command), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0 or done.stderr:
        stderr = done.stderr.decode(errors="replace")[:2000]
        raise BenchError(f"{' '.join(command)} exited {done.returncode}: {stderr}")
    return seconds


def time_command(repeat: int, command: Sequence[str], env: dict[str, str]) -> list[float]:
    """Seconds of ``repeat`` runs of ``command``."""
    return [run_command(command, env) for _ in range(max(1, repeat))]


@contextmanager
def pinned(cpu: int | None) -> Iterator[int | None]:
    """Pin this process to ``cpu`` inside the block (no-op where unsupported or None)."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        yield None
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)


def _busy_cpu_seconds() -> float | None:
    """CPU seconds all CPUs spent busy since boot (Linux ``/proc/stat``), else None."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class OtherWork:
    """CPU time used by other processes between construction and :meth:`stop`."""

    def __init__(self) -> None:
        self._busy = _busy_cpu_seconds()
        self._own = _own_cpu_seconds()
        self._start = time.perf_counter()

    def stop(self) -> dict[str, float | None]:
        """Wall seconds, and CPU seconds used by other processes (None if unknown)."""
        wall = time.perf_counter() - self._start
        busy = _busy_cpu_seconds()
        other = None
        if busy is not None and self._busy is not None:
            other = max(0.0, (busy - self._busy) - (_own_cpu_seconds() - self._own))
        return {"wall_seconds": round(wall, 1), "other_cpu_seconds": other}
