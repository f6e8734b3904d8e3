"""Read-only access to segment and index files without reading them whole.

Theory of operation
-------------------
Segments reach a gigabyte; ``mmap`` lets the scanner and the CRC work on the
page cache directly, and ``memoryview`` slices of the map cost nothing.
``mmap`` refuses empty files, so an empty file yields ``b""`` instead; the
callers do not care which they get (both are buffers).

A map cannot be closed while a ``memoryview`` of it is alive (``BufferError``).
All walkers release their views before returning, so closing happens at the
end of the ``with`` block; if a view escaped anyway, the map is left to the
garbage collector rather than turning a finished scan into a crash.

Only regular files are opened (:func:`_open_regular`): opening a FIFO blocks
until some writer appears, and a device or socket has no file content. Kafka
lists only regular files when it loads a log; such a thing in the place of
one of its files is reported like any unreadable file (an ``OSError``).
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import BinaryIO

__all__ = ["mapped", "read_small"]

#: Text files (checkpoints, metadata) are read whole only up to this size.
SMALL_FILE_LIMIT = 64 * 1024 * 1024


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``open(path, "rb")`` for a regular file; an ``OSError`` for anything else."""
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(path))
    for test, what in _SPECIAL:
        if test(mode):
            raise OSError(errno.EINVAL, f"is {what}, not a regular file", os.fspath(path))
    # O_NONBLOCK: a FIFO swapped in after the check must not block the open
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


@contextmanager
def mapped(path: str | os.PathLike[str]) -> Iterator[bytes | mmap.mmap]:
    """The bytes of ``path``: an ``mmap`` (read-only) or ``b""`` when empty."""
    with _open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            yield b""
            return
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield view
        finally:
            with suppress(BufferError):  # a view escaped: the GC closes the map
                view.close()


def read_small(path: str | os.PathLike[str], limit: int = SMALL_FILE_LIMIT) -> bytes:
    """The whole content of a small file; raises ValueError beyond ``limit``."""
    with _open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise ValueError(f"{os.fspath(path)} is {size} bytes; expected a small text file")
        return handle.read()
