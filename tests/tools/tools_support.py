"""Shared helpers of the tools tests (importable by name; conftest is not)."""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["MUTATIONS", "Run", "mutate_bytes"]

#: Deterministic damage for the mutation tests (see :func:`mutate_bytes`).
MUTATIONS = ["flip", "truncate", "zero", "insert"]


def mutate_bytes(data: bytes, how: str, rng: random.Random) -> bytes:
    """``data`` damaged one way: 3 bit flips, cut at a random point, 40 bytes zeroed,
    or 7 random bytes inserted; an empty file becomes 9 random bytes."""
    raw = bytearray(data)
    if not raw:
        return bytes(rng.randrange(256) for _ in range(9))
    at = rng.randrange(len(raw))
    if how == "flip":
        for _ in range(3):
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del raw[at:]
    elif how == "zero":
        raw[at : at + 40] = bytes(len(raw[at : at + 40]))
    else:
        raw[at:at] = bytes(rng.randrange(256) for _ in range(7))
    return bytes(raw)


@dataclass
class Run:
    """Exit status and captured output of one ``lethe`` invocation."""

    status: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()
