"""Which log to clean, and the cleaner checkpoint (``LogCleanerManager``).

Theory of operation
-------------------
**Checkpoint.** ``cleaner-offset-checkpoint`` at the log dir root holds, per
compacted partition, the first dirty offset: the end of the last cleaning
(KIP534-CKP-1). It uses the offset checkpoint format and is written
atomically (tmp + fsync + rename, KIP534-CKP-3). Every update re-reads the
file, keeps only partitions that still exist, changes one entry and writes it
all back (``updateCheckpoints``). A file that cannot be read counts as empty,
with an error logged (Kafka: KafkaStorageException caught by the cleaner).

**Cleanable range** (``cleanableOffsets``, kafka-facts 4.1):

* first dirty offset = the checkpoint, or the log start offset when there is
  none; a checkpoint below the log start offset or above the log end offset
  is reset to the log start offset and written back at once (KIP534-CKP-2);
* first uncleanable offset = min(last stable offset, active segment base,
  base of the first dirty non-active segment whose largest timestamp is
  newer than ``now - min.compaction.lag.ms`` when that lag is > 0), never
  below the first dirty offset, then moved to a segment boundary
  (``calculateCleanableBytes``): the base of the first non-active segment
  from it, else the active segment's base;
* dirty bytes = sizes of the segments from the first dirty offset up to it;
  clean bytes = sizes of the segments below the first dirty offset;
  ratio = dirty / (clean + dirty).

**Choice** (``grabFilthiestCompactedLog``): among compacted logs not marked
uncleanable and not empty, those with ``ratio > min.cleanable.dirty.ratio``
(strictly), or with cleanable bytes while ``max.compaction.lag.ms`` is
breached (the earliest first-batch timestamp > 0 of a dirty non-active
segment is older than ``now - max.compaction.lag.ms``); the highest ratio
wins (the first one found, on a tie).

**Uncleanable.** A log whose cleaning failed (corrupt data) is marked and
skipped until it is deleted or the broker restarts, as Kafka does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import read_offset_checkpoint, write_offset_checkpoint

from lethe_reference import faults
from lethe_reference.storage.file_records import max_timestamp
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.log_manager import CLEANER_CHECKPOINT_FILE, LogManager
from lethe_reference.storage.segment import LogSegment

__all__ = ["CLEANER_CHECKPOINT_FILE", "CleanerManager", "LogToClean", "TopicPartition"]

_log = logging.getLogger("lethe_reference.cleaner")
TopicPartition = tuple[str, int]
LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class LogToClean:
    """A candidate with its cleanable range and sizes (``LogToClean``)."""

    topic_partition: TopicPartition
    log: PartitionLog
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def non_active_segments_from(log: PartitionLog, start: int) -> list[LogSegment]:
    """``nonActiveLogSegmentsFrom``: segments from the floor of ``start`` below the active one."""
    active = log.active_segment.base_offset
    if start > active:
        return []
    return log.segments.covering(start, active)


class CleanerManager:
    """Checkpoint and choice for the logs of one log directory (module docstring)."""

    def __init__(self, log_manager: LogManager) -> None:
        self.log_manager = log_manager
        self.uncleanable: set[TopicPartition] = set()

    @property
    def checkpoint_path(self) -> Path:
        return self.log_manager.log_dir / CLEANER_CHECKPOINT_FILE

    # --- checkpoint ---------------------------------------------------------------------

    def read_checkpoints(self) -> dict[TopicPartition, int]:
        path = self.checkpoint_path
        if not path.exists():
            return {}
        try:
            return read_offset_checkpoint(path).as_dict()
        except (FormatError, OSError) as error:
            _log.error(
                "Failed to access checkpoint file %s in dir %s: %s", path.name, path.parent, error
            )
            return {}

    def ensure_checkpoint_file(self) -> None:
        """``CheckpointFile``'s constructor: an empty file when none exists."""
        path = self.checkpoint_path
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()

    def update_checkpoint(self, key: TopicPartition, offset: int | None) -> None:
        """Set (or, with None, remove) one partition's entry; drop vanished partitions."""
        current = {k: v for k, v in self.read_checkpoints().items() if k in self.log_manager.logs}
        if offset is None:
            current.pop(key, None)
        else:
            current[key] = offset
        entries = sorted((topic, partition, value) for (topic, partition), value in current.items())
        write_offset_checkpoint(self.checkpoint_path, entries)

    # --- cleanable range ----------------------------------------------------------------

    def cleanable_offsets(
        self, key: TopicPartition, log: PartitionLog, last_clean: int | None, now_ms: int
    ) -> tuple[int, int]:
        """(first dirty, first uncleanable); resets a bad checkpoint (CKP-2)."""
        start = log.log_start_offset
        first_dirty = start if last_clean is None else last_clean
        if first_dirty < start or first_dirty > log.log_end_offset:
            if last_clean is not None:
                _log.warning(
                    "Resetting first dirty offset of %s to log start offset %d since the "
                    "checkpointed offset %d is invalid.",
                    log.name,
                    start,
                    first_dirty,
                )
            first_dirty = start
            self.update_checkpoint(key, start)
        bounds = [log.last_stable_offset, log.active_segment.base_offset]
        lag = max(getattr(log.settings, "min_compaction_lag_ms", 0), 0)
        if lag > 0 and not faults.active(log, "cleaner-ignores-min-compaction-lag"):
            for segment in non_active_segments_from(log, first_dirty):
                if segment.largest_timestamp() > now_ms - lag:
                    bounds.append(segment.base_offset)
                    break
        return first_dirty, max(first_dirty, min(bounds))

    def log_to_clean(
        self, key: TopicPartition, log: PartitionLog, last_clean: int | None, now_ms: int
    ) -> LogToClean:
        first_dirty, uncleanable = self.cleanable_offsets(key, log, last_clean, now_ms)
        following = non_active_segments_from(log, uncleanable)
        boundary = following[0].base_offset if following else log.active_segment.base_offset
        dirty = log.segments.covering(min(first_dirty, boundary), boundary)
        clean = log.segments.covering(-1, first_dirty) if first_dirty > -1 else []
        return LogToClean(
            key,
            log,
            first_dirty,
            boundary,
            clean_bytes=sum(s.size for s in clean),
            cleanable_bytes=sum(s.size for s in dirty),
            need_compaction_now=_max_compaction_delay(log, first_dirty, now_ms) > 0,
        )

    # --- choice -------------------------------------------------------------------------

    def compacted_logs(self) -> list[tuple[TopicPartition, PartitionLog]]:
        return [
            (key, log)
            for key, log in sorted(self.log_manager.logs.items())
            if log.settings.compact and key not in self.uncleanable
        ]

    def cleanable_logs(self, now_ms: int) -> list[LogToClean]:
        """Every log that qualifies now, filthiest first."""
        checkpoints = self.read_checkpoints()
        found = []
        for key, log in self.compacted_logs():
            try:
                candidate = self.log_to_clean(key, log, checkpoints.get(key), now_ms)
            except Exception:  # Kafka: LogCleaningException -> markPartitionUncleanable
                _log.exception("Failed to calculate log cleaning stats for partition %s", log.name)
                self.mark_uncleanable(key)
                continue
            if candidate.total_bytes <= 0:
                continue
            ratio_ok = candidate.cleanable_ratio > _min_ratio(log)
            lag_ok = candidate.need_compaction_now and candidate.cleanable_bytes > 0
            if ratio_ok or lag_ok:
                found.append(candidate)
        found.sort(key=lambda c: c.cleanable_ratio, reverse=True)
        return found

    def grab_filthiest(self, now_ms: int) -> LogToClean | None:
        found = self.cleanable_logs(now_ms)
        return found[0] if found else None

    def mark_uncleanable(self, key: TopicPartition) -> None:
        self.uncleanable.add(key)

    def forget_vanished(self) -> None:
        """``maintainUncleanablePartitions``: drop marks of deleted partitions."""
        self.uncleanable &= set(self.log_manager.logs)


def _min_ratio(log: PartitionLog) -> float:
    return float(getattr(log.settings, "min_cleanable_dirty_ratio", 0.5))


def _max_compaction_delay(log: PartitionLog, first_dirty: int, now_ms: int) -> int:
    """``maxCompactionDelay``: how long past ``max.compaction.lag.ms`` the oldest dirty data is."""
    stamps = []
    for segment in non_active_segments_from(log, first_dirty):
        _load_first(segment)
        stamp = segment.state.first_batch_timestamp()
        if stamp > 0:
            stamps.append(stamp)
    earliest = min(stamps, default=LONG_MAX)
    until = now_ms - max(log.settings.max_compaction_lag_ms, 0)
    return until - earliest if earliest < until else 0


def _load_first(segment: LogSegment) -> None:
    """Make sure the segment's first batch timestamp is known (``getFirstBatchTimestamp``)."""
    if segment.state.rolling_based_timestamp is None and segment.size > 0:
        with segment.log.scan(0) as (entries, _scanner, _data):
            first = next(entries, None)
            if first is not None:
                segment.state.rolling_based_timestamp = max_timestamp(first)
