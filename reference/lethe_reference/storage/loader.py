"""Open a partition directory at startup, recovering what a crash left (``LogLoader``).

Theory of operation
-------------------
Loading runs in Kafka's order:

1. **Temporary files.** ``*.deleted`` files are removed (their deletion was
   scheduled but had not run). ``*.cleaned`` files are the cleaner's unfinished
   output and are removed; a ``*.swap`` file whose base offset is at or above
   the smallest ``.cleaned`` offset belongs to an unfinished segment split and
   is removed too.
2. **Swaps.** The remaining ``.swap`` files are finished replacements: the
   swap segments span ``[min base offset, max next offset)``; every ordinary
   segment file starting in that range was replaced and is deleted, then the
   ``.swap`` suffix is dropped (``LogLoader.load``, passes 1-3).
3. **Segments.** Every ``.log`` is opened; an index file without its ``.log``
   is deleted. A segment whose offset index is missing or fails the checks is
   recovered at once (its indexes are rebuilt from the ``.log``).
4. **Recovery.** Without the clean-shutdown marker, every segment from the one
   holding the recovery point on is recovered (CRC-checked rescan, indexes
   rebuilt). The first segment that had to be truncated ends recovery: all
   later segments are deleted, so a torn tail is never served. With the
   marker, nothing is rescanned, except (lethe's addition) an active segment
   whose end is not an entry boundary, found while computing the LEO.
5. **Offsets.** If the log ends below the checkpointed log start offset, all
   segments go; with no segments left a new one starts at that offset. Then
   ``recovery point = LEO`` after a clean shutdown, else
   ``min(checkpointed recovery point, LEO)``; ``log start offset =
   max(checkpointed, first segment's base offset)`` (kafka-facts 1.4); the
   leader-epoch cache is truncated after the LEO and from the log start offset.

6. **Producer state.** Snapshots not named after a segment are removed
   (except the newest above the last segment's base: the clean-shutdown
   one), then the newest snapshot is loaded and the log replayed beyond it
   up to the LEO, taking snapshots as Kafka does
   (:func:`.producer_snapshots.rebuild_producer_state`). Each segment
   recovered in step 3 or 4 is recovered as ``LogLoader.recoverSegment``
   does: a scratch producer state is rebuilt up to the segment's base (which
   deletes the snapshots above it), the segment is recovered and replayed, and
   a snapshot is taken at its end; so after a kill -9 the snapshot files are
   Kafka's.
7. **Transactions.** The open and completed transactions are rebuilt by
   replaying every batch (:func:`.transactions.rebuild`): they bound the last
   stable offset. A segment recovered in step 3 or 4 gets the ``.txnindex``
   the replay produced for it, as Kafka's ``LogSegment.recover`` rebuilds it
   from the producer state; other segments keep theirs (a cleaned segment's
   entries are not reproducible by a replay).

A missing checkpoint entry is 0 (whole-log recovery; log start offset = the
first segment's base).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lethe_formats.model import AbortedTxn, BatchHeader, ControlType
from lethe_formats.storage.filenames import (
    FileKind,
    FileNameError,
    SegmentFileName,
    parse_segment_file_name,
)
from lethe_formats.storage.txn_index import encode_txn_index

from lethe_reference import faults
from lethe_reference.clock import Clock
from lethe_reference.storage import segment_reads
from lethe_reference.storage.file_records import last_offset
from lethe_reference.storage.leader_epoch import LeaderEpochCache
from lethe_reference.storage.log import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    PartitionLog,
    SegmentDeleter,
)
from lethe_reference.storage.producer_snapshots import (
    ProducerStateManager,
    rebuild_producer_state,
)
from lethe_reference.storage.producer_state import ProducerBatch, producer_batches
from lethe_reference.storage.segment import LogSegment
from lethe_reference.storage.segments import LogSegments
from lethe_reference.storage.settings import LogSettings
from lethe_reference.storage.transactions import batches, rebuild

__all__ = ["LoadParams", "load_log", "segment_batch_reader", "segment_txn_batches"]

_log = logging.getLogger(__name__)
_INDEX_KINDS = (FileKind.INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)


@dataclass(frozen=True, slots=True)
class LoadParams:
    """What the log manager read from the log directory's checkpoints."""

    recovery_point: int = 0
    log_start_offset: int = 0
    had_clean_shutdown: bool = False
    #: ``producer.id.expiration.ms``: producers idle that long are not loaded.
    producer_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS


@dataclass(frozen=True, slots=True)
class _Recovery:
    """What recovering one segment needs (``LogLoader.recoverSegment``)."""

    directory: Path
    params: LoadParams
    epochs: LeaderEpochCache
    recovered: set[int]
    now: int

    def scratch_state(self) -> ProducerStateManager:
        return ProducerStateManager(
            self.directory, self.directory.name, expiration_ms=self.params.producer_expiration_ms
        )


