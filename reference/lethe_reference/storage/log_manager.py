"""One log directory: its partition logs and the files at its root (``LogManager``).

Theory of operation
-------------------
A log directory looks like this (kafka-facts 1.4)::

    meta.properties                     cluster/node/directory ids (written if missing)
    .kafka_cleanshutdown                {"version":0,"brokerEpoch":N}: present only between a
                                        clean shutdown and the next startup
    replication-offset-checkpoint       HW per partition
    recovery-point-offset-checkpoint    flushed offset per partition
    log-start-offset-checkpoint         log start offset, only partitions where it is above
                                        the first segment's base offset
    cleaner-offset-checkpoint           the cleaner's; a deleted partition's entry goes
    <topic>-<partition>/                one partition log (partition.metadata inside)
    <topic>-<partition>.<uuid32>-delete a deleted partition awaiting removal

**Startup** (:meth:`LogManager.startup`): the clean-shutdown marker is read and
deleted at once (a crash during loading must count as unclean); the three
checkpoints are read (a malformed one is treated as empty, as Kafka's
``loadLogs`` resets it, which means full recovery); every live partition
directory is loaded (:mod:`.loader`) and its HW restored from the replication
checkpoint (clamped to ``[log start, LEO]``); ``-delete`` directories are
queued for removal.

**Checkpoints** are written with ``write_offset_checkpoint`` (tmp + fsync +
rename + directory fsync), entries sorted by topic and partition (Kafka's order
is a hash map's, i.e. unspecified). The broker's scheduler calls
:meth:`checkpoint_high_watermarks`, :meth:`checkpoint_recovery_points`,
:meth:`checkpoint_log_start_offsets`, :meth:`cleanup_logs` (retention),
:meth:`flush` and :meth:`delete_due_files` at Kafka's intervals.

**Shutdown** flushes every log (the recovery point becomes the LEO), writes
the three checkpoints and then the clean-shutdown marker.

Not task-safe: one caller at a time (the broker's storage task).
"""

from __future__ import annotations

import logging
import random
import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import read_offset_checkpoint, write_offset_checkpoint
from lethe_formats.storage.clean_shutdown import write_clean_shutdown
from lethe_formats.storage.filenames import (
    FileNameError,
    PartitionDirKind,
    parse_partition_dir_name,
    partition_dir_name,
)
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_formats.storage.meta_properties import (
    META_PROPERTIES_FILE,
    MetaProperties,
    read_meta_properties,
    write_meta_properties,
)
from lethe_formats.storage.partition_metadata import (
    read_partition_metadata,
    write_partition_metadata,
)

from lethe_reference import faults
from lethe_reference.clock import Clock
from lethe_reference.retention.consumed import MinCommittedOffsets, no_committed_offsets
from lethe_reference.retention.pending import PendingDeletions
from lethe_reference.retention.policies import delete_old_segments
from lethe_reference.storage.errors import KafkaStorageError
from lethe_reference.storage.loader import LoadParams, load_log
from lethe_reference.storage.log import DEFAULT_PRODUCER_ID_EXPIRATION_MS, PartitionLog
from lethe_reference.storage.settings import LogSettings

__all__ = [
    "CLEAN_SHUTDOWN_FILE",
    "HIGH_WATERMARK_FILE",
    "LOG_START_OFFSET_FILE",
    "RECOVERY_POINT_FILE",
    "LogManager",
]

_log = logging.getLogger(__name__)
HIGH_WATERMARK_FILE = "replication-offset-checkpoint"
RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_FILE = "log-start-offset-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
#: Written by the cleaner (:mod:`lethe_reference.cleaner.manager`); pruned here on deletion.
CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
TopicPartition = tuple[str, int]


def _flush_and_close(log: PartitionLog) -> None:
    log.flush()
    log.close()


