"""Files that are a bare array of fixed-size big-endian entries.

Theory of operation
-------------------
``.index`` (8 bytes/entry), ``.timeindex`` (12) and ``.txnindex`` (34) have no
header, no count and no checksum: the file *is* the array, and the number of
entries is ``len(file) // entry_size``::

    offset 0           size          2*size              n*size   len(file)
    +------------------+-------------+---- ... ---------+--------+
    | entry 0          | entry 1     |                  | tail   |  tail < size
    +------------------+-------------+---- ... ---------+--------+

Kafka's readers (``AbstractIndex`` rounds the mapped length down;
``TransactionIndex``'s iterator stops when fewer than 34 bytes remain) silently
ignore a partial ``tail``; only ``sanityCheck`` complains about it. The
functions here do the same and expose the tail so callers can report it.

One :class:`EntryLayout` describes an entry once, as ``(field, struct code)``
pairs. From it come both decoders, which must agree (tests check parity):

* :meth:`EntryLayout.construct` – the normative Construct schema of the whole
  file (``GreedyRange`` of the entry ``Struct``; it stops before a partial tail);
* :meth:`EntryLayout.iter_unpack` – the fast path, ``struct.iter_unpack`` over
  the whole-entry prefix, no per-entry Python parsing.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from construct import Construct, GreedyRange, Int16sb, Int32sb, Int32ub, Int64sb, Struct

from lethe_formats.errors import TruncatedError

__all__ = ["EntryLayout", "fixed_entry_array"]

_CONSTRUCT_FIELDS: dict[str, Construct[Any, Any]] = {
    "h": Int16sb,
    "i": Int32sb,
    "I": Int32ub,
    "q": Int64sb,
}


@dataclass(frozen=True)
class EntryLayout:
    """One entry: ordered (field name, struct code) pairs, big-endian."""

    name: str
    fields: tuple[tuple[str, str], ...]
    _struct: struct.Struct = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        codes = "".join(code for _, code in self.fields)
        object.__setattr__(self, "_struct", struct.Struct(">" + codes))

    @property
    def size(self) -> int:
        return self._struct.size

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)

    def entry_construct(self) -> Construct[Any, Any]:
        """The Construct ``Struct`` of one entry."""
        return Struct(*(name / _CONSTRUCT_FIELDS[code] for name, code in self.fields))

    def construct(self) -> Construct[Any, Any]:
        """The Construct schema of a whole file of these entries."""
        return fixed_entry_array(self)

    def whole_length(self, data_length: int) -> int:
        """Bytes covered by whole entries (what Kafka reads)."""
        return data_length - data_length % self.size

    def require_whole(self, data_length: int, file: str | None = None) -> None:
        """Raise :class:`TruncatedError` if the data ends inside an entry."""
        tail = data_length % self.size
        if tail:
            raise TruncatedError(
                f"partial {self.name}: {tail} trailing bytes, an entry is {self.size}",
                file=file,
                position=self.whole_length(data_length),
                field=self.name,
            )

    def iter_unpack(self, data: bytes | bytearray | memoryview) -> Iterator[tuple[Any, ...]]:
        """Fast path: every whole entry as a tuple, in file order."""
        view = memoryview(data)
        return self._struct.iter_unpack(view[: self.whole_length(len(view))])

    def parse_construct(self, data: bytes | bytearray | memoryview) -> list[tuple[Any, ...]]:
        """Normative path: the same tuples through the Construct schema."""
        parsed = self.construct().parse(bytes(data))
        return [tuple(item[name] for name in self.field_names) for item in parsed]

    def pack(self, values: Sequence[Any]) -> bytes:
        return self._struct.pack(*values)

    def build_construct(self, rows: Sequence[Sequence[Any]]) -> bytes:
        """Encode rows through the Construct schema (parity with :meth:`pack`)."""
        items = [dict(zip(self.field_names, row, strict=True)) for row in rows]
        return bytes(self.construct().build(items))


def fixed_entry_array(layout: EntryLayout) -> Construct[Any, Any]:
    """Construct schema: a header-less array of ``layout`` entries filling the file.

    ``GreedyRange`` parses entries until fewer than ``layout.size`` bytes remain,
    mirroring how Kafka ignores a partial trailing entry when reading.
    """
    return GreedyRange(layout.entry_construct())