def _segment_files(directory: Path) -> list[tuple[Path, SegmentFileName]]:
    found = []
    for path in sorted(directory.iterdir()):
        if not path.is_file():
            continue
        try:
            found.append((path, parse_segment_file_name(path.name)))
        except FileNameError:
            continue  # checkpoints, partition.metadata, stray files
    return found


def _remove_temp_files(directory: Path) -> list[Path]:
    """Pass 1: delete ``.deleted``/``.cleaned`` and invalid ``.swap`` files; return valid swaps."""
    files = _segment_files(directory)
    cleaned = [name.base_offset for _, name in files if name.extra_suffix == ".cleaned"]
    min_cleaned = min(cleaned, default=None)
    swaps = []
    for path, name in files:
        if name.extra_suffix in (".deleted", ".cleaned"):
            path.unlink(missing_ok=True)
        elif name.extra_suffix == ".swap":
            if min_cleaned is not None and name.base_offset >= min_cleaned:
                path.unlink(missing_ok=True)
            else:
                swaps.append(path)
    return swaps


def _complete_swaps(directory: Path, swaps: list[Path], settings: LogSettings, now: int) -> None:
    """Passes 2 and 3: delete what the swap segments replaced, then rename them."""
    logs = [p for p in swaps if parse_segment_file_name(p.name).kind is FileKind.LOG]
    low, high = None, None
    for path in logs:
        base = parse_segment_file_name(path.name).base_offset
        segment = LogSegment.open(directory, base, settings, now_ms=now, suffix=".swap")
        end = segment_reads.read_next_offset(segment)
        segment.log.close()
        low = base if low is None else min(low, base)
        high = end if high is None else max(high, end)
    if low is not None and high is not None:
        for path, name in _segment_files(directory):
            if name.extra_suffix != ".swap" and low <= name.base_offset < high:
                path.unlink(missing_ok=True)
    for path in swaps:
        if path.exists():
            path.rename(path.with_name(path.name.removesuffix(".swap")))


def _segment_batches(segment: LogSegment, start: int, end: int) -> list[ProducerBatch]:
    """The v2 batches of ``segment`` whose last offset lies in ``[start, end)``."""
    with segment.log.scan(0) as (entries, _scanner, data):
        wanted = (e for e in entries if start <= last_offset(e) < end)
        return list(producer_batches(data, wanted, str(segment.log.path)))


def segment_batch_reader(segments: LogSegments) -> Callable[[int, int, int], list[ProducerBatch]]:
    def read(base: int, start: int, end: int) -> list[ProducerBatch]:
        segment = segments.get(base)
        return [] if segment is None else _segment_batches(segment, start, end)

    return read


def _recover_segment(ctx: _Recovery, segments: LogSegments, segment: LogSegment) -> int:
    """``LogLoader.recoverSegment``: rebuild producer state up to ``segment`` in a
    scratch manager, recover the segment, replay it, snapshot at its end."""
    state = ctx.scratch_state()
    rebuild_producer_state(
        state,
        [s.base_offset for s in segments if s.base_offset < segment.base_offset],
        segment_batch_reader(segments),
        log_start_offset=ctx.params.log_start_offset,
        last_offset=segment.base_offset,
        now_ms=ctx.now,
        reload_from_clean_shutdown=False,
    )
    truncated = segment.recover(ctx.epochs.assign_if_newer)
    ctx.recovered.add(segment.base_offset)
    state.replay(_segment_batches(segment, 0, 2**63 - 1))
    state.take_snapshot()
    return truncated


def _open_segments(directory: Path, settings: LogSettings, ctx: _Recovery) -> LogSegments:
    """Pass 4: open every segment, delete orphan indexes, rebuild broken indexes."""
    now = ctx.now
    segments = LogSegments()
    files = [(p, n) for p, n in _segment_files(directory) if not n.extra_suffix]
    bases = {n.base_offset for _, n in files if n.kind is FileKind.LOG}
    for path, name in files:
        if name.kind in _INDEX_KINDS and name.base_offset not in bases:
            _log.warning("Found an orphaned index file %s, with no corresponding log file.", path)
            path.unlink(missing_ok=True)
    for base in sorted(bases):
        segment = LogSegment.open(directory, base, settings, now_ms=now)
        if segment.needs_recovery:
            _log.warning("Rebuilding the indexes of %s", segment.log.path)
            _recover_segment(ctx, segments, segment)
        segments.add(segment)
    return segments


def _recover(log_segments: LogSegments, ctx: _Recovery) -> list[LogSegment]:
    """Recover segments from the recovery point on; return the ones to delete."""
    params = ctx.params
    if params.had_clean_shutdown or len(log_segments) == 0:
        return []
    unflushed = log_segments.covering(params.recovery_point, 2**63 - 1)
    for index, segment in enumerate(unflushed):
        if _recover_segment(ctx, log_segments, segment) > 0:
            _log.warning("Corruption found in segment %s; later ones deleted", segment)
            return unflushed[index + 1 :]
    return []