class LogManager:
    """The partition logs of ``log_dir``; see the module docstring."""

    def __init__(
        self,
        log_dir: Path,
        *,
        clock: Clock,
        settings_for: Callable[[str], LogSettings],
        file_delete_delay_ms: int = 60000,
        meta_properties: MetaProperties | None = None,
        rng: random.Random | None = None,
        durable: bool = True,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        shutdown_threads: int = 1,
    ) -> None:
        self.log_dir = log_dir
        #: ``producer.id.expiration.ms`` (dynamic: the broker updates it).
        self.producer_id_expiration_ms = producer_id_expiration_ms
        #: ``num.recovery.threads.per.data.dir``: threads flushing the logs at shutdown
        self.shutdown_threads = shutdown_threads
        self.meta_properties = meta_properties
        #: fsync segments on flush; see ``PartitionLog.durable``.
        self.durable = durable
        self.clock = clock
        self.settings_for = settings_for
        self.file_delete_delay_ms = file_delete_delay_ms
        self.pending = PendingDeletions()
        self.logs: dict[TopicPartition, PartitionLog] = {}
        self.topic_ids: dict[str, KafkaUuid] = {}
        self.had_clean_shutdown = False
        #: why the log dir failed (Kafka's ``LogDirFailureChannel``): the first I/O error
        #: writing in it, e.g. after the dir was replaced by a file. It is the only log dir,
        #: so the broker halts (server/app.py), as Kafka does when every log dir failed.
        self.dir_failure: str | None = None
        self._rng = rng or random.Random()
        self._deleted_dirs: list[tuple[int, Path]] = []
        #: KIP-68: the groups' min committed offsets for a retention pass (the broker
        #: sets it from its group coordinator; none by default).
        self.min_committed_offsets: Callable[[], MinCommittedOffsets] = no_committed_offsets

    # --- startup ------------------------------------------------------------------------

    def startup(self) -> None:
        """Load every partition directory (module docstring)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._ensure_meta_properties()
        marker = self.log_dir / CLEAN_SHUTDOWN_FILE
        self.had_clean_shutdown = marker.exists()
        marker.unlink(missing_ok=True)
        recovery = self._read_checkpoint(RECOVERY_POINT_FILE)
        starts = self._read_checkpoint(LOG_START_OFFSET_FILE)
        watermarks = self._read_checkpoint(HIGH_WATERMARK_FILE)
        for directory in sorted(p for p in self.log_dir.iterdir() if p.is_dir()):
            try:
                parsed = parse_partition_dir_name(directory.name)
            except FileNameError:
                continue
            if parsed.kind is PartitionDirKind.DELETE:
                self._queue_dir_deletion(directory)
            if parsed.kind is not PartitionDirKind.LIVE:
                continue
            key = (parsed.topic, parsed.partition)
            params = LoadParams(
                recovery_point=recovery.get(key, 0),
                log_start_offset=starts.get(key, 0),
                had_clean_shutdown=self.had_clean_shutdown,
                producer_expiration_ms=self.producer_id_expiration_ms,
            )
            log = self._load(directory, parsed.topic, params)
            log.update_high_watermark(watermarks.get(key, 0))
            self.logs[key] = log

    def _ensure_meta_properties(self) -> None:
        """Read ``meta.properties``; write it first if missing and ids were given
        (what ``kafka-storage.sh format`` does for a fresh directory)."""
        path = self.log_dir / META_PROPERTIES_FILE
        if path.exists():
            try:
                self.meta_properties = read_meta_properties(path)
            except FormatError as error:
                raise KafkaStorageError(f"Failed to read {path}: {error}") from None
        elif self.meta_properties is not None:
            now = datetime.fromtimestamp(self.clock.now_ms() / 1000, tz=UTC)
            write_meta_properties(path, self.meta_properties, date_comment=now)

    def _load(self, directory: Path, topic: str, params: LoadParams) -> PartitionLog:
        metadata = directory / PARTITION_METADATA_FILE
        if metadata.exists():
            try:
                self.topic_ids[topic] = read_partition_metadata(metadata).topic_id
            except FormatError as error:  # Kafka: KafkaStorageException, dir offline
                raise KafkaStorageError(f"Failed to read {metadata}: {error}") from None
        return load_log(
            directory,
            self.settings_for(topic),
            params,
            clock=self.clock,
            deleter=self.pending,
            rng=self._rng,
            durable=self.durable,
        )

    def _read_checkpoint(self, name: str) -> dict[TopicPartition, int]:
        path = self.log_dir / name
        if not path.exists():
            return {}
        try:
            return read_offset_checkpoint(path).as_dict()
        except (FormatError, OSError) as error:
            _log.warning("Error occurred while reading %s, resetting it: %s", path, error)
            return {}

    # --- partitions ---------------------------------------------------------------------

    def get_log(self, topic: str, partition: int) -> PartitionLog | None:
        return self.logs.get((topic, partition))

    def create_log(
        self, topic: str, partition: int, *, topic_id: KafkaUuid | None = None
    ) -> PartitionLog:
        """The partition's log, created empty if it does not exist yet."""
        existing = self.logs.get((topic, partition))
        if existing is not None:
            return existing
        directory = self.log_dir / partition_dir_name(topic, partition)
        log = PartitionLog.create(
            directory,
            self.settings_for(topic),
            clock=self.clock,
            deleter=self.pending,
            rng=self._rng,
            durable=self.durable,
            producer_expiration_ms=self.producer_id_expiration_ms,
        )
        if topic_id is not None:
            self.topic_ids[topic] = topic_id
            write_partition_metadata(directory / PARTITION_METADATA_FILE, topic_id)
        self.logs[(topic, partition)] = log
        return log

    def update_settings(self, topic: str) -> None:
        """Re-read ``settings_for(topic)`` into the topic's logs (AlterConfigs)."""
        if faults.active(self, "config-change-needs-restart"):
            return
        for (name, _), log in self.logs.items():
            if name == topic:
                log.settings = self.settings_for(topic)

    def delete_log(self, topic: str, partition: int) -> Path | None:
        """Rename the partition directory ``...-delete`` and queue its removal after
        ``file.delete.delay.ms``; the checkpoints are rewritten without it."""
        deleted = self.delete_logs(topic, [partition])
        return deleted[0] if deleted else None

    def delete_logs(self, topic: str, partitions: Iterable[int]) -> list[Path]:
        """:meth:`delete_log` for many partitions of ``topic``, the checkpoints rewritten
        once at the end: per partition, a topic of thousands rewrote files listing
        thousands of entries thousands of times (2,000 partitions: 92 s)."""
        targets: list[Path] = []
        dropped: set[TopicPartition] = set()
        for partition in partitions:
            log = self.logs.pop((topic, partition), None)
            if log is None:
                continue
            log.close(snapshot=False)
            target = self.log_dir / partition_dir_name(topic, partition, PartitionDirKind.DELETE)
            log.directory.rename(target)
            self._queue_dir_deletion(target)
            targets.append(target)
            dropped.add((topic, partition))
        if targets:
            self.checkpoint_recovery_points()
            self.checkpoint_log_start_offsets()
            self._drop_cleaner_checkpoints(dropped)
        return targets

    def _drop_cleaner_checkpoints(self, dropped: set[TopicPartition]) -> None:
        """Deleted partitions leave ``cleaner-offset-checkpoint`` too (Kafka's
        ``asyncDelete`` -> ``cleaner.updateCheckpoints(partitionToRemove)``)."""
        path = self.log_dir / CLEANER_CHECKPOINT_FILE
        if not path.exists():
            return
        try:
            entries = read_offset_checkpoint(path).as_dict()
        except (FormatError, OSError):
            return  # the cleaner logs and resets an unreadable file itself
        if dropped & entries.keys():
            self._write(
                CLEANER_CHECKPOINT_FILE, {k: v for k, v in entries.items() if k not in dropped}
            )

    def _queue_dir_deletion(self, directory: Path) -> None:
        due = self.clock.now_ms() + self.file_delete_delay_ms
        self._deleted_dirs.append((due, directory))

    def delete_due_files(self) -> list[Path]:
        """Remove ``.deleted`` segments and ``-delete`` directories whose delay has passed."""
        now = self.clock.now_ms()
        removed = self.pending.delete_due_files(now)
        due = [d for d in self._deleted_dirs if d[0] <= now]
        self._deleted_dirs = [d for d in self._deleted_dirs if d[0] > now]
        for _, directory in due:
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
        return removed

    # --- periodic work ------------------------------------------------------------------

    def cleanup_logs(self) -> int:
        """Run retention on every log without ``compact`` (``kafka-log-retention``);
        compacted logs, ``compact,delete`` included, are the cleaner task's, as in
        Kafka's ``cleanupLogs``. Returns the number of segments deleted."""
        committed = self.min_committed_offsets()  # KIP-68: one snapshot per pass
        return sum(
            delete_old_segments(log, committed.get(*key))
            for key, log in self.logs.items()
            if not log.settings.compact
        )

    def remove_expired_producers(self) -> int:
        """``PeriodicProducerExpirationCheck`` of every log; returns how many expired."""
        removed = 0
        for log in self.logs.values():
            log.producer_state.expiration_ms = self.producer_id_expiration_ms
            removed += len(log.remove_expired_producers())
        return removed

    def flush(self) -> None:
        """Flush every log fully; recovery points advance to the LEOs."""
        for log in self.logs.values():
            log.flush()

    def _write(self, name: str, offsets: dict[TopicPartition, int]) -> None:
        entries = [(topic, partition, offset) for (topic, partition), offset in offsets.items()]
        try:
            write_offset_checkpoint(self.log_dir / name, sorted(entries))
        except OSError as error:
            self.dir_failure = f"writing {self.log_dir / name}: {error}"
            raise KafkaStorageError(f"log dir {self.log_dir} failed: {self.dir_failure}") from error

    def checkpoint_high_watermarks(self) -> None:
        self._write(HIGH_WATERMARK_FILE, {k: v.high_watermark for k, v in self.logs.items()})

    def checkpoint_recovery_points(self) -> None:
        self._write(RECOVERY_POINT_FILE, {k: v.recovery_point for k, v in self.logs.items()})

    def checkpoint_log_start_offsets(self) -> None:
        """Only partitions whose log start offset is above their first segment's base."""
        offsets = {}
        for key, log in self.logs.items():
            first = log.segments.first
            if first is not None and log.log_start_offset > first.base_offset:
                offsets[key] = log.log_start_offset
            if faults.active(self, "log-start-offset-checkpoint-every-partition"):
                offsets[key] = log.log_start_offset
        if faults.active(self, "log-start-offset-not-checkpointed"):
            offsets = {}
        self._write(LOG_START_OFFSET_FILE, offsets)

    def shutdown(self, broker_epoch: int = -1) -> None:
        """Flush and close every log (each takes its producer snapshot at the LEO), write
        the checkpoints, then the clean-shutdown marker.

        Kafka flushes with ``num.recovery.threads.per.data.dir`` threads, and so
        does this: each log is flushed by one thread only, and with thousands
        of logs the file system batches concurrent fsyncs (measured 4x faster
        with 2 threads), which keeps a SIGTERM's shutdown short."""
        logs = list(self.logs.values())
        if self.shutdown_threads > 1 and len(logs) > 1:
            with ThreadPoolExecutor(self.shutdown_threads, "lethe-log-shutdown") as pool:
                list(pool.map(_flush_and_close, logs))
        else:
            for log in logs:
                _flush_and_close(log)
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()
        self.checkpoint_high_watermarks()
        write_clean_shutdown(self.log_dir / CLEAN_SHUTDOWN_FILE, broker_epoch)
