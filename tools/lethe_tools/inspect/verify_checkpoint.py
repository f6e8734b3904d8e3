"""Verify checkpoint text files: Kafka's strict syntax, then values against the logs.

Theory of operation
-------------------
Syntax is whatever ``lethe_formats.storage.checkpoint`` (a step-by-step copy
of ``CheckpointFile.CheckpointReadBuffer.read``) rejects, reported with
Kafka's own wording and the 1-based line. Values are then compared with the
partitions found in the same log directory (:class:`PartitionRange`, built
from the segments by the tree walk). Entry ``i`` sits on line ``i + 3``
(version and count come first). The bounds, and why Kafka keeps them::

    log start  = max(log-start-offset-checkpoint entry, first segment base)   (LogLoader)
    log end    = last batch's last offset + 1, or the last segment's base if empty

    log-start-offset-checkpoint       first segment base <= v <= log end
    replication-offset-checkpoint     log start <= v <= log end     (HW; raised with the LSO)
    recovery-point-offset-checkpoint  log start <= v <= log end     (raised with the LSO)
    cleaner-offset-checkpoint         log start <= v <= log end     (else Kafka resets it)
    leader-epoch-checkpoint           epochs and start offsets strictly increasing,
                                      start offsets <= log end

Kafka rewrites these files periodically, so a copy of a *running* broker's
directory can be briefly behind (e.g. a log start checkpoint below a segment
that retention just deleted); a cleanly stopped broker's files satisfy all of
the above, as every golden case does. Entries for partitions whose directory is
not present are not range-checked: the checkpoints of a log dir cover all its
partitions, and a copy may hold only some of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import (
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
)
from lethe_formats.storage.java_text import java_read_lines
from lethe_formats.storage.meta_properties import read_meta_properties
from lethe_formats.storage.partition_metadata import read_partition_metadata

from lethe_tools.inspect.mapped import read_small
from lethe_tools.inspect.problems import WHOLE_FILE, Problems

__all__ = [
    "PartitionRange",
    "check_offset_ranges",
    "read_checked",
    "verify_epoch_checkpoint",
    "verify_properties_file",
]

LOG_START = "log-start-offset-checkpoint"
_FIRST_ENTRY_LINE = 3


def _unreadable(path: str, error: OSError | ValueError, problems: Problems) -> None:
    """A file that cannot be read at all (missing, a directory, not UTF-8 text)."""
    message = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    problems.add(path, message, position=0, field=WHOLE_FILE)


def _token_position(path: str, line: int, token: int) -> int:
    """Byte position of the ``token``-th space-separated value on 1-based ``line``.

    The parsed checkpoint keeps only values; a cross-check that finds a bad value
    reads the (small, already validated) file again to point at its bytes.
    """
    try:
        text = read_small(path).decode("utf-8")
    except (OSError, ValueError):
        return 0
    for java_line in java_read_lines(text):
        if java_line.number == line:
            parts = java_line.text.split(" ")
            before = " ".join(parts[:token]) + (" " if token else "")
            return java_line.position + len(before.encode("utf-8"))
    return 0


@dataclass(frozen=True, slots=True)
class PartitionRange:
    """The offsets a partition directory's segments span."""

    first_base: int
    log_end: int


def read_checked(path: str, problems: Problems) -> OffsetCheckpoint | None:
    """Read an offset checkpoint strictly; a rejected file becomes one problem."""
    try:
        return read_offset_checkpoint(read_small(path), file=path)
    except FormatError as error:
        problems.error(error, path)
    except (OSError, ValueError) as error:
        _unreadable(path, error, problems)
    return None


def verify_properties_file(path: str, kind: str, problems: Problems) -> None:
    """``partition.metadata`` or ``meta.properties`` with Kafka's reading rules."""
    try:
        data = read_small(path)
        if kind == "partition.metadata":
            read_partition_metadata(data, file=path)
        else:
            read_meta_properties(data, file=path)
    except FormatError as error:
        problems.error(error, path)
    except (OSError, ValueError) as error:
        _unreadable(path, error, problems)


def verify_epoch_checkpoint(path: str, log_end: int | None, problems: Problems) -> None:
    """``leader-epoch-checkpoint``: syntax, monotonic entries, starts within the log."""
    try:
        checkpoint: LeaderEpochCheckpoint = read_leader_epoch_checkpoint(
            read_small(path), file=path
        )
    except FormatError as error:
        problems.error(error, path)
        return
    except (OSError, ValueError) as error:
        _unreadable(path, error, problems)
        return
    previous = None
    for i, entry in enumerate(checkpoint.entries):
        line = i + _FIRST_ENTRY_LINE
        if previous is not None and entry.epoch <= previous.epoch:
            problems.add(
                path,
                f"epoch {entry.epoch} does not increase (previous entry: {previous.epoch})",
                line=line,
                position=_token_position(path, line, 0),
                field="epoch",
            )
        if previous is not None and entry.start_offset <= previous.start_offset:
            problems.add(
                path,
                f"start offset {entry.start_offset} of epoch {entry.epoch} does not increase "
                f"(previous entry: {previous.start_offset})",
                line=line,
                position=_token_position(path, line, 1),
                field="startOffset",
            )
        if log_end is not None and entry.start_offset > log_end:
            problems.add(
                path,
                f"start offset {entry.start_offset} of epoch {entry.epoch} is beyond the log "
                f"end offset {log_end}",
                line=line,
                position=_token_position(path, line, 1),
                field="startOffset",
            )
        previous = entry


def check_offset_ranges(
    directory: str,
    checkpoints: Mapping[str, OffsetCheckpoint],
    partitions: Mapping[str, PartitionRange],
    problems: Problems,
) -> None:
    """Compare every offset-checkpoint entry of a log dir with its partition's range.

    ``checkpoints`` maps file name to the parsed file; ``partitions`` maps a
    partition directory name (``topic-partition``) to its range.
    """
    starts: dict[str, int] = {}
    log_start_file = checkpoints.get(LOG_START)
    if log_start_file is not None:
        for entry in log_start_file.entries:
            starts[f"{entry.topic}-{entry.partition}"] = entry.offset
    for name, checkpoint in checkpoints.items():
        path = os.path.normpath(os.path.join(directory, name))
        for i, entry in enumerate(checkpoint.entries):
            partition = f"{entry.topic}-{entry.partition}"
            bounds = partitions.get(partition)
            if bounds is None:
                continue
            low = bounds.first_base
            if name != LOG_START:
                low = max(low, starts.get(partition, low))
            message = _out_of_bounds(path, entry.offset, low, bounds.log_end)
            if message is not None:
                line = i + _FIRST_ENTRY_LINE
                problems.add(
                    path,
                    f"{partition}: {message}",
                    line=line,
                    position=_token_position(path, line, 2),
                    field="offset",
                )


def _out_of_bounds(path: str, value: int, low: int, high: int) -> str | None:
    if value < low:
        what = "first segment's base offset" if os.path.basename(path) == LOG_START else "log start"
        return f"offset {value} is below the partition's {what} {low}"
    if value > high:
        return f"offset {value} is beyond the partition's log end offset {high}"
    return None
