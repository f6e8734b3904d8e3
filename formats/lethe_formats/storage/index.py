"""The offset index (``.index``) and time index (``.timeindex``) of a segment.

Theory of operation
-------------------
Both are header-less arrays of fixed entries (see :mod:`.fixed_entries`),
big-endian, offsets stored relative to the segment's base offset (the number
in the file name)::

    .index      8 bytes/entry               .timeindex  12 bytes/entry
    +0  int32  relative offset              +0  int64  timestamp (max so far)
    +4  int32  position in the .log         +8  int32  relative offset

An ``.index`` entry's key is the *last* offset of a batch and its position the
byte where that batch starts. A ``.timeindex`` entry says "the largest
timestamp seen up to this (shallow) offset is T".

**Preallocation and zero entries.** While a segment is active Kafka keeps both
files preallocated to ``segment.index.bytes`` (10 MiB) and memory-mapped; the
unused tail is zeros. A clean shutdown or roll trims them (the golden files are
trimmed). After a crash the zeros stay, and a reopened index counts *every*
whole slot as an entry (``AbstractIndex`` sets ``entries = length / size``).
``kafka-dump-log`` copes by stopping at the first entry ``i > 0`` whose offset
equals the base offset, i.e. whose relative offset is 0 — a real index never
has one, because offsets strictly increase from entry 0. lethe's readers do the
same by default (``stop_at_zero_entry=True``), so they return what the dump
prints; pass ``False`` to get every whole slot as the broker's mmap sees it.
A trailing partial entry is ignored by the readers (Kafka rounds the length
down) and reported by the checks.

**Checks** (:func:`check_offset_index`, :func:`check_time_index`) look at every
whole slot and return :class:`~.index_problems.IndexProblem` s. Kafka's own
``sanityCheck`` rules come first, worded as Kafka words them (``kafka_check``
true): last offset ≥ base offset, length a multiple of the entry size, and for
the time index last timestamp ≥ first timestamp. Then lethe's stricter
invariants that Kafka's writer keeps: relative offsets strictly increasing (time
index: non-decreasing), timestamps increasing, positions non-negative, and
"zero-filled, untrimmed tail" flagged as such.
"""

from __future__ import annotations

from collections.abc import Iterable

from lethe_formats.model import OffsetIndexEntry, TimeIndexEntry
from lethe_formats.storage.fixed_entries import EntryLayout
from lethe_formats.storage.index_problems import IndexProblem

__all__ = [
    "OFFSET_INDEX_ENTRY",
    "OFFSET_INDEX_SCHEMA",
    "TIME_INDEX_ENTRY",
    "TIME_INDEX_SCHEMA",
    "check_offset_index",
    "check_time_index",
    "encode_offset_index",
    "encode_time_index",
    "read_offset_index",
    "read_time_index",
]

Buffer = bytes | bytearray | memoryview

OFFSET_INDEX_ENTRY = EntryLayout(
    "offset index entry", (("relative_offset", "i"), ("position", "i"))
)
TIME_INDEX_ENTRY = EntryLayout("time index entry", (("timestamp", "q"), ("relative_offset", "i")))
#: Normative Construct schemas of whole files.
OFFSET_INDEX_SCHEMA = OFFSET_INDEX_ENTRY.construct()
TIME_INDEX_SCHEMA = TIME_INDEX_ENTRY.construct()

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _stop(rows: list[tuple[int, ...]], offset_column: int, stop_at_zero_entry: bool) -> int:
    """Number of rows before the first zero-offset entry after entry 0."""
    if stop_at_zero_entry:
        for i in range(1, len(rows)):
            if rows[i][offset_column] == 0:
                return i
    return len(rows)


