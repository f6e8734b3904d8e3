"""Column-wise row buffers for the audit tables, and the one way a fault becomes a problem row.

Theory of operation
-------------------
Tasks decode millions of records; building a Python tuple or ``Row`` per
record and converting it afterwards would cost more than decoding. Rows are
therefore kept as one Python list per column (:class:`Columns`), in the
order of the table's schema, and a whole batch's records are appended with
one list comprehension per column (:meth:`Columns.extend`, constants
broadcast). The data source turns the lists into Arrow arrays in one call per
column (:mod:`lethe_tools.audit.datasource`). Rows that arrive as columns
already (the C walker's, :mod:`lethe_tools.audit.fastpath`) are kept as
Arrow record batches (:meth:`Columns.add_chunk`), in arrival order with the
listed rows.

:func:`problem_row` is the single place where an exception is turned into a
``problems`` row: typed :class:`~lethe_formats.errors.FormatError` s keep their
file, absolute position and field; anything else (an ``OSError``, a bug) keeps
its class name and message with the item's file, so no task ever fails.
"""

from __future__ import annotations

from typing import Any

from lethe_formats.errors import FormatError

from lethe_tools.audit.discover import Item
from lethe_tools.audit.schemas import TABLES

__all__ = ["RUN_COLUMNS", "Columns", "Tables", "problem_row"]


#: Columns that are constant within a batch: stored as runs (value, length), so a
#: batch of 500 records appends one value instead of 500 (see Columns.extend).
RUN_COLUMNS: dict[str, frozenset[str]] = {
    "records": frozenset(
        {
            "topic",
            "partition",
            "file",
            "segment_base_offset",
            "batch_position",
            "is_control",
            "magic",
            "is_transactional",
            "producer_id",
            "delete_horizon",
        }
    ),
}


class Columns:
    """The rows of one table so far, one list per column.

    A column in :data:`RUN_COLUMNS` keeps one value per run in ``data`` and the
    run lengths in ``runs``; every other column keeps one value per row.
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self.names = tuple(TABLES[table].fieldNames())
        self.run_names = RUN_COLUMNS.get(table, frozenset())
        self.data: dict[str, list[Any]] = {name: [] for name in self.names}
        self.runs: dict[str, list[int]] = {name: [] for name in self.run_names}
        self.count = 0
        self.listed = 0  # rows in data/runs, not yet a chunk
        self.chunks: list[Any] = []  # Arrow record batches, before the listed rows

    def add(self, row: tuple[Any, ...]) -> None:
        """Append one row given in schema order."""
        for name, value in zip(self.names, row, strict=True):
            self.data[name].append(value)
            if name in self.run_names:
                self.runs[name].append(1)
        self.count += 1
        self.listed += 1

    def extend(self, count: int, **columns: Any) -> None:
        """Append ``count`` rows: a list per varying column, a plain value for a constant one."""
        for name in self.names:
            value = columns[name]
            if isinstance(value, list):
                if name in self.run_names:
                    raise ValueError(f"{self.table}.{name} takes one value per batch")
                self.data[name].extend(value)
            elif name in self.run_names:
                self.data[name].append(value)
                self.runs[name].append(count)
            else:
                self.data[name].extend([value] * count)
        self.count += count
        self.listed += count

    def add_chunk(self, count: int, chunk: Any, to_chunk: Any) -> None:
        """Append ``count`` rows given as one Arrow record batch of this table's schema.

        ``to_chunk(self)`` turns the listed rows into a chunk first, so rows
        keep their order."""
        if self.listed:
            listed = self.listed
            self.chunks.append(to_chunk(self))  # take() counted them out
            self.count += listed
        self.chunks.append(chunk)
        self.count += count

    def take(self) -> tuple[dict[str, list[Any]], dict[str, list[int]]]:
        """The listed values and run lengths; the list buffer starts empty again."""
        data, runs = self.data, self.runs
        self.data = {name: [] for name in self.names}
        self.runs = {name: [] for name in self.run_names}
        self.count -= self.listed
        self.listed = 0
        return data, runs

    def discard(self) -> None:
        """Drop every buffered row, listed and chunked (a table the caller does not return)."""
        self.take()
        self.chunks = []
        self.count = 0

    def take_chunks(self) -> list[Any]:
        """The chunks added so far (the listed rows come after them); they leave the buffer."""
        chunks, self.chunks = self.chunks, []
        self.count = self.listed
        return chunks


class Tables:
    """One :class:`Columns` per audit table."""

    def __init__(self) -> None:
        self.partitions = Columns("partitions")
        self.segments = Columns("segments")
        self.batches = Columns("batches")
        self.records = Columns("records")
        self.indexes = Columns("indexes")
        self.checkpoints = Columns("checkpoints")
        self.offsets = Columns("offsets")
        self.problems = Columns("problems")

    def all(self) -> tuple[Columns, ...]:
        return (
            self.partitions,
            self.segments,
            self.batches,
            self.records,
            self.indexes,
            self.checkpoints,
            self.offsets,
            self.problems,
        )

    @property
    def count(self) -> int:
        return sum(columns.count for columns in self.all())


def problem_row(
    item: Item, error: BaseException, stage: str, position: int | None = None
) -> tuple[Any, ...]:
    """A problems row for ``error`` met while decoding ``item`` (schemas.PROBLEMS order).

    ``position`` stands in when the error has none (e.g. a record inside a
    compressed batch: the batch's position).
    """
    if isinstance(error, FormatError):
        where = error.position if error.position is not None else position
        message = error.message if error.line is None else f"line {error.line}: {error.message}"
        file = error.file or item.path
        return (
            file,
            where,
            error.field,
            type(error).__name__,
            message,
            item.topic,
            item.partition,
            stage,
        )
    return (
        item.path,
        position,
        None,
        type(error).__name__,
        str(error) or repr(error),
        item.topic,
        item.partition,
        stage,
    )
