"""Where the broker's time goes: py-spy samples of the broker process, summarised.

Theory of operation
-------------------
``py-spy record --pid PID --format raw`` samples the running broker's Python
stacks (default 100 times a second) from outside the process: nothing in the
broker changes, and the reference code is profiled exactly as it serves
clients. Idle samples (the event loop waiting in ``select``) are dropped by
py-spy, so the sample count over the sampling rate is the broker's busy time,
and every share below is a share of *busy* time. The profile runs in its own
pass after the timed phases, so its overhead never touches a timed figure.

The raw output is one line per distinct stack, root first::

    frame;frame;...;frame COUNT        frame = "function (path/to/file.py:LINE)"

:func:`summarise` folds it three ways:

* self time per function (the leaf frame, line numbers dropped): where the
  interpreter actually was, C calls included (a ``sock.send`` or a CRC is
  charged to the Python line that called it);
* inclusive time per lethe function (any frame of the stack), minus the entry
  wrappers present in nearly every sample: what a call *costs* with
  everything under it;
* self time per area: the package directory of the leaf frame
  (``lethe_formats/protocol``, ``lethe_reference/storage``, ``asyncio``...).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_timing import BenchError

__all__ = ["PySpy", "area_of", "parse_raw", "py_spy_path", "summarise"]

_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
_ATTACH_TIMEOUT_S = 20.0
#: Inclusive entries present in more than this share of samples are entry wrappers.
_WRAPPER_SHARE = 0.95


def py_spy_path() -> str | None:
    return shutil.which("py-spy")


def _function(frame: str) -> tuple[str, str]:
    """(``function (file)``, file) of one raw frame, line number dropped."""
    found = _FRAME.match(frame)
    if found is None:
        return frame, ""
    return f"{found['function']} ({found['file']})", found["file"]


def area_of(file: str) -> str:
    """The package directory (two levels for lethe's packages) or module of ``file``."""
    parts = [p for p in file.split("/") if p]
    if not parts:
        return "(native or unknown)"
    if parts[0].startswith("lethe_"):
        return "/".join(parts[:2])
    if len(parts) > 1:
        return parts[0]
    return parts[0].removesuffix(".py")


def parse_raw(text: str) -> list[tuple[list[str], int]]:
    """(frames root first, sample count) per line of py-spy's raw output."""
    stacks = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            stacks.append((stack.split(";"), int(count)))
    return stacks


def _top(counter: Counter[str], total: int, limit: int) -> list[dict[str, Any]]:
    return [
        {"name": name, "samples": samples, "share": round(samples / total, 4)}
        for name, samples in counter.most_common(limit)
    ]


def summarise(text: str, rate: int, limit: int = 15) -> dict[str, Any]:
    """Self, inclusive and per-area shares of busy samples (module docstring)."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    total = 0
    for frames, count in parse_raw(text):
        total += count
        leaf, leaf_file = _function(frames[-1])
        own[leaf] += count
        areas[area_of(leaf_file)] += count
        for name in {_function(frame)[0] for frame in frames}:
            if name.split(" (", 1)[-1].startswith("lethe_"):
                inclusive[name] += count
    if total == 0:
        return {"samples": 0, "rate": rate, "busy_seconds": 0.0}
    inner = Counter({k: v for k, v in inclusive.items() if v <= _WRAPPER_SHARE * total})
    return {
        "samples": total,
        "rate": rate,
        "busy_seconds": round(total / rate, 2),
        "self": _top(own, total, limit),
        "inclusive": _top(inner, total, limit),
        "areas": _top(areas, total, limit),
    }


class PySpy:
    """``py-spy record`` attached to ``pid`` between :meth:`start` and :meth:`stop`."""

    def __init__(self, pid: int, out: Path, rate: int = 100) -> None:
        self.pid = pid
        self.out = out
        self.rate = rate
        self.log = out.with_suffix(".log")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> PySpy:
        spy = py_spy_path()
        if spy is None:
            raise BenchError("py-spy is not installed (pip install py-spy)")
        command = [spy, "record", "--format", "raw", "--rate", str(self.rate)]
        command += ["--output", str(self.out), "--pid", str(self.pid)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + _ATTACH_TIMEOUT_S
        while "Sampling process" not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop_quietly()
                raise BenchError(f"py-spy did not attach: {self.log.read_text()[-500:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> dict[str, Any]:
        """Stop sampling (SIGINT makes py-spy write its output) and summarise it."""
        process, self.process = self.process, None
        if process is None:
            raise BenchError("py-spy is not running")
        process.send_signal(signal.SIGINT)
        process.wait(_ATTACH_TIMEOUT_S)
        if not self.out.exists():
            raise BenchError(f"py-spy wrote nothing: {self.log.read_text()[-500:]}")
        return summarise(self.out.read_text(), self.rate)

    def stop_quietly(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
