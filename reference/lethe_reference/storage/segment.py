"""One log segment on disk: ``.log`` + ``.index`` + ``.timeindex`` (+ ``.txnindex``).

Theory of operation
-------------------
A segment is named after its base offset (``lethe_formats.storage.filenames``)::

    <dir>/00000000000000000042.log        raw batches, appended, never rewritten
    <dir>/00000000000000000042.index      offset index  } rewritten (trimmed) on
    <dir>/00000000000000000042.timeindex  time index    } flush, roll and close
    <dir>/00000000000000000042.txnindex   aborted transactions, only once one exists

The index and roll rules live in :class:`~.segment_state.SegmentState` (shared
with the fixture generator); this class adds the files. Kafka keeps indexes
memory-mapped and preallocated; here they are in memory and written trimmed,
which is exactly what Kafka leaves after a roll or a clean shutdown. Indexes
carry no checksum: after a crash the loader calls :meth:`LogSegment.recover`,
which rescans the ``.log`` with CRC checks and rebuilds them (``LogSegment.
recover``): every valid entry is re-indexed, the first invalid or torn entry
and everything after it is cut off, and the number of bytes cut is returned.

Reads and searches (position of an offset, reads, timestamp lookups) are in
:mod:`.segment_reads`; deletion renames the files with a ``.deleted`` suffix
(:meth:`LogSegment.change_file_suffixes`) before they are removed for good.

Not task-safe: the caller holds the partition lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from lethe_formats.errors import FormatError
from lethe_formats.model import AbortedTxn, BatchHeader, OffsetIndexEntry, TimeIndexEntry
from lethe_formats.storage.filenames import FileKind, segment_file_name
from lethe_formats.storage.index import (
    check_offset_index,
    check_time_index,
    read_offset_index,
    read_time_index,
)
from lethe_formats.storage.txn_index import check_txn_index, encode_txn_index, read_txn_index

from lethe_reference.storage import segment_reads
from lethe_reference.storage.file_records import SegmentFile, last_offset, max_timestamp
from lethe_reference.storage.offset_index import OffsetIndex
from lethe_reference.storage.segment_state import RollParams, SegmentState
from lethe_reference.storage.settings import LogSettings
from lethe_reference.storage.time_index import TimeIndex, TimestampOffset

__all__ = ["EpochAssigner", "LogSegment"]

#: ``assign(epoch, start_offset)`` of a leader-epoch cache, used during recovery.
EpochAssigner = Callable[[int, int], None]
_INDEX_KINDS = (FileKind.INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)


class LogSegment:
    """A segment's files and state; build with :meth:`create` or :meth:`open`."""

    def __init__(
        self,
        directory: Path,
        state: SegmentState,
        log: SegmentFile,
        aborted_txns: list[AbortedTxn],
        *,
        suffix: str = "",
        needs_recovery: bool = False,
    ) -> None:
        self.directory = directory
        self.state = state
        self.log = log
        self.aborted_txns = aborted_txns
        self.suffix = suffix
        #: True when an index file was missing or failed its checks on open.
        self.needs_recovery = needs_recovery
        #: Files removed together with this segment's (a replaced segment's producer
        #: snapshot renamed ``.snapshot.deleted`` by the cleaner's swap).
        self.extra_files: list[Path] = []

    # --- construction -----------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: Path,
        base_offset: int,
        settings: LogSettings,
        *,
        now_ms: int,
        roll_jitter_ms: int = 0,
        suffix: str = "",
    ) -> LogSegment:
        """A new empty segment; stale files of the same name are replaced (``roll``)."""
        for kind in (FileKind.LOG, *_INDEX_KINDS):
            (directory / segment_file_name(base_offset, kind, suffix)).unlink(missing_ok=True)
        state = SegmentState(
            base_offset,
            index_interval_bytes=settings.index_interval_bytes,
            max_index_bytes=settings.segment_index_bytes,
            roll_jitter_ms=roll_jitter_ms,
            created_ms=now_ms,
        )
        log = SegmentFile(directory / segment_file_name(base_offset, FileKind.LOG, suffix))
        segment = cls(directory, state, log, [], suffix=suffix)
        segment.write_indexes()
        return segment

    @classmethod
    def open(
        cls,
        directory: Path,
        base_offset: int,
        settings: LogSettings,
        *,
        now_ms: int,
        roll_jitter_ms: int = 0,
        suffix: str = "",
    ) -> LogSegment:
        """Reopen the segment's files. A missing offset index, or an index that
        fails Kafka's sanity checks, sets :attr:`needs_recovery`; a missing time
        index is recreated empty, as Kafka does."""

        def named(kind: FileKind) -> Path:
            return directory / segment_file_name(base_offset, kind, suffix)

        offsets, offsets_ok = _load_offset_index(named(FileKind.INDEX), base_offset)
        times, times_ok = _load_time_index(named(FileKind.TIME_INDEX), base_offset)
        aborted, txns_ok = _load_txn_index(named(FileKind.TXN_INDEX), base_offset)
        max_bytes = settings.segment_index_bytes
        state = SegmentState(
            base_offset,
            index_interval_bytes=settings.index_interval_bytes,
            max_index_bytes=max_bytes,
            roll_jitter_ms=roll_jitter_ms,
            created_ms=now_ms,
            offset_index=OffsetIndex(base_offset, max_index_bytes=max_bytes, entries=offsets),
            time_index=TimeIndex(base_offset, max_index_bytes=max_bytes, entries=times),
        )
        log = SegmentFile(named(FileKind.LOG))
        state.size = log.size
        healthy = offsets_ok and times_ok and txns_ok
        return cls(directory, state, log, aborted, suffix=suffix, needs_recovery=not healthy)

    # --- basic facts ------------------------------------------------------------------

    @property
    def base_offset(self) -> int:
        return self.state.base_offset

    @property
    def size(self) -> int:
        return self.state.size

    def path(self, kind: FileKind) -> Path:
        return self.directory / segment_file_name(self.base_offset, kind, self.suffix)

    def last_modified_ms(self) -> int:
        return self.log.last_modified_ms()

    def largest_timestamp(self) -> int:
        """Max record timestamp if any, else the ``.log`` mtime (``largestTimestamp``)."""
        ts = self.state.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified_ms()

    def __repr__(self) -> str:
        return (
            f"LogSegment(baseOffset={self.base_offset}, size={self.size}, "
            f"largestRecordTimestamp={self.state.max_timestamp_so_far})"
        )

    def should_roll(self, params: RollParams) -> bool:
        """``shouldRoll``, loading the first batch's timestamp on first use."""
        state = self.state
        if state.rolling_based_timestamp is None and state.size > 0:
            with self.log.scan(0) as (entries, _scanner, _data):
                first = next(entries, None)
                if first is not None:
                    state.rolling_based_timestamp = max_timestamp(first)
        return state.should_roll(params)

    # --- writing ----------------------------------------------------------------------

    def append(
        self,
        records: bytes | bytearray | memoryview,
        *,
        largest_offset: int,
        largest_timestamp: int,
        shallow_offset_of_max_timestamp: int,
    ) -> int:
        """Append raw entries (already validated); returns their start position."""
        position = self.state.on_append(
            len(records),
            largest_offset=largest_offset,
            largest_timestamp=largest_timestamp,
            shallow_offset_of_max_timestamp=shallow_offset_of_max_timestamp,
        )
        self.log.append(records)
        return position

    def append_aborted_txn(self, txn: AbortedTxn) -> None:
        """Record an aborted transaction whose ABORT marker is in this segment."""
        self.aborted_txns.append(txn)
        with open(self.path(FileKind.TXN_INDEX), "ab") as out:
            out.write(encode_txn_index([txn]))

    def write_indexes(self) -> None:
        """Write ``.index`` and ``.timeindex`` as they are now (trimmed)."""
        self.path(FileKind.INDEX).write_bytes(self.state.offset_index.to_bytes())
        self.path(FileKind.TIME_INDEX).write_bytes(self.state.time_index.to_bytes())

    def flush(self, *, fsync: bool = True) -> None:
        self.write_indexes()
        if fsync:
            self.log.flush()
            for kind in _INDEX_KINDS:
                _fsync_path(self.path(kind))

    def become_inactive(self) -> None:
        """The final time index entry, then trimmed indexes (``onBecomeInactiveSegment``)."""
        self.state.become_inactive()
        self.write_indexes()

    def close(self) -> None:
        self.become_inactive()
        self.log.close()

    # --- recovery and truncation ------------------------------------------------------

    def recover(self, assign_epoch: EpochAssigner | None = None) -> int:
        """Rebuild the indexes from the ``.log``; cut the first invalid entry and
        all after it. Returns the number of bytes cut (``LogSegment.recover``).

        The ``.txnindex`` keeps its entries whose marker survived: Kafka rebuilds
        it from producer state, which lethe does not track yet.
        """
        state = self.state
        state.reset()
        end_offset = self.base_offset
        with self.log.scan(0, verify_crc=True) as (entries, _scanner, _data):
            for entry in entries:
                last = last_offset(entry)
                if entry.crc_valid is False or not state.can_convert_to_relative_offset(last):
                    break
                end_offset = last + 1
                stamp = max_timestamp(entry)
                state.on_append(
                    entry.header.size_in_bytes,
                    largest_offset=last,
                    largest_timestamp=stamp,
                    shallow_offset_of_max_timestamp=last,
                )
                header = entry.header
                if assign_epoch is not None and isinstance(header, BatchHeader):
                    _assign_recovered_epoch(assign_epoch, header)
        truncated = self.log.truncate_to(state.size)
        self._keep_txns_below(end_offset)
        state.become_inactive()
        self.write_indexes()
        self.needs_recovery = False
        return truncated

    def truncate_to(self, offset: int, *, now_ms: int) -> int:
        """Remove every batch holding an offset >= ``offset`` and the index entries
        for them; returns the bytes removed (``LogSegment.truncateTo``)."""
        state = self.state
        mapping = segment_reads.translate_offset(self, offset)
        state.offset_index.truncate_to(offset)
        state.time_index.truncate_to(offset)
        self._keep_txns_below(offset)
        removed = 0 if mapping is None else self.log.truncate_to(mapping.position)
        state.size = self.log.size
        if state.size == 0:
            state.created_ms = now_ms
            state.rolling_based_timestamp = None
        state.bytes_since_last_index_entry = 0
        if state.max_timestamp_so_far >= 0:
            state.replace_max_so_far(self._read_largest_timestamp())
        self.write_indexes()
        return removed

    def _read_largest_timestamp(self) -> TimestampOffset:
        last = self.state.time_index.last_entry
        position = self.state.offset_index.lookup(last.offset).position
        after = segment_reads.largest_timestamp_after(self, position)
        return after if after.timestamp > last.timestamp else last

    def _keep_txns_below(self, end_offset: int) -> None:
        kept = [txn for txn in self.aborted_txns if txn.last_offset < end_offset]
        if len(kept) != len(self.aborted_txns):
            self.aborted_txns[:] = kept
            self._rewrite_txn_index()

    def _rewrite_txn_index(self) -> None:
        path = self.path(FileKind.TXN_INDEX)
        if self.aborted_txns:
            path.write_bytes(encode_txn_index(self.aborted_txns))
        else:
            path.unlink(missing_ok=True)

    # --- renaming and deletion --------------------------------------------------------

    def change_file_suffixes(self, old: str, new: str) -> None:
        """Rename every file from suffix ``old`` to ``new`` (e.g. ``""`` -> ``.deleted``)."""
        if old != self.suffix:
            raise ValueError(f"segment files have suffix {self.suffix!r}, not {old!r}")
        for kind in _INDEX_KINDS:
            source = self.path(kind)
            if source.exists():
                os.replace(source, self.directory / segment_file_name(self.base_offset, kind, new))
        self.log.rename(self.directory / segment_file_name(self.base_offset, FileKind.LOG, new))
        self.suffix = new

    def delete_files(self) -> None:
        """Close and remove all four files and :attr:`extra_files` (missing ones are fine)."""
        self.log.close()
        for kind in (FileKind.LOG, *_INDEX_KINDS):
            self.path(kind).unlink(missing_ok=True)
        for path in self.extra_files:
            path.unlink(missing_ok=True)

    def file_paths(self) -> list[Path]:
        """Paths of the files that exist now (:attr:`extra_files` included)."""
        own = [p for p in map(self.path, (FileKind.LOG, *_INDEX_KINDS)) if p.exists()]
        return own + [p for p in self.extra_files if p.exists()]


