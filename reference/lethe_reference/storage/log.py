"""A partition's log: segments plus the offsets that bound them (``UnifiedLog``).

Theory of operation
-------------------
Four offsets describe a partition, always ordered
``log start offset <= high watermark <= log end offset``::

    segments   [0 .......][8 .......][16 ...... active]
    offsets     ^LSO          ^recovery point   ^HW    ^LEO (next offset)

* **LEO** (log end offset): the next offset to assign; moves on append.
* **HW** (high watermark): what consumers may read. The log never moves it on
  append; the partition layer does (single broker: to the LEO once the append
  is acknowledged, :meth:`PartitionLog.update_high_watermark`), which keeps
  replication free to drive it later.
* **LSO** (log start offset): the first readable offset. Only
  :meth:`PartitionLog.maybe_increment_log_start_offset` moves it, for
  DeleteRecords or segment deletion (kafka-facts 1.2): above the HW it raises
  :class:`OffsetOutOfRangeError`, at or below the current value it does
  nothing, otherwise it sets it, lifts HW and recovery point to it if they are
  below, and truncates the leader-epoch cache from the start. Nothing is
  written to disk then (the log manager checkpoints it periodically).
* **recovery point**: everything below it was flushed; startup recovery
  re-scans only from the segment holding it.
* **last stable offset**: the HW, or the first offset of the oldest undecided
  transaction if lower; :attr:`PartitionLog.transactions` tracks them on append
  and is rebuilt by the loader (:mod:`.transactions`).

**Append** (``appendAsLeader``): validate and assign offsets without
re-encoding (:mod:`.validator`), refuse appends larger than ``segment.bytes``,
record the epoch, roll if the active segment should roll (:mod:`.segment_state`:
size, ``segment.ms`` minus a per-segment random jitter, full index, offset
overflow), append. ``append_as_follower`` keeps the offsets it is given.

**Roll**: the new segment is named after the append's first offset (at least
the LEO); the old one gets its final time index entry and is flushed (the
recovery point becomes the new base offset).

**Deletion**: removed segments leave the map at once, their files are renamed
``.deleted`` and handed to a :class:`SegmentDeleter` that removes them after
``file.delete.delay.ms`` (kafka-facts 1.3); so is the producer snapshot named
after each of them.

**Producer state** (:attr:`PartitionLog.producer_state`,
:mod:`.producer_snapshots`): a client batch with a producer id is checked
after validation and any roll, as ``analyzeAndValidateProducerState`` runs:
a duplicate appends nothing and comes back as an :class:`AppendResult` with
``duplicate`` set and the original offsets; a bad epoch or sequence raises
(:mod:`.producer_state`). Every append moves the producer map's end offset to
the LEO; a roll takes a snapshot named after the new segment, and
:meth:`PartitionLog.close` one at the LEO.

Reads and lookups: :mod:`.log_reads`. Not task-safe: the caller holds the lock.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from lethe_formats.model import BatchHeader
from lethe_formats.records.scan import LogScanner

from lethe_reference import faults
from lethe_reference.clock import Clock
from lethe_reference.storage import errors
from lethe_reference.storage.file_records import last_offset, max_timestamp
from lethe_reference.storage.leader_epoch import LeaderEpochCache
from lethe_reference.storage.log_types import (
    AppendResult,
    LogStartOffsetIncrementReason,
    SegmentDeleter,
)
from lethe_reference.storage.producer_snapshots import ProducerStateManager
from lethe_reference.storage.producer_state import ProducerBatch, producer_batches
from lethe_reference.storage.segment import LogSegment
from lethe_reference.storage.segment_state import RollParams
from lethe_reference.storage.segments import LogSegments
from lethe_reference.storage.settings import LogSettings, max_segment_ms
from lethe_reference.storage.transactions import TransactionState
from lethe_reference.storage.validator import validate_and_assign_offsets

__all__ = ["AppendResult", "LogStartOffsetIncrementReason", "PartitionLog", "SegmentDeleter"]

_log = logging.getLogger(__name__)
DELETED_SUFFIX = ".deleted"
#: ``producer.id.expiration.ms``'s default; the log manager passes the broker's.
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86400000


class PartitionLog:
    """One partition's log in ``directory``; built by the loader or :meth:`create`."""

    def __init__(
        self,
        directory: Path,
        settings: LogSettings,
        *,
        clock: Clock,
        segments: LogSegments,
        log_start_offset: int,
        recovery_point: int,
        next_offset: int,
        epoch_cache: LeaderEpochCache,
        deleter: SegmentDeleter | None = None,
        rng: random.Random | None = None,
        durable: bool = True,
        producer_state: ProducerStateManager | None = None,
    ) -> None:
        self.directory = directory
        #: fsync on flush (Kafka always does); False for embedded, virtual-time use.
        self.durable = durable
        self.settings = settings
        self.clock = clock
        self.segments = segments
        self.epoch_cache = epoch_cache
        self.deleter = deleter
        self._rng = rng or random.Random()
        self._log_start_offset = log_start_offset
        self._recovery_point = recovery_point
        self._next_offset = next_offset
        self._high_watermark = log_start_offset
        #: Open and unreplicated transactions (the loader replaces it with a rebuilt one).
        self.transactions = TransactionState()
        #: Idempotent producers and their snapshot files (the loader passes a loaded one).
        self.producer_state = producer_state or ProducerStateManager(
            directory, directory.name, expiration_ms=DEFAULT_PRODUCER_ID_EXPIRATION_MS
        )
        self.producer_state.update_map_end_offset(next_offset)

    @classmethod
    def create(
        cls,
        directory: Path,
        settings: LogSettings,
        *,
        clock: Clock,
        start_offset: int = 0,
        deleter: SegmentDeleter | None = None,
        rng: random.Random | None = None,
        durable: bool = True,
        producer_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    ) -> PartitionLog:
        """A new empty log with one segment at ``start_offset``."""
        directory.mkdir(parents=True, exist_ok=True)
        segments = LogSegments()
        log = cls(
            directory,
            settings,
            clock=clock,
            segments=segments,
            log_start_offset=start_offset,
            recovery_point=start_offset,
            next_offset=start_offset,
            epoch_cache=LeaderEpochCache.load(directory),
            deleter=deleter,
            rng=rng,
            durable=durable,
            producer_state=ProducerStateManager(
                directory, directory.name, expiration_ms=producer_expiration_ms
            ),
        )
        segments.add(log.new_segment(start_offset))
        return log

    def restore_offsets(self, *, log_start_offset: int, recovery_point: int) -> PartitionLog:
        """Set the offsets the loader computed (the HW starts at the log start offset)."""
        self._log_start_offset = log_start_offset
        self._recovery_point = recovery_point
        self._high_watermark = log_start_offset
        return self

    # --- offsets ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._next_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def last_stable_offset(self) -> int:
        """The HW, or the oldest undecided transaction's first offset if lower."""
        return self.transactions.last_stable_offset(self._high_watermark, self._log_start_offset)

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def active_segment(self) -> LogSegment:
        return self.segments.active

    def size(self) -> int:
        return self.segments.size_in_bytes()

    def update_high_watermark(self, offset: int) -> int:
        """Set the HW, clamped to ``[log start offset, LEO]``; returns the new HW."""
        self._high_watermark = min(max(offset, self._log_start_offset), self._next_offset)
        self.transactions.on_high_watermark_updated(self._high_watermark)
        return self._high_watermark

    def maybe_increment_high_watermark(self, offset: int) -> bool:
        """Raise the HW to ``offset`` (<= LEO) if that is higher."""
        if offset > self._next_offset:
            raise ValueError(f"High watermark {offset} update exceeds log end offset")
        if offset <= self._high_watermark:
            return False
        self._high_watermark = offset
        self.transactions.on_high_watermark_updated(offset)
        return True

    def maybe_increment_log_start_offset(
        self, offset: int, reason: LogStartOffsetIncrementReason
    ) -> bool:
        """Move the log start offset forward (module docstring); True if it moved."""
        if offset > self._high_watermark:
            raise errors.OffsetOutOfRangeError(
                f"Cannot increment the log start offset to {offset} of partition {self.name} "
                f"since it is larger than the high watermark {self._high_watermark}"
            )
        if offset <= self._log_start_offset:
            return False
        self._log_start_offset = offset
        self._high_watermark = max(self._high_watermark, offset)
        self.transactions.on_log_start_offset_incremented(offset)
        self.producer_state.on_log_start_offset_incremented(offset)
        self.transactions.on_high_watermark_updated(self._high_watermark)
        self._recovery_point = max(self._recovery_point, offset)
        _log.info("[%s] Incremented log start offset to %d due to %s", self.name, offset, reason)
        if not faults.active(self, "epoch-cache-not-truncated"):
            self.epoch_cache.truncate_from_start(offset)
        return True

    # --- append -------------------------------------------------------------------------

    def append_as_leader(
        self, records: bytes, leader_epoch: int, *, from_coordinator: bool = False
    ) -> AppendResult:
        """Validate a producer's batch, assign offsets and append it (a coordinator's
        batch may be a transaction marker)."""
        now = self.clock.now_ms()
        batch = validate_and_assign_offsets(
            records,
            next_offset=self._next_offset,
            leader_epoch=leader_epoch,
            now_ms=now,
            settings=self.settings
            if not faults.active(self, "tombstone-flag-cleared-on-recompression")
            else replace(self.settings, tombstone_flag_enable=False),  # type: ignore[type-var]
            target_compression=self.settings.compression_type,
            topic_partition=self.name,
            from_coordinator=from_coordinator,
        )
        self._check_segment_size(len(batch.records))
        if leader_epoch >= 0:
            self.epoch_cache.assign(leader_epoch, batch.first_offset)
        segment = self._maybe_roll(
            len(batch.records), batch.max_timestamp, batch.first_offset, batch.last_offset
        )
        produced = self._produced(batch.header, batch.records)
        duplicate = self._check_producers(produced, from_coordinator=from_coordinator)
        if duplicate is not None:
            return duplicate
        segment.append(
            batch.records,
            largest_offset=batch.last_offset,
            largest_timestamp=batch.max_timestamp,
            shallow_offset_of_max_timestamp=batch.shallow_offset_of_max_timestamp,
        )
        self._next_offset = batch.last_offset + 1
        self._track_producers(segment, produced)
        return AppendResult(
            batch.first_offset,
            batch.last_offset,
            batch.log_append_time,
            self._log_start_offset,
            batch.max_timestamp,
        )

    def append_as_follower(self, records: bytes) -> AppendResult:
        """Append entries with the offsets they carry (replication, tools, tests)."""
        entries = list(LogScanner(records, verify_crc=True))
        if not entries:
            raise errors.CorruptMessageError("no complete record batch to append")
        if any(entry.crc_valid is False for entry in entries):
            raise errors.CorruptMessageError("Record is corrupt (CRC mismatch) in follower append")
        size = entries[-1].position + entries[-1].header.size_in_bytes
        head = entries[0].header
        # magic 0/1: the first offset is unknown without decompressing; Kafka checks
        # the first entry's last offset instead and rolls at the LEO.
        v2 = isinstance(head, BatchHeader)
        first = head.base_offset if isinstance(head, BatchHeader) else last_offset(entries[0])
        last = last_offset(entries[-1])
        self._check_segment_size(size)
        if first < self._next_offset:
            raise errors.InvalidRecordError(
                f"Unexpected offset in append to {self.name}. First offset {first} is less than "
                f"the next offset {self._next_offset}."
            )
        best_ts, best_offset = -1, -1
        for entry in entries:
            if max_timestamp(entry) > best_ts:
                best_ts, best_offset = max_timestamp(entry), last_offset(entry)
            header = entry.header
            if isinstance(header, BatchHeader) and header.partition_leader_epoch >= 0:
                self.epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
        segment = self._maybe_roll(size, best_ts, first if v2 else self._next_offset, last)
        segment.append(
            records[:size],
            largest_offset=last,
            largest_timestamp=best_ts,
            shallow_offset_of_max_timestamp=best_offset,
        )
        self._next_offset = last + 1
        self._track_producers(segment, list(producer_batches(records, entries, self.name)))
        return AppendResult(first, last, -1, self._log_start_offset, best_ts)

    def _produced(self, header: BatchHeader, records: bytes | bytearray) -> list[ProducerBatch]:
        """The appended batch as producer state sees it. A data batch is its header,
        which the validator already read; only a control batch has its marker decoded."""
        if not header.is_control:
            return [ProducerBatch(header)]
        return list(producer_batches(records, LogScanner(records), self.name))

    def _check_producers(
        self, produced: Sequence[ProducerBatch], *, from_coordinator: bool = False
    ) -> AppendResult | None:
        """A client append's producer checks; the original batch's offsets for a
        duplicate (``analyzeAndValidateProducerState``), else None or a raise. A
        coordinator's batch has its epoch checked, never its sequence; a marker also
        its coordinator epoch."""
        table = self.producer_state.table
        for batch in produced:
            header = batch.header
            if header.producer_id < 0:
                continue
            original = table.check_client_batch(
                header,
                header.base_offset,
                sequence=not from_coordinator,
                coordinator_epoch=batch.coordinator_epoch if batch.marker is not None else None,
            )
            if original is not None:
                return AppendResult(
                    original.first_offset,
                    original.last_offset,
                    original.timestamp,
                    self._log_start_offset,
                    original.timestamp,
                    duplicate=True,
                )
        return None

    def _track_producers(self, segment: LogSegment, produced: Sequence[ProducerBatch]) -> None:
        """Producer entries and transactions after an append; an ABORT goes to
        ``segment``'s ``.txnindex``; the producer map ends at the LEO."""
        for batch in produced:
            if batch.header.producer_id >= 0:
                self.producer_state.table.apply(batch)
        pairs = [(batch.header, batch.marker) for batch in produced]
        for aborted in self.transactions.track(pairs):
            segment.append_aborted_txn(aborted)
        self.producer_state.update_map_end_offset(self._next_offset)

    def _check_segment_size(self, size: int) -> None:
        if size > self.settings.segment_bytes:
            raise errors.RecordListTooLargeError(
                f"Message batch size is {size} bytes in append to partition {self.name}, which "
                f"exceeds the maximum configured segment size of {self.settings.segment_bytes}."
            )

    # --- roll and flush -----------------------------------------------------------------

    def _maybe_roll(self, size: int, max_ts: int, first: int, last: int) -> LogSegment:
        segment = self.segments.active
        params = RollParams(
            max_segment_ms=max_segment_ms(self.settings),
            max_segment_bytes=self.settings.segment_bytes,
            max_timestamp_in_messages=max_ts,
            max_offset_in_messages=last,
            messages_size=size,
            now_ms=self.clock.now_ms(),
        )
        if segment.should_roll(params):
            return self.roll(first)
        return segment

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at ``max(expected, LEO)`` (``LocalLog.roll``)."""
        new_offset = max(expected_next_offset or 0, self._next_offset)
        active = self.segments.active
        if new_offset in self.segments:
            if active.base_offset != new_offset or active.size != 0:
                raise errors.KafkaStorageError(
                    f"Trying to roll a new log segment for {self.name} with start offset "
                    f"{new_offset} while it already exists."
                )
            self.remove_and_delete_segments([active], with_snapshots=False)
        elif new_offset < active.base_offset:
            raise errors.KafkaStorageError(
                f"Trying to roll a new log segment for {self.name} with start offset "
                f"{new_offset} lower than start offset of the active segment {active}"
            )
        else:
            active.become_inactive()
        segment = self.new_segment(new_offset)
        self.segments.add(segment)
        self.producer_state.update_map_end_offset(new_offset)
        self.producer_state.take_snapshot(sync=self.durable)
        self.flush_up_to(new_offset)
        return segment

    def new_segment(self, base_offset: int) -> LogSegment:
        """A fresh segment file set with this topic's random roll jitter."""
        jitter, segment_ms = self.settings.segment_jitter_ms, self.settings.segment_ms
        roll_jitter = self._rng.randrange(min(jitter, segment_ms)) if jitter > 0 else 0
        return LogSegment.create(
            self.directory,
            base_offset,
            self.settings,
            now_ms=self.clock.now_ms(),
            roll_jitter_ms=roll_jitter,
        )

    def flush_up_to(self, offset: int, *, inclusive: bool = False) -> None:
        """Flush segments below ``offset`` (or holding it); the recovery point becomes it."""
        flush_offset = offset + 1 if inclusive else offset
        if flush_offset <= self._recovery_point:
            return
        for segment in self.segments.covering(self._recovery_point, flush_offset):
            segment.flush(fsync=self.durable)
        self._recovery_point = max(self._recovery_point, offset)

    def flush(self) -> None:
        """Flush everything, active segment included (clean shutdown)."""
        self.flush_up_to(self._next_offset, inclusive=True)

    def reset_end_offset(self, offset: int) -> None:
        """After a truncation (:mod:`.truncation`): the log ends at ``offset``; the high
        watermark, recovery point and log start offset go no higher."""
        self._next_offset = offset
        self._high_watermark = min(self._high_watermark, offset)
        self._recovery_point = min(self._recovery_point, offset)
        self._log_start_offset = min(self._log_start_offset, offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Drop every segment and restart empty at ``offset`` (``truncateFullyAndStartAt``:
        a follower whose log ends below its leader's log start offset)."""
        doomed = list(self.segments)
        self.segments.add(self.new_segment(offset))
        self.remove_and_delete_segments(doomed)
        kept = self._high_watermark
        self._next_offset = self._log_start_offset = self._high_watermark = offset
        if faults.active(self, "follower-restart-keeps-high-watermark"):
            self._high_watermark = min(kept, offset)
        self._recovery_point = offset
        self.epoch_cache.clear_and_flush()
        self.transactions = TransactionState()
        self.producer_state.truncate_fully_and_start_at(offset)
        _log.info("[%s] Truncated fully, restarting at offset %d", self.name, offset)

    # --- deletion and shutdown ----------------------------------------------------------

    def remove_and_delete_segments(
        self, segments: Sequence[LogSegment], *, with_snapshots: bool = True
    ) -> None:
        """Drop ``segments`` from the map and rename their files ``.deleted``, and
        their producer snapshots unless ``with_snapshots`` is False (a roll over an
        empty active segment); the deleter removes them after
        ``file.delete.delay.ms`` (none: at once)."""
        doomed = list(segments)
        for segment in doomed:
            self.segments.remove(segment.base_offset)
            if segment.suffix != DELETED_SUFFIX:
                segment.change_file_suffixes(segment.suffix, DELETED_SUFFIX)
            if with_snapshots:
                self.retire_snapshot(segment)
        if self.deleter is None or faults.active(self, "segments-deleted-at-once"):
            for segment in doomed:
                segment.delete_files()
        else:
            due = self.clock.now_ms() + self.settings.file_delete_delay_ms
            self.deleter.schedule(doomed, due)

    def retire_snapshot(self, segment: LogSegment) -> None:
        """``deleteProducerSnapshots``: the snapshot named after ``segment`` is renamed
        ``.deleted`` and removed with the segment's files."""
        marked = self.producer_state.mark_snapshot_for_deletion(segment.base_offset)
        if marked is not None:
            segment.extra_files.append(marked)

    def remove_expired_producers(self) -> list[int]:
        """``removeExpiredProducers`` (every ``producer.id.expiration.check.interval.ms``)."""
        return self.producer_state.remove_expired_producers(self.clock.now_ms())

    def close(self, *, snapshot: bool = True) -> None:
        """Close the segments; first a producer snapshot at the LEO (``UnifiedLog.close``)
        unless the directory is going away."""
        if snapshot:
            self.producer_state.take_snapshot(sync=self.durable)
        for segment in self.segments:
            segment.close()
