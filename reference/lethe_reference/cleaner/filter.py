"""One chunk of a segment through the cleaner's record filter (``MemoryRecords.filterTo``).

Theory of operation
-------------------
:func:`filter_chunk` reads the complete entries of ``data[start:end)`` (a v2
batch, or a legacy v0/v1 message or compressed wrapper) and writes what the
cleaner keeps, in order, to one output buffer (kafka-facts 4.2, 4.3):

1. **Batch retention** (``checkBatchRetention``). ``can_discard`` comes from
   the transaction state (aborted data; a marker whose transaction has no data
   left). For a control batch the records go only when the batch also carries
   a horizon that has passed (``horizon <= now``). Then, in this order:
   RETAIN_EMPTY for the batch holding the last data offset of a still-active
   producer (or, when that producer has no data offset, a control batch of its
   epoch); RETAIN_EMPTY for the batch ending right at the round's upper bound;
   DELETE when its records may all go; else DELETE_EMPTY.
2. **Record retention** (``shouldRetainRecord``): control records stay;
   records past the map's last offset stay; key-less records go; a record
   stays iff its offset is the latest for its key and it is not a tombstone,
   or deletes must still be kept: v2 -> no horizon yet or ``now < horizon``;
   legacy -> the segment's mtime is after the legacy horizon.
3. **Output.** Nothing kept and RETAIN_EMPTY -> a 61-byte empty header
   (baseTimestamp -1, no horizon bit). A magic 2 batch that keeps all its
   records and needs no new horizon -> the original bytes. Otherwise the batch
   is rebuilt (:mod:`.rebuild`): the horizon is ``now + delete.retention.ms``
   when it keeps a tombstone or is the marker of an empty transaction and has
   no horizon yet, else the batch's existing horizon (or none). A legacy
   (magic 0/1) entry that keeps anything is always rewritten as a magic 2 batch,
   with a new horizon if it keeps a tombstone (Kafka 4.0 upconverts while
   cleaning; KIP534-TMB-4).

The chunk result carries what ``LogSegment.append`` is given: the largest kept
offset (the last *kept record*, not the batch's last offset, for a rebuilt
batch), the largest batch max timestamp and the offset of its batch. As in
Kafka, when the output outgrows the write buffer the chunk stops after that
entry (``KAFKA-5316``), so ``bytes_read`` may be less than the whole chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lethe_formats.model import (
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    BatchHeader,
    LegacyMessage,
    Record,
    TimestampType,
)
from lethe_formats.records.builder import build_empty_batch
from lethe_formats.records.scan import Buffer, ScannedEntry

from lethe_reference import faults
from lethe_reference.cleaner.entries import (
    CleanerCorruptError,
    iter_entries,
    legacy_records,
    v2_records,
)
from lethe_reference.cleaner.offset_map import OffsetMap
from lethe_reference.cleaner.rebuild import convert_legacy, rebuild_v2
from lethe_reference.cleaner.txn_state import TxnState

__all__ = [
    "FilterContext",
    "FilterResult",
    "LastRecord",
    "TombstonePredicate",
    "default_is_tombstone",
    "filter_chunk",
]

#: ``is_tombstone(record, magic)``: a v2 :class:`Record` or a legacy message.
TombstonePredicate = Callable[[Record | LegacyMessage, int], bool]


def default_is_tombstone(record: Record | LegacyMessage, magic: int) -> bool:
    """Kafka's rule: a null value (``!record.hasValue``), whatever the magic."""
    return record.value is None


