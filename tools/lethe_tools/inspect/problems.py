"""Problems found by ``lethe verify``: where, which field, what is wrong.

Theory of operation
-------------------
Checks never raise and never print: they append :class:`Problem` values to a
:class:`Problems` collector, and the command renders them at the end, one
line each, in FormatError's location style::

    <file>: byte <pos>: <field>: <message>        binary files
    <file>: line <n>: <field>: <message>          text files (checkpoints)

A decoder's :class:`~lethe_formats.errors.FormatError` converts losslessly
(:meth:`Problem.from_error`), so a problem found by a decoder and one found
by a cross-check look the same. Anything unknown (no byte, no field) is left
out of the line rather than printed as a placeholder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from lethe_formats.errors import FormatError

__all__ = ["Problem", "Problems"]


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
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.field is not None:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


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

    def error(self, error: FormatError, file: str) -> None:
        self._items.append(Problem.from_error(error, file))

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)
