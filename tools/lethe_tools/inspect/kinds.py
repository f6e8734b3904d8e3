"""What a file in a Kafka log directory is, from its name alone.

Theory of operation
-------------------
Kafka never marks its files inside: the name is the type. Segment files are
``<20-digit base offset>.<kind>`` (optionally ``.deleted``/``.cleaned``/
``.swap`` while being deleted or compacted); the other files have fixed names::

    log dir/                 meta.properties, .kafka_cleanshutdown, replication-offset-checkpoint,
                             recovery-point-offset-checkpoint,
                             log-start-offset-checkpoint, cleaner-offset-checkpoint
    log dir/<topic>-<p>/     00000000000000000042.{log,index,timeindex,txnindex,snapshot},
                             leader-epoch-checkpoint, partition.metadata

Two strictness levels, because the two commands need different things:

* ``strict=False`` (``lethe dump FILE``): like kafka-dump-log, any
  ``*.log``/``*.index``/... is dumped whatever the rest of its name; the base
  offset is the leading number if there is one; ``*.checkpoint`` is a KRaft
  snapshot of the metadata log (batches, like a segment).
* ``strict=True`` (directory walks in ``lethe verify``): only names Kafka itself
  writes count, so ``log-cleaner.log`` next to the partitions is not mistaken
  for a segment.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass

from lethe_formats.storage.filenames import FileNameError, parse_segment_file_name

__all__ = ["OFFSET_CHECKPOINT_NAMES", "FileInfo", "Kind", "classify"]


class Kind(enum.StrEnum):
    LOG = "log"
    INDEX = "index"
    TIME_INDEX = "timeindex"
    TXN_INDEX = "txnindex"
    SNAPSHOT = "snapshot"
    OFFSET_CHECKPOINT = "offset-checkpoint"
    LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
    PARTITION_METADATA = "partition.metadata"
    META_PROPERTIES = "meta.properties"
    CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
    #: a KRaft snapshot of __cluster_metadata: <end offset>-<epoch>.checkpoint
    KRAFT_SNAPSHOT = "checkpoint"
    UNKNOWN = "unknown"


#: Log-dir files in the ``topic partition offset`` checkpoint format (kafka-facts 1.4).
OFFSET_CHECKPOINT_NAMES = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)

_FIXED = {
    **dict.fromkeys(OFFSET_CHECKPOINT_NAMES, Kind.OFFSET_CHECKPOINT),
    "leader-epoch-checkpoint": Kind.LEADER_EPOCH_CHECKPOINT,
    "partition.metadata": Kind.PARTITION_METADATA,
    "meta.properties": Kind.META_PROPERTIES,
    ".kafka_cleanshutdown": Kind.CLEAN_SHUTDOWN,
}
_SEGMENT_SUFFIXES = {f".{kind.value}": kind for kind in (Kind.LOG, Kind.INDEX, Kind.TIME_INDEX)}
_SEGMENT_SUFFIXES.update({".txnindex": Kind.TXN_INDEX, ".snapshot": Kind.SNAPSHOT})
_TRANSIENT = (".deleted", ".cleaned", ".swap")


@dataclass(frozen=True, slots=True)
class FileInfo:
    """The kind of a file and, for segment files, the base offset in its name."""

    kind: Kind
    base_offset: int | None = None
    transient: str = ""


def classify(path: str | os.PathLike[str], *, strict: bool = False) -> FileInfo:
    """Kind of ``path`` by its name (see the module docstring for ``strict``)."""
    name = os.path.basename(os.fspath(path))
    fixed = _FIXED.get(name)
    if fixed is not None:
        return FileInfo(fixed)
    try:
        parsed = parse_segment_file_name(name)
    except FileNameError:
        if strict:
            return FileInfo(Kind.UNKNOWN)
        return _loose(name)
    return FileInfo(Kind(parsed.kind.value), parsed.base_offset, parsed.extra_suffix)


def _loose(name: str) -> FileInfo:
    """kafka-dump-log's rule: the text after the last dot picks the kind."""
    stem, transient = name, ""
    for extra in _TRANSIENT:
        if stem.endswith(extra):
            stem, transient = stem[: -len(extra)], extra
            break
    dot = stem.rfind(".")
    if dot >= 0 and stem[dot:] == ".checkpoint":
        return FileInfo(Kind.KRAFT_SNAPSHOT, None, transient)
    kind = _SEGMENT_SUFFIXES.get(stem[dot:]) if dot >= 0 else None
    if kind is None:
        return FileInfo(Kind.UNKNOWN)
    digits = stem.split(".", 1)[0]
    base = int(digits) if digits.isascii() and digits.isdigit() else None
    return FileInfo(kind, base, transient)