def read_offset_index(
    data: Buffer,
    *,
    file: str | None = None,
    stop_at_zero_entry: bool = True,
    strict: bool = False,
) -> tuple[OffsetIndexEntry, ...]:
    """Entries of an ``.index`` file (relative offsets, as stored).

    Like Kafka, ignores a partial trailing entry unless ``strict`` (then
    :class:`~lethe_formats.errors.TruncatedError`). Otherwise never raises: the
    format has no invalid byte pattern; :func:`check_offset_index` applies
    Kafka's sanity rules.
    """
    if strict:
        OFFSET_INDEX_ENTRY.require_whole(len(data), file)
    rows = list(OFFSET_INDEX_ENTRY.iter_unpack(data))
    count = _stop(rows, 0, stop_at_zero_entry)
    return tuple(OffsetIndexEntry(rel, pos) for rel, pos in rows[:count])


def read_time_index(
    data: Buffer,
    *,
    file: str | None = None,
    stop_at_zero_entry: bool = True,
    strict: bool = False,
) -> tuple[TimeIndexEntry, ...]:
    """Entries of a ``.timeindex`` file (relative offsets, as stored); see
    :func:`read_offset_index` for ``stop_at_zero_entry`` and ``strict``."""
    if strict:
        TIME_INDEX_ENTRY.require_whole(len(data), file)
    rows = list(TIME_INDEX_ENTRY.iter_unpack(data))
    count = _stop(rows, 1, stop_at_zero_entry)
    return tuple(TimeIndexEntry(ts, rel) for ts, rel in rows[:count])


def _check_range(name: str, value: int, bounds: tuple[int, int]) -> None:
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{name} {value} does not fit in {bounds[0]}..{bounds[1]}")


def encode_offset_index(entries: Iterable[OffsetIndexEntry]) -> bytes:
    """Bytes of an ``.index`` file holding ``entries`` (no preallocation)."""
    out = bytearray()
    for entry in entries:
        _check_range("relative_offset", entry.relative_offset, _INT32)
        _check_range("position", entry.position, _INT32)
        out += OFFSET_INDEX_ENTRY.pack((entry.relative_offset, entry.position))
    return bytes(out)


def encode_time_index(entries: Iterable[TimeIndexEntry]) -> bytes:
    """Bytes of a ``.timeindex`` file holding ``entries`` (no preallocation)."""
    out = bytearray()
    for entry in entries:
        _check_range("timestamp", entry.timestamp, _INT64)
        _check_range("relative_offset", entry.relative_offset, _INT32)
        out += TIME_INDEX_ENTRY.pack((entry.timestamp, entry.relative_offset))
    return bytes(out)


def _where(file: str | None) -> str:
    return file if file is not None else "<index>"


def _tail_problem(
    data: Buffer, layout: EntryLayout, label: str, file: str | None
) -> list[IndexProblem]:
    length = len(data)
    if length % layout.size == 0:
        return []
    return [
        IndexProblem(
            f"{label} {_where(file)} is corrupt, found {length} bytes which is neither positive "
            f"nor a multiple of {layout.size} (partial entry of {length % layout.size} bytes)",
            position=layout.whole_length(length),
            field=layout.name,
            kafka_check=True,
            file=file,
        )
    ]


def _zero_fill(data: Buffer, layout: EntryLayout, stop: int, total: int) -> bool:
    start, end = stop * layout.size, total * layout.size
    return stop < total and not any(bytes(memoryview(data)[start:end]))


def _zero_fill_problem(
    layout: EntryLayout, stop: int, total: int, file: str | None
) -> IndexProblem:
    return IndexProblem(
        f"{total - stop} zero-filled entries from entry {stop}: a preallocated index that was "
        "never trimmed (the broker did not shut down cleanly); kafka-dump-log stops here",
        position=stop * layout.size,
        field=layout.name,
        kafka_check=False,
        file=file,
    )


