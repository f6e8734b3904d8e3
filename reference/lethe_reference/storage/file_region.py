"""A slice of a segment file that travels to the socket unread (Kafka's ``FileRecords`` slice).

Theory of operation
-------------------
Kafka answers a Fetch with ``FileRecords.slice(position, size)`` of the segment
and its socket layer copies it with ``sendfile`` (``FileRecords.writeTo`` ->
``TransportLayer.transferFrom``): the record set never enters the heap. A
:class:`FileRegion` is the same value here: a file descriptor, a position and a
length, with ``len()`` and ``bytes()`` (a ``pread``) as
:class:`lethe_formats.protocol.regions.ByteRegion` asks. It knows no socket: the
server's edge sends it with ``sendfile``; TLS, the in-process loopback, the
follower fetcher and anything else that wants bytes calls ``bytes()``.

Lifetime. A region holds its own descriptor (``os.dup`` of the segment's), so
it stays readable whatever happens to the segment while it waits in a write
queue: a segment deleted by retention or DeleteRecords is unlinked and its
``SegmentFile`` closed, yet the open descriptor keeps the inode and its bytes (in
Kafka the renamed ``.deleted`` file stays open for ``file.delete.delay.ms``). The
descriptor is closed by :meth:`FileRegion.close`, or when the region is dropped.

Truncation. A segment can shrink under a region (a follower truncating to its
leader, recovery): ``FileRecords.writeTo`` then throws ("has been truncated
during write") and the network layer closes the connection; a short frame is
never sent. :meth:`FileRegion.check` and ``bytes()`` raise
:class:`TruncatedRegionError` for that, and whoever sends the region closes the
connection instead of writing a frame shorter than its size prefix says.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FileRegion", "TruncatedRegionError"]


class TruncatedRegionError(OSError):
    """The file no longer holds the region's bytes: the connection must be closed."""


class FileRegion:
    """``length`` bytes of an open file from ``position``; see the module docstring."""

    __slots__ = ("_fd", "length", "path", "position")

    def __init__(self, fd: int, position: int, length: int, path: Path) -> None:
        self._fd = -1
        self.position = position
        self.length = length
        self.path = path
        self._fd = os.dup(fd)

    def __len__(self) -> int:
        return self.length

    def __bytes__(self) -> bytes:
        self._open_fd()
        data = os.pread(self._fd, self.length, self.position)
        while len(data) < self.length:  # pread may stop short only at the end of the file
            more = os.pread(self._fd, self.length - len(data), self.position + len(data))
            if not more:
                raise self._truncated(self.position + len(data))
            data += more
        return data

    def __repr__(self) -> str:
        return f"FileRegion({self.path.name}, position={self.position}, length={self.length})"

    def fileno(self) -> int:
        """The region's own descriptor (for ``sendfile``)."""
        return self._open_fd()

    def check(self) -> None:
        """Raise :class:`TruncatedRegionError` if the file ends before the region does."""
        size = os.fstat(self._open_fd()).st_size
        if size < self.position + self.length:
            raise self._truncated(size)

    def close(self) -> None:
        """Release the descriptor (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    def _open_fd(self) -> int:
        if self._fd < 0:
            raise ValueError(f"{self!r} is closed")
        return self._fd

    def _truncated(self, size: int) -> TruncatedRegionError:
        return TruncatedRegionError(
            f"Size of FileRecords {self.path} has been truncated during write: old size "
            f"{self.length}, new size {max(0, size - self.position)}"
        )