@dataclass(frozen=True, slots=True)
class LastRecord:
    """An active producer's last data offset (None: only a marker) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


@dataclass(slots=True)
class FilterContext:
    """Everything one ``cleanInto`` call decides with."""

    offset_map: OffsetMap
    now_ms: int
    delete_retention_ms: int
    retain_legacy_deletes: bool
    txn: TxnState
    active_producers: Mapping[int, LastRecord]
    upper_bound_offset: int
    is_tombstone: TombstonePredicate = default_is_tombstone
    file: str | None = None
    record_attribute_mask: int = 0  # record attribute bits a rebuild keeps (KIP-87)


@dataclass(slots=True)
class FilterResult:
    """Kept bytes of a chunk and the metadata ``LogSegment.append`` needs."""

    output: bytearray = field(default_factory=bytearray)
    bytes_read: int = 0
    messages_read: int = 0
    messages_retained: int = 0
    max_offset: int = -1
    max_timestamp: int = NO_TIMESTAMP
    shallow_offset_of_max_timestamp: int = -1

    def note(self, max_ts: int, shallow: int, max_offset: int, count: int) -> None:
        if max_ts > self.max_timestamp:
            self.max_timestamp, self.shallow_offset_of_max_timestamp = max_ts, shallow
        self.max_offset = max(self.max_offset, max_offset)
        self.messages_retained += count


_DELETE, _RETAIN_EMPTY, _DELETE_EMPTY = "DELETE", "RETAIN_EMPTY", "DELETE_EMPTY"


def filter_chunk(
    data: Buffer, start: int, end: int, ctx: FilterContext, write_capacity: int
) -> FilterResult:
    """Filter the complete entries of ``data[start:end)`` (module docstring)."""
    result = FilterResult()
    for entry in iter_entries(data, start, end, ctx.file):
        result.bytes_read += entry.header.size_in_bytes
        if isinstance(entry.header, BatchHeader):
            _filter_v2(data, entry, entry.header, ctx, result)
        else:
            _filter_legacy(data, entry, entry.header, ctx, result)
        if len(result.output) > write_capacity:
            break
    return result


# --- batch retention ------------------------------------------------------------------


def _is_last_of_active_producer(header: BatchHeader, ctx: FilterContext) -> bool:
    last = ctx.active_producers.get(header.producer_id)
    if last is None:
        return False
    if last.last_data_offset is not None:
        return header.last_offset == last.last_data_offset
    return header.is_control and header.producer_epoch == last.producer_epoch


def _batch_retention(header: BatchHeader, ctx: FilterContext, discard_records: bool) -> str:
    if header.producer_id >= 0 and _is_last_of_active_producer(header, ctx):
        return _RETAIN_EMPTY
    if header.next_offset == ctx.upper_bound_offset:
        return _RETAIN_EMPTY
    return _DELETE if discard_records else _DELETE_EMPTY


def _horizon_passed(header: BatchHeader, now_ms: int) -> bool:
    horizon = header.delete_horizon_ms
    return horizon is not None and horizon <= now_ms


# --- record retention -----------------------------------------------------------------


def _retain(
    ctx: FilterContext, record: Record | LegacyMessage, offset: int, magic: int, horizon: int | None
) -> bool:
    """``Cleaner.shouldRetainRecord`` for a data record."""
    if offset > ctx.offset_map.latest_offset:
        return True
    if record.key is None:
        return False
    latest = offset >= ctx.offset_map.get(record.key)
    if not ctx.is_tombstone(record, magic):
        return latest
    if magic >= 2:
        keep_deletes = horizon is None or ctx.now_ms < horizon
    else:
        keep_deletes = ctx.retain_legacy_deletes
    return latest and keep_deletes


# --- v2 batches -----------------------------------------------------------------------


def _filter_v2(
    data: Buffer, entry: ScannedEntry, header: BatchHeader, ctx: FilterContext, out: FilterResult
) -> None:
    records = v2_records(data, entry, ctx.file)
    if header.is_control:
        can_discard = ctx.txn.on_control_batch_read(header, records)
        discard_records = can_discard and _horizon_passed(header, ctx.now_ms)
    else:
        can_discard = ctx.txn.on_batch_read(header, header.last_offset)
        discard_records = can_discard
    retention = _batch_retention(header, ctx, discard_records)
    marker_for_empty_txn = can_discard and header.is_control
    if retention == _DELETE:
        return
    base, horizon = header.base_offset, header.delete_horizon_ms
    if faults.active(ctx.file, "cleaner-drops-tombstones-at-once"):
        horizon = ctx.now_ms
    kept: list[tuple[Record, int, int]] = []  # (record, offset, timestamp)
    tombstones = False
    for record in records:
        out.messages_read += 1
        offset = base + record.offset_delta
        if discard_records:
            continue
        if not header.is_control and not _retain(ctx, record, offset, 2, horizon):
            continue
        kept.append((record, offset, _timestamp(header, record)))
        tombstones = tombstones or (
            not header.is_control and ctx.is_tombstone(record, header.magic)
        )
    if kept:
        wants_horizon = tombstones or marker_for_empty_txn
        _write_v2(data, entry, header, ctx, out, kept=kept, wants_horizon=wants_horizon)
    elif retention == _RETAIN_EMPTY:
        out.output += _empty_header(header)
        out.note(header.max_timestamp, header.last_offset, header.last_offset, 0)


def _timestamp(header: BatchHeader, record: Record) -> int:
    if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return header.max_timestamp
    return header.base_timestamp + record.timestamp_delta


def _write_v2(
    data: Buffer,
    entry: ScannedEntry,
    header: BatchHeader,
    ctx: FilterContext,
    out: FilterResult,
    *,
    kept: list[tuple[Record, int, int]],
    wants_horizon: bool,
) -> None:
    need_horizon = wants_horizon and header.delete_horizon_ms is None
    if faults.active(ctx.file, "cleaner-horizon-reset-every-cleaning"):
        need_horizon = wants_horizon
    if len(kept) == header.records_count and not need_horizon:
        size = header.size_in_bytes
        out.output += data[entry.position : entry.position + size]
        out.note(header.max_timestamp, header.last_offset, header.last_offset, len(kept))
        return
    if need_horizon:
        horizon = ctx.now_ms + ctx.delete_retention_ms
    else:
        horizon = header.delete_horizon_ms if header.delete_horizon_ms is not None else -1
    built = rebuild_v2(header, kept, horizon, ctx.record_attribute_mask)
    out.output += built.data
    out.note(built.max_timestamp, built.shallow_offset, kept[-1][1], len(kept))


def _empty_header(header: BatchHeader) -> bytes:
    """``DefaultRecordBatch.writeEmptyHeader``: count 0, baseTimestamp -1, no horizon."""
    built = build_empty_batch(
        base_offset=header.base_offset,
        last_offset_delta=header.last_offset_delta,
        max_timestamp=header.max_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        partition_leader_epoch=header.partition_leader_epoch,
        timestamp_type=header.timestamp_type,
        is_transactional=header.is_transactional,
        is_control=header.is_control,
    )
    assert len(built) == RECORD_BATCH_OVERHEAD
    return built


# --- legacy entries -------------------------------------------------------------------


def _filter_legacy(
    data: Buffer, entry: ScannedEntry, wrapper: LegacyMessage, ctx: FilterContext, out: FilterResult
) -> None:
    """A legacy entry: what it keeps is always written anew as a magic 2 batch."""
    ctx.txn.on_batch_read(None, wrapper.offset)
    # A legacy entry has no producer id: only the round's-last-batch rule can keep it.
    keep_empty = wrapper.offset + 1 == ctx.upper_bound_offset
    kept: list[LegacyMessage] = []
    tombstones = False
    for message in legacy_records(data, entry, ctx.file):
        out.messages_read += 1
        if _retain(ctx, message, message.offset, wrapper.magic, None):
            kept.append(message)
            tombstones = tombstones or ctx.is_tombstone(message, wrapper.magic)
    if kept:
        horizon = ctx.now_ms + ctx.delete_retention_ms if tombstones else NO_TIMESTAMP
        built = convert_legacy(wrapper, kept, horizon)
        out.output += built.data
        out.note(built.max_timestamp, built.shallow_offset, kept[-1].offset, len(kept))
    elif keep_empty:
        raise CleanerCorruptError(
            "Empty batches are only supported for magic v2 and above",
            file=ctx.file,
            position=entry.position,
            field="magic",
        )
