"""Producer state on disk: ``<offset>.snapshot`` files and the replay on load.

Theory of operation
-------------------
:class:`ProducerStateManager` is Kafka's ``ProducerStateManager`` minus the
transactions (those are :mod:`.transactions`): the :class:`~.producer_state.ProducerTable`
plus the snapshot files of one partition directory and two offsets:

* **map end offset**: the offset up to which the table reflects the log
  (every append moves it to the LEO, a roll to the new segment's base);
* **last snapshot offset**: where the newest snapshot was taken.

:meth:`~ProducerStateManager.take_snapshot` writes ``<map end offset>.snapshot``
(:func:`~lethe_formats.storage.producer_snapshot.encode_producer_snapshot`)
only when the map end offset moved past the last snapshot. The log takes one
at every **roll** (named after the new segment, without fsync; the roll's
flush syncs it) and at **close** (clean shutdown, with fsync), as
``UnifiedLog.roll`` / ``close`` do.

**Deletion.** A snapshot named after a segment goes with that segment,
renamed ``.snapshot.deleted`` and removed with its files after
``file.delete.delay.ms`` (``deleteProducerSnapshots``: retention, DeleteRecords
followed by segment deletion, the cleaner, recovery truncation). On load,
snapshots at or below the log start offset or above the LEO are deleted
(``truncateAndReload``), and so is every snapshot not named after a segment,
except the newest one when it lies above the last segment's base
(``removeStraySnapshots``: the clean-shutdown snapshot at the LEO).
Moving the log start offset alone (DeleteRecords) deletes nothing and keeps
the producers in memory, as in Kafka 4.0.

**Load** (:func:`rebuild_producer_state`, ``UnifiedLog.rebuildProducerState``):
after a clean shutdown with no snapshot at all (a log written before
snapshots existed), empty snapshots are written at the bases of the last two
segments and at the LEO and nothing is replayed. Otherwise the newest
readable snapshot is loaded (a corrupt one is deleted and the next older one
tried; expired producers are skipped), the batches from its offset to the
target offset are replayed, taking a snapshot on the way at the bases of the
last two segments, and a final snapshot is taken at the target offset. The
loader (:mod:`.loader`) runs this once per segment it recovers after a crash
(``LogLoader.recoverSegment``) and once at the end, so a kill -9 leaves the
same snapshot files as Kafka's recovery does.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from lethe_formats.storage.filenames import (
    FileKind,
    FileNameError,
    parse_segment_file_name,
    segment_file_name,
)
from lethe_formats.storage.producer_snapshot import (
    CorruptSnapshotError,
    ProducerSnapshotEntry,
    encode_producer_snapshot,
    read_producer_snapshot,
)

from lethe_reference.storage.producer_state import ProducerBatch, ProducerTable

__all__ = ["DELETED_SNAPSHOT_SUFFIX", "ProducerStateManager", "rebuild_producer_state"]

_log = logging.getLogger(__name__)
DELETED_SNAPSHOT_SUFFIX = ".deleted"
#: Reads the producer batches of a segment (by base offset) whose last offset lies
#: in ``[start, end)``.
SegmentReader = Callable[[int, int, int], Iterable[ProducerBatch]]


def list_snapshot_files(directory: Path) -> dict[int, Path]:
    """Offset -> path of every regular ``<20 digits>.snapshot`` file in ``directory``."""
    found: dict[int, Path] = {}
    if not directory.is_dir():
        return found
    for path in directory.iterdir():
        if not path.name.endswith(".snapshot") or not path.is_file():
            continue
        try:
            name = parse_segment_file_name(path.name)
        except FileNameError:
            continue
        if name.kind is FileKind.SNAPSHOT and not name.extra_suffix:
            found[name.base_offset] = path
    return dict(sorted(found.items()))


class ProducerStateManager:
    """Producer table + snapshot files of one partition directory (module docstring)."""

    def __init__(self, directory: Path, name: str, *, expiration_ms: int) -> None:
        self.directory = directory
        self.table = ProducerTable(name)
        self.expiration_ms = expiration_ms
        self.snapshots = list_snapshot_files(directory)
        self.map_end_offset = 0
        self.last_snap_offset = 0

    def active_producers(self) -> list[ProducerSnapshotEntry]:
        """Every producer the partition knows, in Kafka's map order (DescribeProducers)."""
        return self.table.snapshot_entries()

    # --- snapshots ----------------------------------------------------------------------

    @property
    def latest_snapshot_offset(self) -> int | None:
        return max(self.snapshots, default=None)

    def take_snapshot(self, *, sync: bool = True) -> Path | None:
        """Write ``<map end offset>.snapshot`` if the map moved since the last one."""
        if self.map_end_offset <= self.last_snap_offset:
            return None
        path = self.directory / segment_file_name(self.map_end_offset, FileKind.SNAPSHOT)
        data = encode_producer_snapshot(self.table.snapshot_entries())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        self.snapshots[self.map_end_offset] = path
        self.snapshots = dict(sorted(self.snapshots.items()))
        self.last_snap_offset = self.map_end_offset
        _log.info(
            "Wrote producer snapshot at offset %d with %d producer ids",
            self.map_end_offset,
            len(self.table),
        )
        return path

    def _delete_snapshot(self, offset: int) -> None:
        path = self.snapshots.pop(offset, None)
        if path is not None:
            path.unlink(missing_ok=True)

    def mark_snapshot_for_deletion(self, offset: int) -> Path | None:
        """``removeAndMarkSnapshotForDeletion``: rename it ``.deleted``; the caller
        removes the returned path with the segment's files."""
        path = self.snapshots.pop(offset, None)
        if path is None:
            return None
        target = path.with_name(path.name + DELETED_SNAPSHOT_SUFFIX)
        try:
            os.replace(path, target)
        except FileNotFoundError:
            return None
        return target

    def remove_stray_snapshots(self, segment_bases: Sequence[int]) -> None:
        """``removeStraySnapshots`` (module docstring)."""
        self.snapshots = list_snapshot_files(self.directory)
        bases = set(segment_bases)
        strays = [offset for offset in self.snapshots if offset not in bases]
        keep = strays[-1] if strays and strays[-1] > max(bases, default=-1) else None
        for offset in strays:
            if offset != keep:
                self._delete_snapshot(offset)

    # --- offsets ------------------------------------------------------------------------

    def update_map_end_offset(self, offset: int) -> None:
        self.map_end_offset = offset

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """``onLogStartOffsetIncremented`` (transactions are :mod:`.transactions`')."""
        self.map_end_offset = max(self.map_end_offset, log_start_offset)
        latest = self.latest_snapshot_offset
        self.last_snap_offset = log_start_offset if latest is None else latest

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and delete every snapshot."""
        self.table.clear()
        for snapshot in list(self.snapshots):
            self._delete_snapshot(snapshot)
        self.last_snap_offset = 0
        self.map_end_offset = offset

    def remove_expired_producers(self, now_ms: int) -> list[int]:
        return self.table.remove_expired(now_ms, self.expiration_ms)

    def is_empty(self) -> bool:
        return len(self.table) == 0

    # --- load ---------------------------------------------------------------------------

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int, now_ms: int) -> None:
        """``truncateAndReload``: drop out-of-range snapshots, reload from the newest."""
        for offset in list(self.snapshots):
            if offset > log_end_offset or offset <= log_start_offset:
                self._delete_snapshot(offset)
        if log_end_offset != self.map_end_offset:
            self.table.clear()
            self._load_from_snapshot(log_start_offset, now_ms)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def _load_from_snapshot(self, log_start_offset: int, now_ms: int) -> None:
        while self.snapshots:
            offset = max(self.snapshots)
            path = self.snapshots[offset]
            try:
                snapshot = read_producer_snapshot(path.read_bytes(), file=str(path))
            except (CorruptSnapshotError, OSError) as error:
                _log.warning("Failed to load producer snapshot from '%s': %s", path, error)
                self._delete_snapshot(offset)
                continue
            _log.info("Loading producer state from snapshot file '%s'", path)
            self.table.load(snapshot.entries, now_ms, self.expiration_ms)
            self.last_snap_offset = self.map_end_offset = offset
            return
        self.last_snap_offset = self.map_end_offset = log_start_offset

    def replay(self, batches: Iterable[ProducerBatch]) -> None:
        """Apply batches read from the log (origin REPLICATION); moves the map end."""
        for batch in batches:
            if batch.header.producer_id >= 0:
                self.table.apply(batch)
            self.map_end_offset = batch.header.last_offset + 1


def _offsets_to_snapshot(segment_bases: Sequence[int], last_offset: int) -> list[int]:
    return [*segment_bases[-2:], last_offset]


def rebuild_producer_state(
    manager: ProducerStateManager,
    segment_bases: Sequence[int],
    read_segment: SegmentReader,
    *,
    log_start_offset: int,
    last_offset: int,
    now_ms: int,
    reload_from_clean_shutdown: bool,
) -> None:
    """``UnifiedLog.rebuildProducerState`` (module docstring)."""
    to_snapshot = _offsets_to_snapshot(segment_bases, last_offset)
    if manager.latest_snapshot_offset is None and reload_from_clean_shutdown:
        for offset in to_snapshot:
            manager.update_map_end_offset(offset)
            manager.take_snapshot()
        return
    was_empty = manager.is_empty() and manager.map_end_offset >= last_offset
    manager.truncate_and_reload(log_start_offset, last_offset, now_ms)
    if last_offset > manager.map_end_offset and not was_empty:
        first = manager.map_end_offset
        for index, base in enumerate(segment_bases):
            following = segment_bases[index + 1] if index + 1 < len(segment_bases) else None
            if base >= last_offset or (following is not None and following <= first):
                continue
            start = max(base, manager.map_end_offset, log_start_offset)
            manager.update_map_end_offset(start)
            if base in to_snapshot:
                manager.take_snapshot()
            manager.replay(read_segment(base, start, last_offset))
    manager.update_map_end_offset(last_offset)
    manager.take_snapshot()