def check_offset_index(
    data: Buffer, *, base_offset: int = 0, file: str | None = None
) -> list[IndexProblem]:
    """Kafka's ``OffsetIndex.sanityCheck`` plus lethe's ordering checks."""
    rows = list(OFFSET_INDEX_ENTRY.iter_unpack(data))
    size = OFFSET_INDEX_ENTRY.size
    problems: list[IndexProblem] = []
    if rows and base_offset + rows[-1][0] < base_offset:
        problems.append(
            IndexProblem(
                f"Corrupt index found, index file {_where(file)} has non-zero size but the last "
                f"offset is {base_offset + rows[-1][0]} which is less than the base offset "
                f"{base_offset}",
                position=(len(rows) - 1) * size,
                field="relative_offset",
                kafka_check=True,
                file=file,
            )
        )
    problems += _tail_problem(data, OFFSET_INDEX_ENTRY, "Index file", file)
    stop = _stop(rows, 0, True)
    if _zero_fill(data, OFFSET_INDEX_ENTRY, stop, len(rows)):
        problems.append(_zero_fill_problem(OFFSET_INDEX_ENTRY, stop, len(rows), file))
        rows = rows[:stop]
    for i, (rel, pos) in enumerate(rows):
        if pos < 0:
            problems.append(
                IndexProblem(
                    f"entry {i}: negative position {pos}",
                    i * size + 4,
                    "position",
                    False,
                    file,
                )
            )
        if i and rel <= rows[i - 1][0]:
            problems.append(
                IndexProblem(
                    f"entry {i}: offset {base_offset + rel} is not greater than the previous "
                    f"offset {base_offset + rows[i - 1][0]}",
                    i * size,
                    "relative_offset",
                    False,
                    file,
                )
            )
    return problems


def check_time_index(
    data: Buffer, *, base_offset: int = 0, file: str | None = None
) -> list[IndexProblem]:
    """Kafka's ``TimeIndex.sanityCheck`` plus lethe's ordering checks."""
    rows = list(TIME_INDEX_ENTRY.iter_unpack(data))
    size = TIME_INDEX_ENTRY.size
    where = _where(file)
    problems: list[IndexProblem] = []
    if rows and rows[-1][0] < rows[0][0]:
        problems.append(
            IndexProblem(
                f"Corrupt time index found, time index file ({where}) has non-zero size but the "
                f"last timestamp is {rows[-1][0]} which is less than the first timestamp "
                f"{rows[0][0]}",
                position=(len(rows) - 1) * size,
                field="timestamp",
                kafka_check=True,
                file=file,
            )
        )
    if rows and rows[-1][1] < 0:
        problems.append(
            IndexProblem(
                f"Corrupt time index found, time index file ({where}) has non-zero size but the "
                f"last offset is {base_offset + rows[-1][1]} which is less than the first offset "
                f"{base_offset}",
                position=(len(rows) - 1) * size + 8,
                field="relative_offset",
                kafka_check=True,
                file=file,
            )
        )
    problems += _tail_problem(data, TIME_INDEX_ENTRY, "Time index file", file)
    stop = _stop(rows, 1, True)
    if _zero_fill(data, TIME_INDEX_ENTRY, stop, len(rows)):
        problems.append(_zero_fill_problem(TIME_INDEX_ENTRY, stop, len(rows), file))
        rows = rows[:stop]
    for i in range(1, len(rows)):
        (ts, rel), (prev_ts, prev_rel) = rows[i], rows[i - 1]
        if ts < prev_ts:
            problems.append(
                IndexProblem(
                    f"entry {i}: timestamp {ts} is less than the previous timestamp {prev_ts}",
                    i * size,
                    "timestamp",
                    False,
                    file,
                )
            )
        elif ts == prev_ts:
            problems.append(
                IndexProblem(
                    f"entry {i}: timestamp {ts} repeats the previous entry's (Kafka only "
                    "appends a larger timestamp)",
                    i * size,
                    "timestamp",
                    False,
                    file,
                )
            )
        if rel < prev_rel:
            problems.append(
                IndexProblem(
                    f"entry {i}: offset {base_offset + rel} is less than the previous offset "
                    f"{base_offset + prev_rel}",
                    i * size + 8,
                    "relative_offset",
                    False,
                    file,
                )
            )
    return problems
