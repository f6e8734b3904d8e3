"""Reading text the way Kafka's Java code does, and the error it raises.

Theory of operation
-------------------
Kafka's text files (checkpoints, ``partition.metadata``, ``meta.properties``)
are parsed by a handful of JDK primitives whose edge cases decide whether a
broker accepts a file. Python's equivalents differ in small but real ways, so
lethe re-states each primitive here and the readers use nothing else:

``java_read_lines``
    ``BufferedReader.readLine``: a line ends at ``\\n``, ``\\r`` or ``\\r\\n``;
    a final line without terminator is still a line; a terminator at the very
    end does *not* start an empty line. Each line is returned with its 1-based
    number and the absolute byte offset where it starts.
``java_split``
    ``Pattern.split(line)`` (limit 0): a match at index 0 yields a leading
    empty string, trailing empty strings are dropped, no match gives
    ``[line]``. With ``limit`` > 0 trailing empties stay (``split(line, 2)``).
    Java's ``\\s`` is ASCII only: ``[ \\t\\n\\x0B\\f\\r]``.
``java_parse_int`` / ``java_parse_long``
    ``Integer.parseInt`` / ``Long.parseLong``: optional sign, at least one
    decimal digit (Java's ``Character.digit`` accepts any Unicode ``Nd``
    digit, so does this), range-checked; otherwise ``NumberFormatException``
    worded ``For input string: "..."``.

:class:`CheckpointReadError` is a :class:`~lethe_formats.errors.CheckpointError`
that also records which Java exception Kafka throws for the same input
(``kafka_exception``). The difference matters operationally: an
``IOException`` from ``CheckpointFile`` makes ``CheckpointFileWithFailureHandler``
mark the whole log directory offline, while a ``NumberFormatException`` (bad
number inside an entry) or ``IllegalArgumentException`` (negative entry count)
escapes unwrapped and only resets the value at startup.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from lethe_formats.errors import CheckpointError

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "CheckpointReadError",
    "JavaLine",
    "JavaNumberFormatError",
    "decode_utf8",
    "java_parse_int",
    "java_parse_long",
    "java_read_lines",
    "java_split",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

#: Java's ``\\s`` without UNICODE_CHARACTER_CLASS.
JAVA_WHITESPACE = "[ \\t\\n\\x0b\\f\\r]"
_JAVA_NUMBER = re.compile(r"[+-]?\d+")


class CheckpointReadError(CheckpointError):
    """A text file Kafka would reject, with the Java exception Kafka throws.

    ``kafka_exception`` is the simple class name (``"IOException"``,
    ``"NumberFormatException"``, ``"IllegalArgumentException"``,
    ``"RuntimeException"``). ``marks_dir_offline`` is true exactly when Kafka's
    failure handler would take the log directory offline (an IOException).
    """

    def __init__(
        self,
        message: str,
        *,
        kafka_exception: str = "IOException",
        file: str | None = None,
        position: int | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message, file=file, position=position, field=field, line=line)
        self.kafka_exception = kafka_exception

    @property
    def marks_dir_offline(self) -> bool:
        return self.kafka_exception == "IOException"


class JavaNumberFormatError(ValueError):
    """``java.lang.NumberFormatException``; callers turn it into a FormatError."""


@dataclass(frozen=True, slots=True)
class JavaLine:
    """One line as ``BufferedReader.readLine`` returns it."""

    number: int  # 1-based
    position: int  # absolute byte offset of its first character
    text: str


def decode_utf8(data: bytes, *, file: str | None = None) -> str:
    """Decode like ``Files.newBufferedReader(path, UTF_8)``: invalid bytes are an
    IOException (``MalformedInputException``), not replaced."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointReadError(
            f"Input length = {exc.end - exc.start}: invalid UTF-8 (MalformedInputException)",
            file=file,
            position=exc.start,
            field="encoding",
        ) from None


def java_read_lines(text: str) -> Iterator[JavaLine]:
    """Split ``text`` into lines exactly as repeated ``readLine()`` calls would."""
    number = 0
    index = 0
    byte_pos = 0
    length = len(text)
    while index < length:
        end = index
        while end < length and text[end] not in "\r\n":
            end += 1
        line = text[index:end]
        number += 1
        yield JavaLine(number, byte_pos, line)
        byte_pos += len(line.encode("utf-8", "surrogatepass"))
        if end < length:
            terminator = 2 if text.startswith("\r\n", end) else 1
            byte_pos += terminator
            end += terminator
        index = end


def java_split(line: str, pattern: str, limit: int = 0) -> list[str]:
    """``Pattern.compile(pattern).split(line, limit)`` for a positive-width pattern."""
    compiled = re.compile(pattern)
    if compiled.search(line) is None:
        return [line]
    parts = compiled.split(line, maxsplit=limit - 1 if limit > 0 else 0)
    if limit == 0:
        while parts and parts[-1] == "":
            parts.pop()
    return parts


def _parse(text: str, low: int, high: int) -> int:
    if _JAVA_NUMBER.fullmatch(text) is None:
        raise JavaNumberFormatError(f'For input string: "{text}"')
    value = int(text)
    if not low <= value <= high:
        raise JavaNumberFormatError(f'For input string: "{text}"')
    return value


def java_parse_int(text: str) -> int:
    """``Integer.parseInt(text)``; raises :class:`JavaNumberFormatError`."""
    return _parse(text, INT32_MIN, INT32_MAX)


def java_parse_long(text: str) -> int:
    """``Long.parseLong(text)``; raises :class:`JavaNumberFormatError`."""
    return _parse(text, INT64_MIN, INT64_MAX)
