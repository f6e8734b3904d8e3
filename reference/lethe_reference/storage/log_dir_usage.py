"""What a log directory holds and the room its volume has (``ReplicaManager.describeLogDirs``).

Theory of operation
-------------------
DescribeLogDirs reports, per log directory, each replica's size and offset lag
and the volume's total and usable bytes. Kafka's facts:

* a replica's size is ``UnifiedLog.size``: the bytes of its segments' ``.log``
  files (indexes and snapshots not counted), so a DeleteRecords shows only once
  retention has deleted the segments below the new log start offset;
* the offset lag of a current (not future) replica is ``max(HW - LEO, 0)``,
  which is 0 whenever the log's high watermark is at or below its end;
* the volume figures are ``FileStore.getTotalSpace`` / ``getUsableSpace``
  (``statvfs``: blocks times fragment size, and the blocks available to an
  unprivileged user), a negative value (an overflow on a huge volume) read as
  ``Long.MAX_VALUE``;
* a directory that failed (``LogManager.dir_failure``) is reported as failed,
  without figures.

This reference broker has one log directory and no future replicas
(AlterReplicaLogDirs is not served).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lethe_reference.storage.log_manager import LogManager

__all__ = ["LONG_MAX", "LogDirUsage", "ReplicaUsage", "describe_log_dir"]

LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class ReplicaUsage:
    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool = False


@dataclass(frozen=True, slots=True)
class LogDirUsage:
    """One log directory: its absolute path, replicas, and volume figures (-1 unknown)."""

    path: str
    replicas: tuple[ReplicaUsage, ...]
    total_bytes: int = -1
    usable_bytes: int = -1
    failure: str | None = None


def _large(value: int) -> int:
    """Kafka's ``adjustForLargeFileSystems``: an overflowed (negative) figure is Long.MAX_VALUE."""
    return LONG_MAX if value < 0 or value > LONG_MAX else value


def describe_log_dir(manager: LogManager, wanted: Iterable[tuple[str, int]] | None) -> LogDirUsage:
    """The usage of ``manager``'s directory for the ``wanted`` partitions (None: all)."""
    path = str(manager.log_dir.absolute())
    if manager.dir_failure is not None:
        return LogDirUsage(path, (), failure=manager.dir_failure)
    selected = None if wanted is None else set(wanted)
    replicas = tuple(
        ReplicaUsage(topic, partition, log.size(), max(log.high_watermark - log.log_end_offset, 0))
        for (topic, partition), log in sorted(manager.logs.items())
        if selected is None or (topic, partition) in selected
    )
    try:
        volume = os.statvfs(path)
    except OSError as error:  # the directory vanished: Kafka's KafkaStorageException case
        return LogDirUsage(path, (), failure=str(error))
    total = volume.f_blocks * volume.f_frsize
    usable = volume.f_bavail * volume.f_frsize
    return LogDirUsage(path, replicas, _large(total), _large(usable))
