"""Record sets not in memory: a value the encoders carry for ``records`` without reading it.

Theory of operation
-------------------
Kafka answers a Fetch with slices of its segment files (``FileRecords``) and
lets the socket layer copy them from the page cache (``sendfile``), so a record
set never passes through the broker's heap. A broker built on this library does
the same by putting a :class:`ByteRegion` (e.g. a file region: file, position,
length) where a message holds ``bytes``. The encoders ask such a value only for
``len()`` and ``bytes()``: :func:`~lethe_formats.protocol.compiler.encode`
reads it (``bytes()``), :func:`~lethe_formats.protocol.compiler.encode_buffers`
passes one of 32 KiB or more through as the same object (a smaller one is read
into the surrounding buffer), so it reaches whoever writes the frame, which
decides how to send it. Decoding always yields ``bytes``.
"""

from __future__ import annotations

from typing import Protocol, TypeGuard

__all__ = ["ByteRegion", "in_memory"]


class ByteRegion(Protocol):
    """A byte string read on demand: its length now, its bytes when asked."""

    def __len__(self) -> int: ...

    def __bytes__(self) -> bytes: ...


def in_memory(value: object) -> TypeGuard[bytes | bytearray | memoryview]:
    """True for the buffer types (bytes, bytearray, memoryview); False for a region."""
    return type(value) is bytes or isinstance(value, bytearray | memoryview)
