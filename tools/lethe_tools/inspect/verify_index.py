"""Verify ``.index``, ``.timeindex`` and ``.txnindex`` files, alone and against their ``.log``.

Theory of operation
-------------------
The single-file rules (sizes a multiple of the entry size, Kafka's
``sanityCheck`` conditions, ordering, untrimmed zero tails) live in
``lethe_formats.storage`` (``check_offset_index``/``check_time_index``/
``check_txn_index``); their findings are turned into problems here. The
cross-checks need the segment, summarised once by
:func:`~lethe_tools.inspect.verify_log.verify_segment` (sorted batch start
positions, last offsets, max timestamps), and cost one ``bisect`` per entry::

    .index     entry (relative offset R, position P)
               P must be where a batch starts, and base + R that batch's last
               offset (LogSegment.append indexes each batch by its last offset)
    .timeindex entry (timestamp T, relative offset R)
               base + R must be the last offset of a batch whose maxTimestamp is T
               (the "max timestamp so far" and the batch holding it)
    .txnindex  entry lastOffset (the ABORT marker) must lie in this segment:
               >= its base offset (Kafka's sanityCheck) and < the next segment's

The ``.index`` rule is Kafka 4.0's per-batch indexing (``LogSegment.append``
loops over the batches of an append). Brokers older than that indexed a
multi-batch append (a follower's fetch, a cleaner pass) by its largest offset
at the position of its *first* batch; such entries are reported here, as
kafka-dump-log reports them under "Mismatches in :<file>".

Entries are read as kafka-dump-log reads them (stopping at a zero entry after
the first), so an untrimmed preallocated tail is reported once by the storage
check and not again for every zero entry.
"""

from __future__ import annotations

from bisect import bisect_left

from lethe_formats.errors import FormatError
from lethe_formats.storage.index import (
    check_offset_index,
    check_time_index,
    read_offset_index,
    read_time_index,
)
from lethe_formats.storage.index_problems import IndexProblem
from lethe_formats.storage.txn_index import check_txn_index, read_txn_index

from lethe_tools.inspect.problems import Problems
from lethe_tools.inspect.verify_log import SegmentSummary

__all__ = ["verify_offset_index", "verify_time_index", "verify_txn_index"]

_OFFSET_ENTRY = 8
_TIME_ENTRY = 12
_TXN_ENTRY = 34


def _report(found: list[IndexProblem], path: str, problems: Problems) -> None:
    for problem in found:
        problems.add(path, problem.message, position=problem.position, field=problem.field)


def verify_offset_index(
    data: bytes, path: str, base_offset: int, segment: SegmentSummary | None, problems: Problems
) -> None:
    """Check an ``.index`` file; with ``segment``, also against its ``.log``."""
    _report(check_offset_index(data, base_offset=base_offset, file=path), path, problems)
    if segment is None:
        return
    log_name = segment.path
    positions = segment.positions
    for i, entry in enumerate(read_offset_index(data)):
        offset = base_offset + entry.relative_offset
        slot = bisect_left(positions, entry.position)
        if entry.position < 0:
            continue  # already reported as a negative position by the storage check
        if slot == len(positions) or positions[slot] != entry.position:
            problems.add(
                path,
                f"entry {i}: position {entry.position} is not the start of a batch in {log_name}",
                position=i * _OFFSET_ENTRY + 4,
                field="position",
            )
        elif segment.last_offsets[slot] != offset:
            problems.add(
                path,
                f"entry {i}: offset {offset} is not the last offset "
                f"{segment.last_offsets[slot]} of the batch at position {entry.position}",
                position=i * _OFFSET_ENTRY,
                field="relative_offset",
            )


def verify_time_index(
    data: bytes, path: str, base_offset: int, segment: SegmentSummary | None, problems: Problems
) -> None:
    """Check a ``.timeindex`` file; with ``segment``, also against its ``.log``."""
    _report(check_time_index(data, base_offset=base_offset, file=path), path, problems)
    if segment is None:
        return
    lasts = segment.last_offsets
    for i, entry in enumerate(read_time_index(data)):
        offset = base_offset + entry.relative_offset
        slot = bisect_left(lasts, offset)
        if slot == len(lasts) or lasts[slot] != offset:
            problems.add(
                path,
                f"entry {i}: offset {offset} is not the last offset of any batch in {segment.path}",
                position=i * _TIME_ENTRY + 8,
                field="relative_offset",
            )
        elif segment.max_timestamps[slot] != entry.timestamp:
            problems.add(
                path,
                f"entry {i}: timestamp {entry.timestamp} is not the maxTimestamp "
                f"{segment.max_timestamps[slot]} of the batch ending at offset {offset}",
                position=i * _TIME_ENTRY,
                field="timestamp",
            )


def verify_txn_index(
    data: bytes, path: str, base_offset: int, next_base: int | None, problems: Problems
) -> None:
    """Check a ``.txnindex``; ``next_base`` is the next segment's base offset, if any."""
    _report(check_txn_index(data, base_offset=base_offset, file=path), path, problems)
    if next_base is None:
        return
    try:
        entries = read_txn_index(data, file=path)
    except FormatError:
        return  # already reported by check_txn_index
    for i, txn in enumerate(entries):
        if txn.last_offset >= next_base:
            problems.add(
                path,
                f"entry {i}: lastOffset {txn.last_offset} lies beyond this segment "
                f"(the next segment starts at {next_base})",
                position=i * _TXN_ENTRY + 18,
                field="last_offset",
            )
