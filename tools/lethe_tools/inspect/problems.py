"""Problems found by ``lethe verify``: where, which field, what is wrong.

Theory of operation
-------------------
Checks never raise and never print: they append :class:`Problem` values to a
:class:`Problems` collector, and the command renders them at the end, one
line each, in FormatError's location style::

    <file>: byte <pos>: <field>: <message>                binary files
    <file>: line <n>: byte <pos>: <field>: <message>      text files (checkpoints)

A decoder's :class:`~lethe_formats.errors.FormatError` converts losslessly
(:meth:`Problem.from_error`), so a problem found by a decoder and one found
by a cross-check look the same. Every line names a byte and a field: a fault
of the whole file (it cannot be opened, a directory stands in its place) is at
byte 0 in the field ``file``, so a script can split every line the same way.
File names, fields and messages are escaped (:func:`printable`): they quote
names and bytes of damaged files, which must never reach a terminal raw.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from lethe_formats.errors import FormatError, printable

__all__ = ["WHOLE_FILE", "Problem", "Problems"]

#: The field of a fault that concerns the whole file rather than bytes in it.
WHOLE_FILE = "file"


@dataclass(frozen=True, slots=True)
class Problem:
    """One fault in one file."""

    file: str
    message: str
    position: int | None = None
    field: str | None = None
    line: int | None = None

    @classmethod
    def from_error(cls, error: FormatError, file: str) -> Problem:
        """The problem ``error`` describes; ``file`` names the file it came from
        (a decoder given only bytes may not know it)."""
        return cls(
            file=file,
            message=error.message,
            position=error.position,
            field=error.field,
            line=error.line,
        )

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(f"line {self.line}")
        parts.append(f"byte {0 if self.position is None else self.position}")
        parts.append(WHOLE_FILE if self.field is None else self.field)
        parts.append(self.message)
        return printable(": ".join(parts))


class Problems:
    """An ordered collector of problems, shared by every check of one run."""

    def __init__(self) -> None:
        self._items: list[Problem] = []

    def add(
        self,
        file: str,
        message: str,
        *,
        position: int | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self._items.append(Problem(file, message, position, field, line))

    def append(self, problem: Problem) -> None:
        self._items.append(problem)

    def error(self, error: FormatError, file: str) -> None:
        self._items.append(Problem.from_error(error, file))

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)
