"""A directory standing where Kafka expects a file: what Kafka 4.0 does, as a problem.

Theory of operation
-------------------
Kafka lists only regular files when it loads a log (``LogLoader`` filters
``File::isFile``, ``ProducerStateManager`` ``Files.isRegularFile``), so a
directory named like a segment file is never reported at startup; but every
file Kafka reads by its fixed name (the indexes of a segment it opens, the
checkpoints, ``partition.metadata``, ``meta.properties``) is opened as a file,
which fails with an ``IOException`` on a directory: the log dir goes offline
or, for ``meta.properties``, the broker does not start. A directory named like
a ``.log`` or ``.snapshot`` is skipped while loading, and Kafka fails later,
when it creates the segment or writes the snapshot at that offset. Either way
the log dir is not one Kafka can serve, so every tool reports it, at byte 0 in
the field ``file``, and exits non-zero. Transient names (``.deleted``,
``.cleaned``, ``.swap``) are only ever looked at as files and are ignored.
The clean shutdown marker ``.kafka_cleanshutdown`` is only tested with
``exists()``, which a directory passes: Kafka skips log recovery, then fails
to delete a non-empty one.
"""

from __future__ import annotations

import os

from lethe_tools.inspect.kinds import FileInfo, Kind, classify
from lethe_tools.inspect.problems import WHOLE_FILE, Problem

__all__ = ["directory_problem", "misplaced_directory"]

#: The clean shutdown marker: LogManager only asks exists() and deletes it.
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"

_CONSEQUENCE = {
    Kind.LOG: "Kafka's log loading skips it, and creating the segment at this offset fails",
    Kind.SNAPSHOT: "Kafka's snapshot listing skips it, and writing the snapshot at this "
    "offset fails",
    Kind.META_PROPERTIES: "Kafka cannot read it and does not start with this log dir",
}
_DEFAULT = "Kafka cannot open it as a file (IOException) and the log dir fails to load"
_LABEL = {
    Kind.LOG: "a segment",
    Kind.INDEX: "an offset index",
    Kind.TIME_INDEX: "a time index",
    Kind.TXN_INDEX: "a transaction index",
    Kind.SNAPSHOT: "a producer snapshot",
    Kind.OFFSET_CHECKPOINT: "an offset checkpoint",
    Kind.LEADER_EPOCH_CHECKPOINT: "a leader epoch checkpoint",
    Kind.PARTITION_METADATA: "the partition.metadata",
    Kind.META_PROPERTIES: "the meta.properties",
}


def _kind(name: str) -> FileInfo | None:
    """The kind of file a directory named ``name`` stands in for, if Kafka would read it."""
    info = classify(name, strict=True)
    if info.kind is Kind.UNKNOWN or info.transient:
        return None
    return info


def misplaced_directory(path: str) -> Problem | None:
    """The problem of the directory ``path`` if its name is one of Kafka's file names."""
    name = os.path.basename(os.path.normpath(path))
    if name == CLEAN_SHUTDOWN:
        message = (
            "is a directory where Kafka expects the clean shutdown marker file: Kafka takes "
            "its presence for a clean shutdown (no log recovery), then fails to delete it "
            "unless it is empty"
        )
        return Problem(path, message, position=0, field=WHOLE_FILE)
    info = _kind(name)
    return None if info is None else directory_problem(path, info.kind)


def directory_problem(path: str, kind: Kind | None) -> Problem:
    """The problem of the directory ``path`` standing where a ``kind`` file belongs."""
    if kind is None or kind is Kind.UNKNOWN:
        return Problem(path, "is a directory, not a file", position=0, field=WHOLE_FILE)
    what = _CONSEQUENCE.get(kind, _DEFAULT)
    label = _LABEL.get(kind, kind.value)
    message = f"is a directory where Kafka expects {label} file: {what}"
    return Problem(path, message, position=0, field=WHOLE_FILE)
