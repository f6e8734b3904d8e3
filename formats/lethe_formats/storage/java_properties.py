"""Java ``Properties`` files as ``Properties.load`` reads and ``store`` writes them.

Theory of operation
-------------------
``meta.properties`` is read with ``Properties.load(InputStream)`` (so bytes are
**ISO-8859-1**, non-Latin-1 text only via ``\\uXXXX``) and written with
``Properties.store(PrintWriter, "")`` (UTF-8, nothing escaped to ``\\u``)::

    #                                  the (empty) comment argument
    #Sat Nov 21 19:26:41 UTC 2026      new Date().toString()
    node.id=1                          entries in hash-table order
    directory.id=05_gI4MKRaSA2QZ4_r_7Dg
    version=1
    cluster.id=2N81Oue8RyCowbZXcMNpzg

Reading (``Properties.LineReader`` + ``loadConvert``):

* natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``; leading `` \\t\\f`` is
  skipped; blank lines are ignored;
* a line whose first non-blank char is ``#`` or ``!`` is a comment (comments
  never continue);
* a line ending in an odd number of backslashes continues on the next one,
  whose leading whitespace is skipped;
* the key ends at the first unescaped ``=``, ``:`` or whitespace; whitespace,
  one optional ``=``/``:`` and more whitespace follow; the rest is the value;
* escapes: ``\\t \\n \\r \\f``, ``\\uXXXX`` (exactly four hex digits, else
  ``IllegalArgumentException: Malformed \\uxxxx encoding.``), ``\\x`` → ``x``;
* a repeated key keeps its last value.

Writing escapes ``\\ \\t \\n \\r \\f = : # !`` everywhere, spaces everywhere in
a key and only the leading one in a value. The entry order of a JDK 17 broker
(the golden files) is ``ConcurrentHashMap`` bucket order; :func:`java_hash_order`
reproduces it for up to 11 keys (before the table would resize). JDK 18+ sorts
keys instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "JavaProperties",
    "JavaPropertiesError",
    "PropertyLine",
    "format_java_properties",
    "java_date_comment",
    "java_hash_order",
    "parse_java_properties",
]

_BLANK = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_STORE_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}


class JavaPropertiesError(ValueError):
    """``IllegalArgumentException`` from ``Properties.load``; carries the line."""

    def __init__(self, message: str, line: int, position: int) -> None:
        super().__init__(message)
        self.line = line
        self.position = position


@dataclass(frozen=True, slots=True)
class PropertyLine:
    """One key/value pair with where its logical line starts."""

    key: str
    value: str
    line: int  # 1-based natural line number of the logical line's start
    position: int  # offset of that line in the decoded text


@dataclass(frozen=True, slots=True)
class JavaProperties:
    """Entries in file order (repeats kept) and comment lines verbatim."""

    entries: tuple[PropertyLine, ...]
    comments: tuple[str, ...]

    def as_dict(self) -> dict[str, str]:
        return {entry.key: entry.value for entry in self.entries}

    def find(self, key: str) -> PropertyLine | None:
        """The entry that wins for ``key`` (the last one), or None."""
        found = None
        for entry in self.entries:
            if entry.key == key:
                found = entry
        return found


def _natural_lines(text: str) -> Iterator[tuple[int, int, str]]:
    number, start, length = 0, 0, len(text)
    while start < length:
        end = start
        while end < length and text[end] not in "\r\n":
            end += 1
        number += 1
        yield number, start, text[start:end]
        start = end + (2 if text.startswith("\r\n", end) else 1)


def _odd_backslashes(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _logical_lines(text: str) -> Iterator[tuple[bool, int, int, str]]:
    """(is_comment, line number, position, text) of each logical line."""
    natural = _natural_lines(text)
    for number, position, raw in natural:
        line = raw.lstrip(_BLANK)
        if not line:
            continue
        if line[0] in "#!":
            yield True, number, position, line
            continue
        while _odd_backslashes(line):
            line = line[:-1]
            following = next(natural, None)
            if following is None:
                break
            line += following[2].lstrip(_BLANK)
        yield False, number, position, line


def _unescape(text: str, line: int, position: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        i += 1
        if char != "\\" or i >= len(text):
            if char != "\\":
                out.append(char)
            continue
        char = text[i]
        i += 1
        if char == "u":
            digits = text[i : i + 4]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise JavaPropertiesError("Malformed \\uxxxx encoding.", line, position)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(char, char))
    return "".join(out)


def _split_key(line: str) -> tuple[str, str]:
    index, backslash = 0, False
    while index < len(line):
        char = line[index]
        if not backslash and (char in "=:" or char in _BLANK):
            break
        backslash = char == "\\" and not backslash
        index += 1
    key, rest = line[:index], line[index:]
    rest = rest.lstrip(_BLANK)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANK)
    return key, rest


def parse_java_properties(text: str) -> JavaProperties:
    """Parse decoded text like ``Properties.load`` (decode bytes as Latin-1 first)."""
    comments = []
    entries = []
    for is_comment, number, position, line in _logical_lines(text):
        if is_comment:
            comments.append(line)
            continue
        key, value = _split_key(line)
        entries.append(
            PropertyLine(
                _unescape(key, number, position),
                _unescape(value, number, position),
                number,
                position,
            )
        )
    return JavaProperties(tuple(entries), tuple(comments))


def _escape(text: str, *, is_key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char == " " and (is_key or index == 0):
            out.append("\\ ")
        elif char in _STORE_ESCAPES:
            out.append(_STORE_ESCAPES[char])
        elif char in "=:#!":
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def java_date_comment(moment: datetime) -> str:
    """``Date.toString()`` in UTC: ``Sat Nov 21 19:26:41 UTC 2026``."""
    return moment.astimezone(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")


def format_java_properties(
    items: Iterable[tuple[str, str]], *, date_comment: str, comment: str = ""
) -> str:
    """``Properties.store(writer, comment)`` output; ``items`` in the order to write."""
    lines = [f"#{comment}", f"#{date_comment}"]
    lines += [f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}" for key, value in items]
    return "".join(line + "\n" for line in lines)


def _java_string_hash(text: str) -> int:
    value = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        value = (31 * value + int(unit, 16)) & 0xFFFFFFFF
    return value


def java_hash_order(keys: Sequence[str]) -> list[str]:
    """Order in which a fresh JDK 9–17 ``Properties`` (a ConcurrentHashMap of 16
    bins) iterates ``keys`` inserted in the given order. More than 11 keys would
    trigger a resize, which this does not model: they are returned unchanged."""
    if len(keys) > 11:
        return list(keys)

    def bucket(key: str) -> int:
        value = _java_string_hash(key)
        return ((value ^ (value >> 16)) & 0x7FFFFFFF) & 15

    return sorted(keys, key=bucket)  # stable: same-bin keys keep insertion order
