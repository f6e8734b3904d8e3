"""A finding of an index sanity check, and which of them Kafka itself makes.

Theory of operation
-------------------
Index checks return a list of :class:`IndexProblem` instead of raising, so one
pass can report everything wrong with a file. Each problem says whether Kafka's
own ``sanityCheck`` (``OffsetIndex``/``TimeIndex``/``TransactionIndex``) would
throw ``CorruptIndexException`` for it (``kafka_check=True``: at startup Kafka
deletes the index and rebuilds it from the ``.log``), or whether it is a stricter
lethe-only invariant that Kafka's writer upholds but its loader never verifies.
``as_error()`` turns a problem into the typed error for callers that want to raise.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.errors import CorruptIndexError

__all__ = ["IndexProblem"]


@dataclass(frozen=True, slots=True)
class IndexProblem:
    """One thing wrong with an index file, anchored at an absolute byte position."""

    message: str
    position: int
    field: str
    kafka_check: bool
    file: str | None = None

    def as_error(self) -> CorruptIndexError:
        return CorruptIndexError(
            self.message, file=self.file, position=self.position, field=self.field
        )

    def __str__(self) -> str:
        return str(self.as_error())