def _assign_recovered_epoch(assign_epoch: EpochAssigner, header: BatchHeader) -> None:
    if header.partition_leader_epoch >= 0:
        assign_epoch(header.partition_leader_epoch, header.base_offset)


def _fsync_path(path: Path) -> None:
    if not path.exists():
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _load_offset_index(path: Path, base: int) -> tuple[tuple[OffsetIndexEntry, ...], bool]:
    """Entries and whether they can be trusted: any problem (Kafka's sanity
    checks or lethe's stricter ordering checks) means rebuild, never serve."""
    if not path.exists():
        return (), False
    data = path.read_bytes()
    if check_offset_index(data, base_offset=base):
        return (), False
    return read_offset_index(data), True


def _load_time_index(path: Path, base: int) -> tuple[tuple[TimeIndexEntry, ...], bool]:
    if not path.exists():  # Kafka recreates it empty ("timeIndexFileNewlyCreated")
        return (), True
    data = path.read_bytes()
    if check_time_index(data, base_offset=base):
        return (), False
    return read_time_index(data), True


def _load_txn_index(path: Path, base: int) -> tuple[list[AbortedTxn], bool]:
    if not path.exists():
        return [], True
    data = path.read_bytes()
    try:
        entries = read_txn_index(data)
    except FormatError:
        return [], False
    if check_txn_index(data, base_offset=base):
        return [], False
    return list(entries), True
