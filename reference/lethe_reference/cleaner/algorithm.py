"""One cleaning round over a log's segments, as plain data in and out (``Cleaner.doClean``).

Theory of operation
-------------------
:func:`clean_log` is pure: it takes every segment of a log as a
:class:`SourceSegment` (bytes, mtime, index sizes, ``.txnindex`` entries) and
the round's :class:`CleanParams`, and returns the replacement segments. Files,
renames and checkpoints are the caller's (:mod:`.swap`, :mod:`.manager`).

1. **Legacy horizon**: the mtime of the last segment below the first dirty
   offset minus ``delete.retention.ms`` (0 if there is none); it only matters
   for magic 0/1 tombstones.
2. **Offset map** over the dirty segments ``[firstDirty, firstUncleanable)``
   (:func:`build_offset_map`): key -> latest offset; aborted data and control
   batches stay out; a full map stops early. ``end offset`` = the map's last
   offset + 1, and it becomes the cleaner checkpoint.
3. **Groups**: every segment below the end offset, the clean head included,
   grouped so a group's log bytes stay within ``segment.bytes``, each index
   within ``segment.index.bytes`` and the offset span within Int.MAX
   (:func:`group_segments`, ``groupSegmentsBySize``).
4. **Clean each group into one segment** named after the group's first base
   offset: each source segment is read in I/O-buffer chunks (256 KiB by
   default: ``log.cleaner.io.buffer.size`` / threads / 2), each chunk filtered
   (:mod:`.filter`) and its output appended as ONE append (so at most one
   offset index entry per chunk, ``LogSegment.append`` of Kafka 4.0); a chunk
   without a complete entry grows the buffers up to the largest allowed
   message, or fails as corrupt. The new segment gets its final time index
   entry and the mtime of the group's last segment. Kept aborted transactions
   go to its ``.txnindex``.

Any damage found raises a :class:`~lethe_formats.errors.FormatError` naming
the file and byte position; nothing is returned half-done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lethe_formats.errors import CorruptRecordError
from lethe_formats.model import AbortedTxn
from lethe_formats.records.scan import Buffer

from lethe_reference.cleaner.filter import (
    FilterContext,
    LastRecord,
    TombstonePredicate,
    default_is_tombstone,
    filter_chunk,
)
from lethe_reference.cleaner.offset_map import OffsetMap, build_offset_map
from lethe_reference.cleaner.source import (
    SourceSegment,
    collect_aborted,
    covering,
    next_offset,
    whole_segment,
)
from lethe_reference.cleaner.txn_state import TxnState
from lethe_reference.storage.errors import SegmentOffsetOverflowError
from lethe_reference.storage.segment_state import SegmentState

__all__ = [
    "CleanParams",
    "CleanResult",
    "CleanedSegment",
    "SourceSegment",
    "build_offset_map",
    "clean_log",
    "group_segments",
]

INT_MAX = 2**31 - 1
_LOG_OVERHEAD, _MIN_ENTRY, _UP_TO_MAGIC = 12, 14, 17


@dataclass(frozen=True, slots=True)
class CleanParams:
    """The round's inputs besides the segments (Kafka's names in comments)."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    now_ms: int  # currentTime, read once per round
    delete_retention_ms: int
    segment_bytes: int  # segment.bytes
    max_index_bytes: int  # segment.index.bytes
    index_interval_bytes: int
    max_message_bytes: int  # the topic's max.message.bytes
    active_producers: Mapping[int, LastRecord] = field(default_factory=dict)
    is_tombstone: TombstonePredicate = default_is_tombstone
    record_attribute_mask: int = 0  # kept through rebuilds: KIP-87's bit 0 if enabled
    io_buffer_bytes: int = 262144  # ioBufferSize / threads / 2
    max_io_buffer_bytes: int = 1048588  # the broker's message.max.bytes
    map_slots: int = 5592405
    map_load_factor: float = 0.9


@dataclass(frozen=True, slots=True)
class CleanedSegment:
    """A replacement for the source segments ``replaces`` (base offsets)."""

    base_offset: int
    log: bytes
    offset_index: bytes
    time_index: bytes
    aborted: tuple[AbortedTxn, ...]
    last_modified_ms: int
    replaces: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CleanResult:
    end_offset: int
    segments: tuple[CleanedSegment, ...]
    messages_read: int
    messages_written: int


def clean_log(segments: Sequence[SourceSegment], params: CleanParams) -> CleanResult:
    """One round (module docstring); ``segments`` is the whole log, oldest first."""
    head = covering(segments, 0, params.first_dirty_offset)
    legacy_horizon = head[-1].last_modified_ms - params.delete_retention_ms if head else 0
    offset_map = OffsetMap(params.map_slots, params.map_load_factor)
    build_offset_map(
        segments, params.first_dirty_offset, params.first_uncleanable_offset, offset_map
    )
    end_offset = offset_map.latest_offset + 1
    groups = group_segments(
        covering(segments, 0, end_offset),
        params.segment_bytes,
        params.max_index_bytes,
        params.first_uncleanable_offset,
    )
    cleaner = _GroupCleaner(segments, params, offset_map, legacy_horizon)
    cleaned = tuple(cleaner.clean(group) for group in groups)
    return CleanResult(end_offset, cleaned, cleaner.messages_read, cleaner.messages_written)


# --- grouping -------------------------------------------------------------------------