def _log_end(segments: LogSegments, ctx: _Recovery) -> int:
    """The LEO; an active segment with a torn tail is recovered even after a clean
    shutdown (lethe's addition: Kafka trusts the marker, lethe never serves a tear)."""
    end, whole = segment_reads.scan_tail(segments.active)
    if not whole:
        _log.warning("Torn tail in %s despite a clean shutdown; recovering it", segments.active)
        _recover_segment(ctx, segments, segments.active)
        end = segment_reads.read_next_offset(segments.active)
    return end


def load_log(
    directory: Path,
    settings: LogSettings,
    params: LoadParams,
    *,
    clock: Clock,
    deleter: SegmentDeleter | None = None,
    rng: random.Random | None = None,
    durable: bool = True,
) -> PartitionLog:
    """Open ``directory`` as a :class:`PartitionLog` (module docstring; HW left to the caller)."""
    now = clock.now_ms()
    _complete_swaps(directory, _remove_temp_files(directory), settings, now)
    epochs = LeaderEpochCache.load(directory)
    ctx = _Recovery(directory, params, epochs, set(), now)
    segments = _open_segments(directory, settings, ctx)
    doomed = _recover(segments, ctx)
    for segment in doomed:
        segments.remove(segment.base_offset)
    log_end = _log_end(segments, ctx) if len(segments) else None
    if log_end is not None and log_end < params.log_start_offset:
        doomed += list(segments)
        segments.clear()
        epochs.clear_and_flush()
        log_end = None
    log = PartitionLog(
        directory,
        settings,
        clock=clock,
        segments=segments,
        log_start_offset=params.log_start_offset,
        recovery_point=params.recovery_point,
        next_offset=params.log_start_offset if log_end is None else log_end,
        epoch_cache=epochs,
        deleter=deleter,
        rng=rng,
        durable=durable,
    )
    log.remove_and_delete_segments(doomed)
    if len(segments) == 0:
        segments.add(log.new_segment(params.log_start_offset))
    return _finish(log, params, log_end, ctx)


def _finish(
    log: PartitionLog, params: LoadParams, log_end: int | None, ctx: _Recovery
) -> PartitionLog:
    end = log.log_end_offset
    clean = params.had_clean_shutdown and log_end is not None
    recovery_point = end if clean else min(params.recovery_point, end)
    first = log.segments.first
    assert first is not None
    start = max(params.log_start_offset, first.base_offset)
    if faults.active(log, "log-start-offset-not-clamped-on-restart"):
        start = params.log_start_offset
    log.epoch_cache.truncate_from_end(end)
    log.epoch_cache.truncate_from_start(params.log_start_offset)
    log.restore_offsets(log_start_offset=start, recovery_point=recovery_point)
    log.producer_state = _load_producer_state(log, start, params, ctx.now)
    log.transactions, aborted = rebuild(map(segment_txn_batches, log.segments), start)
    for segment, entries in zip(log.segments, aborted, strict=True):
        if segment.base_offset in ctx.recovered and entries != segment.aborted_txns:
            _rewrite_txn_index(segment, entries)
    return log


def _load_producer_state(
    log: PartitionLog, log_start_offset: int, params: LoadParams, now: int
) -> ProducerStateManager:
    """Step 6: the producer state the log starts with."""
    state = ProducerStateManager(
        log.directory, log.name, expiration_ms=params.producer_expiration_ms
    )
    bases = log.segments.base_offsets
    state.remove_stray_snapshots(bases)
    rebuild_producer_state(
        state,
        bases,
        segment_batch_reader(log.segments),
        log_start_offset=log_start_offset,
        last_offset=log.log_end_offset,
        now_ms=now,
        reload_from_clean_shutdown=params.had_clean_shutdown,
    )
    return state


def _rewrite_txn_index(segment: LogSegment, entries: list[AbortedTxn]) -> None:
    """A recovered segment's ``.txnindex`` as the replay rebuilt it (step 6)."""
    _log.warning("Rebuilt the transaction index of %s", segment.log.path)
    segment.aborted_txns[:] = entries
    path = segment.path(FileKind.TXN_INDEX)
    if entries:
        path.write_bytes(encode_txn_index(entries))
    else:
        path.unlink(missing_ok=True)


def segment_txn_batches(segment: LogSegment) -> list[tuple[BatchHeader, ControlType | None]]:
    """Every v2 batch header of ``segment`` with its marker type (step 6)."""
    with segment.log.scan(0) as (entries, _scanner, data):
        return list(batches(data, entries, str(segment.log.path)))
