"""Shared helpers of the tools tests (importable by name; conftest is not)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Run"]


@dataclass
class Run:
    """Exit status and captured output of one ``lethe`` invocation."""

    status: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()