def group_segments(
    segments: Sequence[SourceSegment], max_size: int, max_index_size: int, uncleanable: int
) -> list[list[SourceSegment]]:
    """``groupSegmentsBySize`` (module docstring, step 3)."""
    groups: list[list[SourceSegment]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        while rest and _fits(rest, group, max_size, max_index_size, uncleanable):
            group.append(rest.pop(0))
        groups.append(group)
    return groups


def _fits(
    rest: list[SourceSegment],
    group: list[SourceSegment],
    max_size: int,
    max_index_size: int,
    uncleanable: int,
) -> bool:
    """May ``rest[0]`` join ``group``? (the loop condition of ``groupSegmentsBySize``)"""
    head = rest[0]
    last_offset = rest[1].base_offset - 1 if len(rest) > 1 else uncleanable - 1
    return (
        sum(s.size for s in group) + head.size <= max_size
        and sum(s.offset_index_bytes for s in group) + head.offset_index_bytes <= max_index_size
        and sum(s.time_index_bytes for s in group) + head.time_index_bytes <= max_index_size
        and (head.size == 0 or last_offset - group[-1].base_offset <= INT_MAX)
    )


# --- cleaning a group -----------------------------------------------------------------


class _GroupCleaner:
    """``cleanSegments`` + ``cleanInto`` for each group of one round."""

    def __init__(
        self,
        segments: Sequence[SourceSegment],
        params: CleanParams,
        offset_map: OffsetMap,
        legacy_horizon: int,
    ) -> None:
        self.segments = segments
        self.params = params
        self.offset_map = offset_map
        self.legacy_horizon = legacy_horizon
        self.txn = TxnState()  # shared by all groups of the round, as in Kafka
        self.messages_read = 0
        self.messages_written = 0

    def clean(self, group: list[SourceSegment]) -> CleanedSegment:
        params = self.params
        base = group[0].base_offset
        state = SegmentState(
            base,
            index_interval_bytes=params.index_interval_bytes,
            max_index_bytes=params.max_index_bytes,
        )
        out = bytearray()
        kept_txns: list[AbortedTxn] = []
        self.txn.cleaned_index = kept_txns
        for index, segment in enumerate(group):
            upper = group[index + 1].base_offset if index + 1 < len(group) else next_offset(segment)
            self.txn.add_aborted_transactions(
                collect_aborted(self.segments, segment.base_offset, upper)
            )
            self._clean_into(segment, state, out)
        state.become_inactive()
        return CleanedSegment(
            base_offset=base,
            log=bytes(out),
            offset_index=state.offset_index.to_bytes(),
            time_index=state.time_index.to_bytes(),
            aborted=tuple(kept_txns),
            last_modified_ms=group[-1].last_modified_ms,
            replaces=tuple(s.base_offset for s in group),
        )

    def _clean_into(self, segment: SourceSegment, state: SegmentState, out: bytearray) -> None:
        params = self.params
        whole_segment(segment)  # refuse damaged input before writing anything
        ctx = FilterContext(
            offset_map=self.offset_map,
            now_ms=params.now_ms,
            delete_retention_ms=params.delete_retention_ms,
            retain_legacy_deletes=segment.last_modified_ms > self.legacy_horizon,
            txn=self.txn,
            active_producers=params.active_producers,
            upper_bound_offset=params.first_uncleanable_offset,
            is_tombstone=params.is_tombstone,
            file=segment.file,
            record_attribute_mask=params.record_attribute_mask,
        )
        data, position, capacity = segment.data, 0, params.io_buffer_bytes
        while position < segment.size:
            end = min(position + capacity, segment.size)
            result = filter_chunk(data, position, end, ctx, capacity)
            position += result.bytes_read
            self.messages_read += result.messages_read
            self.messages_written += result.messages_retained
            if result.output:
                try:
                    state.on_append(
                        len(result.output),
                        largest_offset=result.max_offset,
                        largest_timestamp=result.max_timestamp,
                        shallow_offset_of_max_timestamp=result.shallow_offset_of_max_timestamp,
                    )
                except SegmentOffsetOverflowError as error:
                    raise CorruptRecordError(
                        str(error), file=segment.file, position=position, field="offset"
                    ) from None
                out += result.output
            if result.bytes_read == 0:
                capacity = self._grow(data, position, capacity, segment.file)

    def _grow(self, data: Buffer, position: int, capacity: int, file: str | None) -> int:
        """``growBuffersOrFail``: the new buffer size, or the corruption error."""
        params = self.params
        max_size = params.max_message_bytes
        if capacity >= params.max_message_bytes:
            size = _first_entry_size(data, position, file)
            left = len(data) - position
            if size is None or size <= capacity or size > left:
                raise CorruptRecordError(
                    f"Log segment may be corrupt, batch size {size} > {left} bytes left in "
                    f"segment for log segment {file} at position {position}",
                    file=file,
                    position=position,
                    field="batchLength",
                )
            max_size = size
        limit = max(max_size, params.max_io_buffer_bytes)
        if capacity >= limit:
            raise CorruptRecordError(
                f"This log contains a message larger than maximum allowable size of {limit}.",
                file=file,
                position=position,
                field="batchLength",
            )
        return min(capacity * 2, limit)


def _first_entry_size(data: Buffer, position: int, file: str | None) -> int | None:
    remaining = len(data) - position
    if remaining < _LOG_OVERHEAD:
        return None
    size = int.from_bytes(bytes(data[position + 8 : position + 12]), "big", signed=True)
    if size < _MIN_ENTRY:
        raise CorruptRecordError(
            f"Record size {size} is less than the minimum record overhead ({_MIN_ENTRY})",
            file=file,
            position=position + 8,
            field="batchLength",
        )
    return None if remaining < _UP_TO_MAGIC else size + _LOG_OVERHEAD
