"""Progress reporting for long scans: a rich bar on stderr, or nothing at all.

Theory of operation
-------------------
Scanning code calls :meth:`ScanProgress.update` with the byte position it has
reached. That call sits in per-batch loops, so it must cost next to nothing
when no bar is shown: the null object :class:`NoProgress` has an empty
``update``, and :class:`BarProgress` only forwards to rich once the position
has moved by at least 1/200 of the total, so rich (which takes a lock and may
redraw) is called a few hundred times per file at most.

A bar appears only when stderr is a terminal and the file is large enough for
the scan to take noticeable time (``MIN_BYTES``). Piped or captured stderr,
and therefore every test and every ``2>file`` redirection, never receives
escape codes: stdout stays byte-for-byte what kafka-dump-log prints, and
stderr holds only the warnings Kafka itself writes there.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Protocol, TextIO

from lethe_formats.errors import printable

__all__ = ["MIN_BYTES", "BarProgress", "NoProgress", "ScanProgress", "scan_progress"]

#: Files smaller than this scan in well under a second: no bar.
MIN_BYTES = 64 * 1024 * 1024


class ScanProgress(Protocol):
    """What scanning code sees: a context manager with a cheap ``update``."""

    def update(self, position: int) -> None: ...

    def __enter__(self) -> ScanProgress: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None: ...


class NoProgress:
    """The null object: every call is a no-op."""

    def update(self, position: int) -> None:
        return None

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        return None


class BarProgress:
    """A transient rich bar for one file, drawn on ``stream`` (stderr)."""

    def __init__(self, total: int, description: str, stream: TextIO) -> None:
        from rich.console import Console  # noqa: PLC0415 - only when a bar is shown
        from rich.markup import escape  # noqa: PLC0415
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=True,
        )
        self._task = self._progress.add_task(escape(description), total=total)
        self._step = max(total // 200, 1)
        self._next = self._step

    def update(self, position: int) -> None:
        if position >= self._next:
            self._next = position + self._step
            self._progress.update(self._task, completed=position)

    def __enter__(self) -> BarProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._progress.stop()


def scan_progress(total: int, description: str, stream: TextIO | None = None) -> ScanProgress:
    """A bar for a scan of ``total`` bytes if ``stream`` (default stderr) is a
    terminal and the scan is long; otherwise the no-op :class:`NoProgress`."""
    target = sys.stderr if stream is None else stream
    if total < MIN_BYTES or not _is_terminal(target):
        return NoProgress()
    # The description is a file name: escaped for the terminal (and in the bar, for markup).
    return BarProgress(total, printable(description), target)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False
