"""The leader-epoch cache of a partition and its ``leader-epoch-checkpoint`` file.

Theory of operation
-------------------
Each batch a leader appends carries ``partitionLeaderEpoch``; the cache maps
every epoch to the first offset written in it (``LeaderEpochFileCache``)::

    leader-epoch-checkpoint          0          version
                                     2          entries
                                     0 0        epoch startOffset
                                     3 1200

Rules kept from Kafka:

* :meth:`LeaderEpochCache.assign` adds ``(epoch, start)`` when the epoch
  differs from the latest one or starts earlier; entries with an epoch >= the
  new one, or a start offset >= the new one, are dropped first so epochs and
  offsets both increase. A change is written to the file at once.
* :meth:`truncate_from_start` (log start offset moved): entries starting at
  or below the new start are removed, and the last of them comes back with
  its start moved to the new start offset, so the earliest epoch begins at
  the log start offset (golden delete-records: ``0 0`` became ``0 19``).
* :meth:`truncate_from_end`: entries starting at or after the offset go.
* :meth:`epoch_for_offset`: the epoch whose range holds the offset.

Kafka flushes truncations asynchronously; here every change is written
synchronously with ``write_leader_epoch_checkpoint`` (tmp + fsync + rename).
Not task-safe: the caller holds the partition lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    EpochEntry,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)

from lethe_reference.storage.errors import KafkaStorageError

__all__ = ["LEADER_EPOCH_CHECKPOINT_FILE", "EpochEntry", "LeaderEpochCache"]


class LeaderEpochCache:
    """Epoch -> start offset, backed by ``path`` (None: memory only)."""

    def __init__(self, path: Path | None, entries: Iterable[EpochEntry] = ()) -> None:
        self.path = path
        self._entries: list[EpochEntry] = []
        for entry in entries:
            self._assign(entry)

    @classmethod
    def load(cls, directory: Path) -> LeaderEpochCache:
        """Read ``<directory>/leader-epoch-checkpoint`` (a missing file is empty)."""
        path = directory / LEADER_EPOCH_CHECKPOINT_FILE
        if not path.exists():
            return cls(path)
        try:
            checkpoint = read_leader_epoch_checkpoint(path)
        except FormatError as error:
            message = f"Error while reading checkpoint file {path}: {error}"
            raise KafkaStorageError(message) from None
        return cls(path, checkpoint.entries)

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    @property
    def latest_entry(self) -> EpochEntry | None:
        return self._entries[-1] if self._entries else None

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self._entries[0] if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; True if anything changed."""
        changed = self._assign(EpochEntry(epoch, start_offset))
        if changed:
            self.flush()
        return changed

    def assign_if_newer(self, epoch: int, start_offset: int) -> None:
        """Recovery's rule: assign only an epoch above the latest cached one."""
        latest = self.latest_epoch
        if epoch >= 0 and (latest is None or epoch > latest):
            self.assign(epoch, start_offset)

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        latest = self.latest_entry
        if latest and latest.epoch == entry.epoch and entry.start_offset >= latest.start_offset:
            return False  # isUpdateNeeded: same epoch, not earlier
        while self._entries and (
            self._entries[-1].epoch >= entry.epoch
            or self._entries[-1].start_offset >= entry.start_offset
        ):
            self._entries.pop()
        self._entries.append(entry)
        return True

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch whose range contains ``offset`` (``epochForOffset``)."""
        found = None
        for entry in self._entries:
            if entry.start_offset == offset:
                return entry.epoch
            if entry.start_offset > offset:
                return found
            found = entry.epoch
        return found

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end offset)`` as OffsetsForLeaderEpoch answers (-1, -1 if unknown)."""
        if requested_epoch == -1 or not self._entries:  # UNDEFINED_EPOCH only
            return -1, -1
        if requested_epoch == self._entries[-1].epoch:
            return requested_epoch, log_end_offset
        higher = next((e for e in self._entries if e.epoch > requested_epoch), None)
        if higher is None:
            return -1, -1
        floor = [e for e in self._entries if e.epoch <= requested_epoch]
        return (floor[-1].epoch if floor else requested_epoch), higher.start_offset

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop entries at or below ``start_offset``; the last one restarts there."""
        removed = [e for e in self._entries if e.start_offset <= start_offset]
        if not removed:
            return
        kept = [e for e in self._entries if e.start_offset > start_offset]
        self._entries = [EpochEntry(removed[-1].epoch, start_offset), *kept]
        self.flush()

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop entries starting at or after ``end_offset``."""
        kept = [e for e in self._entries if e.start_offset < end_offset]
        if end_offset >= 0 and len(kept) != len(self._entries):
            self._entries = kept
            self.flush()

    def clear_and_flush(self) -> None:
        self._entries.clear()
        self.flush()

    def flush(self) -> None:
        """Write the checkpoint file (tmp + fsync + rename), if the cache has one."""
        if self.path is not None:
            write_leader_epoch_checkpoint(self.path, list(self._entries))
