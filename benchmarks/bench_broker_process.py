"""The broker under test: ``lethe broker`` as a separate process, pinned to one CPU.

Theory of operation
-------------------
The benchmark measures the reference broker as a client meets it: a process of
its own serving a loopback port, exactly what ``lethe broker --listen
127.0.0.1:0 --log-dir DIR`` runs (Kafka 4.0's quickstart settings). Port 0 lets
the kernel pick a free port; the broker logs ``event=listening ... port=N`` to
stderr once it accepts connections, so :meth:`BrokerProcess.start` follows the
log file (stderr goes to a file, never a pipe nobody drains) until that line
appears and reads the port from it.

"One core" for the broker: it runs on one event loop in one thread, and the
process is pinned to one CPU (``os.sched_setaffinity`` on the child right after
it is spawned, before the interpreter has started any thread; later threads
inherit the mask). The mask actually in force is read back and reported.

:meth:`BrokerProcess.cpu_seconds` reads the process's user + system CPU time
(all threads) from ``/proc/<pid>/stat``; a phase's broker CPU seconds over its
wall seconds is how busy the broker was, which tells whether the broker or the
client limited the rate. On a shared machine a broker can also be ready to run
while another process holds its CPU: :meth:`BrokerProcess.run_and_wait_seconds`
reads the scheduler's own account of that (``/proc/<pid>/task/*/schedstat``:
nanoseconds on a CPU, nanoseconds waiting on a run queue).
:meth:`BrokerProcess.stop` sends SIGTERM (a clean shutdown: flush,
checkpoints) and requires exit status 0.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench_timing import BenchError

__all__ = ["BrokerProcess", "lethe_command", "log_bytes", "run_and_wait_seconds"]

_LISTENING = re.compile(r"event=listening host=(\S+) port=(\d+)")
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 60.0
#: /proc/<pid>/stat fields 14 and 15 (utime, stime), counted after the ``(comm)`` field.
_UTIME_INDEX = 11


def lethe_command() -> list[str]:
    """The ``lethe`` console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("lethe")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "lethe_tools.cli"]


def cpu_seconds_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all threads (``/proc``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rpartition(")")[2].split()
    utime, stime = int(fields[_UTIME_INDEX]), int(fields[_UTIME_INDEX + 1])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def run_and_wait_seconds(pid: int) -> tuple[float, float] | None:
    """(seconds on a CPU, seconds runnable but waiting for one) of all threads of ``pid``;
    None if the kernel keeps no scheduler statistics (``/proc/<pid>/task/*/schedstat``)."""
    on_cpu = waiting = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            fields = (task / "schedstat").read_text().split()
            on_cpu += int(fields[0])
            waiting += int(fields[1])
    except (OSError, IndexError, ValueError):
        return None
    return on_cpu / 1e9, waiting / 1e9


def log_bytes(log_dir: Path, topic: str) -> int:
    """Bytes in the ``.log`` segment files of every partition of ``topic``."""
    total = 0
    for partition_dir in log_dir.glob(f"{topic}-*"):
        if partition_dir.name.rpartition("-")[2].isdigit():
            total += sum(f.stat().st_size for f in partition_dir.glob("*.log"))
    return total


class BrokerProcess:
    """``lethe broker`` on 127.0.0.1 and a free port, serving ``log_dir``."""

    def __init__(
        self,
        log_dir: Path,
        *,
        cpu: int | None,
        log_level: str = "INFO",
        listen: str = "127.0.0.1:0",
        overrides: Sequence[str] = (),
    ) -> None:
        self.log_dir = log_dir
        #: A fixed port lets clients reconnect across restarts (the crash loop).
        self.listen = listen
        self.overrides = tuple(overrides)
        self.cpu = cpu
        self.log_level = log_level
        self.stderr_path = log_dir.parent / f"{log_dir.name}.stderr"
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.affinity: list[int] = []
        self._log_start = 0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        if self.process is None:
            raise BenchError("the broker is not running")
        return self.process.pid

    def command(self) -> list[str]:
        return [
            *lethe_command(),
            "broker",
            "--listen",
            self.listen,
            "--log-dir",
            str(self.log_dir),
            "--log-level",
            self.log_level,
            *(arg for override in self.overrides for arg in ("--override", override)),
        ]

    def start(self) -> BrokerProcess:
        """Spawn, pin, and wait for the listening line; raises BenchError on failure."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._log_start = self.stderr_path.stat().st_size if self.stderr_path.exists() else 0
        with self.stderr_path.open("ab") as stderr:
            self.process = subprocess.Popen(
                self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
            )
        if self.cpu is not None:
            os.sched_setaffinity(self.process.pid, {self.cpu})
        self.affinity = sorted(os.sched_getaffinity(self.process.pid))
        self.port = self._wait_listening()
        return self

    def _wait_listening(self) -> int:
        assert self.process is not None
        deadline = time.monotonic() + _START_TIMEOUT_S
        start = self._log_start
        while time.monotonic() < deadline:
            with self.stderr_path.open("rb") as log:
                log.seek(start)
                found = _LISTENING.search(log.read().decode(errors="replace"))
            if found:
                return int(found.group(2))
            if self.process.poll() is not None:
                raise BenchError(f"broker exited {self.process.returncode}: {self.stderr_tail()}")
            time.sleep(0.05)
        self.kill()
        raise BenchError(f"broker did not listen within {_START_TIMEOUT_S} s")

    def stderr_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the broker process so far (all threads)."""
        return cpu_seconds_of(self.pid)

    def run_and_wait_seconds(self) -> tuple[float, float] | None:
        """:func:`run_and_wait_seconds` of the broker process."""
        return run_and_wait_seconds(self.pid)

    def stop(self) -> int:
        """SIGTERM, wait for the clean shutdown; raises BenchError unless it exits 0."""
        process, self.process = self.process, None
        if process is None:
            return 0
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise BenchError(f"broker did not stop within {_STOP_TIMEOUT_S} s") from None
        if status != 0:
            raise BenchError(f"broker exited {status} on SIGTERM: {self.stderr_tail()}")
        return status

    def crash(self) -> None:
        """kill -9 and reap: no flush, no checkpoints, no clean-shutdown marker."""
        process, self.process = self.process, None
        if process is not None:
            process.send_signal(signal.SIGKILL)
            process.wait()

    def kill(self) -> None:
        """Last resort on an error path: SIGKILL and reap (no clean shutdown)."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
