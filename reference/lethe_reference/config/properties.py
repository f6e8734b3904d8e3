"""Java ``.properties`` files, read as ``java.util.Properties.load`` reads them.

Theory of operation
-------------------
``kafka-server-start.sh config/server.properties`` loads its file with
``Utils.loadProps``: ``Properties.load(InputStream)``, so the bytes are ISO-8859-1
and the syntax is Java's, which differs from INI files and ``configparser``:

* a *natural line* ends at ``\\n``, ``\\r`` or ``\\r\\n``; its leading spaces, tabs
  and form feeds are skipped; blank lines are ignored;
* a line whose first other character is ``#`` or ``!`` is a comment (a comment
  never continues onto the next line);
* a line ending in an odd number of backslashes continues: the backslash is
  dropped and the next line is appended without its leading whitespace;
* the key ends at the first unescaped ``=``, ``:``, space, tab or form feed;
  whitespace after it, then at most one ``=`` or ``:``, then whitespace again,
  separate it from the value; trailing whitespace of the value is kept;
* escapes in keys and values: ``\\t \\n \\r \\f``, ``\\uXXXX`` (exactly four hex
  digits, else the file is malformed), and ``\\`` before any other character
  stands for that character (``\\=``, ``\\:``, ``\\ ``, ``\\\\``, ``\\#``);
* a key given twice keeps the last value.

Example::

    # comment            ->  (ignored)
    log.dirs = /data/a,\\
               /data/b   ->  log.dirs = "/data/a,/data/b"
    a\\ key:value        ->  "a key" = "value"
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PropertiesError", "load_properties", "parse_properties"]

_NATURAL_LINE = re.compile(r"\r\n|\r|\n")
_WHITESPACE = " \t\f"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = set("0123456789abcdefABCDEF")


class PropertiesError(ValueError):
    """A malformed ``\\uXXXX`` escape; names the file (if any) and the line."""

    def __init__(self, message: str, *, line: int, file: str | None = None) -> None:
        where = f"{file}:{line}" if file else f"line {line}"
        super().__init__(f"{where}: {message}")
        self.line = line
        self.file = file


def load_properties(path: str | Path) -> dict[str, str]:
    """Read a properties file as ISO-8859-1, like ``Utils.loadProps``."""
    data = Path(path).read_bytes()
    return parse_properties(data.decode("latin-1"), file=str(path))


def parse_properties(text: str, *, file: str | None = None) -> dict[str, str]:
    """Keys and values of properties text, in first-appearance order."""
    result: dict[str, str] = {}
    for number, logical in _logical_lines(text):
        key_raw, value_raw = _split(logical)
        key = _unescape(key_raw, number, file)
        result[key] = _unescape(value_raw, number, file)
    return result


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, logical line) for every non-blank, non-comment line."""
    natural = _NATURAL_LINE.split(text)
    lines: list[tuple[int, str]] = []
    index = 0
    while index < len(natural):
        start = index
        line = natural[index].lstrip(_WHITESPACE)
        index += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1]
            if index >= len(natural):
                break
            line += natural[index].lstrip(_WHITESPACE)
            index += 1
        lines.append((start + 1, line))
    return lines


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split(line: str) -> tuple[str, str]:
    """Split a logical line into raw (still escaped) key and value."""
    end = 0
    backslash = False
    separator = False
    while end < len(line):
        char = line[end]
        if not backslash and char in "=:":
            separator = True
            break
        if not backslash and char in _WHITESPACE:
            break
        backslash = char == "\\" and not backslash
        end += 1
    start = end + 1 if end < len(line) else end
    while start < len(line):
        char = line[start]
        if char not in _WHITESPACE:
            if separator or char not in "=:":
                break
            separator = True
        start += 1
    return line[:end], line[start:]


def _unescape(raw: str, line: int, file: str | None) -> str:
    out: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        index += 1
        if char != "\\":
            out.append(char)
            continue
        if index >= len(raw):
            break  # a lone trailing backslash stands for nothing
        char = raw[index]
        index += 1
        if char == "u":
            digits = raw[index : index + 4]
            if len(digits) < 4 or not set(digits) <= _HEX:
                raise PropertiesError("Malformed \\uxxxx encoding.", line=line, file=file)
            out.append(chr(int(digits, 16)))
            index += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(char, char))
    return "".join(out)
