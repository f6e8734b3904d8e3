"""Typed, fully resolved fixture specs: what the generator builds from.

A spec file (``fixtures/logs/specs/<name>.json``) is data; :mod:`.load` checks
it against ``fixtures/schema/log-spec.schema.json`` and against the rules a
schema cannot state, then turns it into these frozen values. By the time a
value exists here every default is applied and every offset is absolute, so
the writer never guesses: a batch knows its base offset, its records their
offset deltas, and a partition the base offset of its first segment.

Every value keeps ``path``, the JSON path of the spec node it came from
(``$.topics[0].partitions[1].batches[3]``), so later failures (e.g. a builder
rejecting a value) can still point into the spec file.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lethe_formats.model import ControlType, TimestampType

__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_PARTITION_LEADER_EPOCH",
    "DEFAULT_SEGMENT_BYTES",
    "BatchSpec",
    "CheckpointMode",
    "CheckpointSpec",
    "CleanupPolicy",
    "ControlSpec",
    "EpochEntry",
    "LogDirSpec",
    "MetaPropertiesSpec",
    "OffsetEntry",
    "PartitionSpec",
    "RecordData",
    "SpecError",
    "TopicSpec",
]

#: Kafka 4.0 defaults (``log.segment.bytes``, ``log.index.interval.bytes``).
DEFAULT_SEGMENT_BYTES = 1073741824
DEFAULT_INDEX_INTERVAL_BYTES = 4096
#: A broker stamps its leader epoch on every appended v2 batch; a fresh
#: single-broker cluster is at epoch 0 (as in every golden case).
DEFAULT_PARTITION_LEADER_EPOCH = 0


class SpecError(Exception):
    """A spec file that is not valid: names the file and the JSON path of the fault."""

    def __init__(
        self, message: str, *, file: str, path: str = "$", others: tuple[SpecError, ...] = ()
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.path = path
        #: Further faults found in the same pass (all schema errors are collected).
        self.others = others

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.message}"


class CheckpointMode(enum.Enum):
    """How a checkpoint file is produced (see fixtures/logs/README.md)."""

    DERIVE = "derive"
    ENTRIES = "entries"
    EMPTY_FILE = "empty_file"


class CleanupPolicy(enum.Enum):
    DELETE = "delete"
    COMPACT = "compact"
    COMPACT_DELETE = "compact,delete"

    @property
    def compacts(self) -> bool:
        return self is not CleanupPolicy.DELETE


@dataclass(frozen=True, slots=True)
class OffsetEntry:
    """One ``topic partition offset`` line."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One ``epoch startOffset`` line of leader-epoch-checkpoint."""

    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class CheckpointSpec:
    """A checkpoint file: derived, explicit ``entries`` (in order), or a 0-byte file."""

    mode: CheckpointMode
    entries: tuple[OffsetEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class EpochCheckpointSpec:
    mode: CheckpointMode
    entries: tuple[EpochEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordData:
    """One record as the spec gives it; ``timestamp`` is None only for magic 0."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[bytes, bytes | None], ...]
    timestamp: int | None
    kip87_tombstone: bool
    path: str


@dataclass(frozen=True, slots=True)
class ControlSpec:
    """An end-transaction marker (COMMIT or ABORT)."""

    control_type: ControlType
    coordinator_epoch: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class BatchSpec:
    """One append: a v2 batch, or a v0/v1 message set (one wrapper if compressed)."""

    path: str
    magic: int
    base_offset: int
    codec: str
    timestamp_type: TimestampType
    log_append_time: int | None
    producer_id: int
    producer_epoch: int
    base_sequence: int
    partition_leader_epoch: int
    transactional: bool
    control: ControlSpec | None
    delete_horizon_ms: int | None
    offset_deltas: tuple[int, ...]
    last_offset_delta: int
    max_timestamp: int | None
    roll: bool
    roll_base_offset: int | None
    records: tuple[RecordData, ...]

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def is_empty(self) -> bool:
        """A v2 batch left with no records (kept by compaction for producer state)."""
        return self.control is None and not self.records


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    partition: int
    start_offset: int
    log_start_offset: int
    leader_epoch_checkpoint: EpochCheckpointSpec
    batches: tuple[BatchSpec, ...]
    path: str

    @property
    def log_end_offset(self) -> int:
        return self.batches[-1].last_offset + 1 if self.batches else self.start_offset


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    topic_id: str | None
    cleanup_policy: CleanupPolicy
    segment_bytes: int
    index_interval_bytes: int
    partitions: tuple[PartitionSpec, ...]


@dataclass(frozen=True, slots=True)
class MetaPropertiesSpec:
    version: int
    cluster_id: str
    node_id: int
    directory_id: str | None
    comment_date: str


@dataclass(frozen=True, slots=True)
class LogDirSpec:
    """A whole log directory: root files and the partitions of every topic."""

    name: str
    description: str
    file: str
    meta_properties: MetaPropertiesSpec | None
    clean_shutdown_broker_epoch: int | None
    checkpoints: dict[str, CheckpointSpec]
    topics: tuple[TopicSpec, ...]
