"""Buffered UTF-8 line output to stdout/stderr, independent of the locale.

Theory of operation
-------------------
Renderers hand over whole groups of lines (all lines of one batch) as a list;
:class:`LineSink` joins them, encodes them as UTF-8 and writes the bytes to the
stream's binary buffer, so the output bytes are the same under any locale
(kafka-dump-log output is UTF-8 and may hold raw control characters and
U+FFFD). One ``write`` per batch instead of one ``print`` per line keeps the
per-record cost of ``--deep-iteration`` down. Streams without a binary buffer
(a plain ``io.StringIO`` in a test) get the text instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import BinaryIO, TextIO

__all__ = ["LineSink"]


class LineSink:
    """Writes lines (without their ``\\n``) to a text stream's byte buffer."""

    def __init__(self, stream: TextIO) -> None:
        self._text = stream
        buffer: BinaryIO | None = getattr(stream, "buffer", None)
        self._bytes = buffer
        self._started = False

    def lines(self, lines: Sequence[str]) -> None:
        """Write each line followed by ``\\n`` (nothing for an empty list)."""
        if lines:
            self._write("\n".join(lines) + "\n")

    def line(self, line: str) -> None:
        self._write(line + "\n")

    def _write(self, text: str) -> None:
        if self._bytes is None:
            self._text.write(text)
            return
        if not self._started:
            self._text.flush()
            self._started = True
        self._bytes.write(text.encode("utf-8", "surrogateescape"))

    def flush(self) -> None:
        if self._bytes is not None:
            self._bytes.flush()
        else:
            self._text.flush()
