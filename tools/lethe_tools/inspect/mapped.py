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
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

__all__ = ["mapped", "read_small"]

#: Text files (checkpoints, metadata) are read whole only up to this size.
SMALL_FILE_LIMIT = 64 * 1024 * 1024


@contextmanager
def mapped(path: str | os.PathLike[str]) -> Iterator[bytes | mmap.mmap]:
    """The bytes of ``path``: an ``mmap`` (read-only) or ``b""`` when empty."""
    with open(path, "rb") as handle:
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
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise ValueError(f"{os.fspath(path)} is {size} bytes; expected a small text file")
        return handle.read()
