"""Kafka's checkpoint text files (``CheckpointFile``), read and written exactly.

Theory of operation
-------------------
Five files share one generic format (UTF-8, ``\\n`` line ends)::

    0                     line 1: version (0 for all of these)
    2                     line 2: number of entries
    golden-delrec 0 19    one entry per line
    golden-delrec 2 30

Offset checkpoints (``replication-offset-checkpoint``,
``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``cleaner-offset-checkpoint``, all in the log dir root) hold ``topic partition
offset``; ``leader-epoch-checkpoint`` (in each partition dir) holds ``epoch
startOffset``. Entry order is whatever Kafka's HashMap gave; lethe keeps the
file order so a re-format reproduces the file byte for byte.

Reading follows ``CheckpointFile.CheckpointReadBuffer.read`` step by step, and
each failure is a :class:`~.java_text.CheckpointReadError` carrying Kafka's
wording, the 1-based ``line``, the byte ``position`` of that line, and the
Java exception Kafka throws (``kafka_exception``):

=========================================  ==========================  =========================
input                                      result / message            Kafka exception
=========================================  ==========================  =========================
empty file                                 no entries, version None    –
only a version line                        no entries                  –
version line not an int                    ``Malformed line in         IOException
                                           checkpoint file [f]: l``
version ≠ 0                                ``Unrecognised version:N,   IOException
                                           expected version: 0 in
                                           checkpoint file at: f``
count line not an int                      Malformed line…             IOException
count < 0                                  ``Illegal Capacity: -N``    IllegalArgumentException
entry with wrong field count               Malformed line…             IOException
non-numeric partition/offset/epoch         ``For input string: "x"``   NumberFormatException
entries ≠ count (missing *or* extra)       ``Expected [n] entries in   IOException
                                           checkpoint file [f], but
                                           found only [m]``
=========================================  ==========================  =========================

Every line after the count is an entry until EOF (a blank line is a malformed
entry); all entries are parsed before the count is compared. Entries are split
on Java's ``\\s+`` (leading whitespace yields an empty first field, trailing
whitespace is dropped) — see :mod:`.java_text`. Only the IOException cases make
Kafka take the log directory offline; see ``CheckpointReadError.marks_dir_offline``.
(One Java quirk is not reproduced: a huge count makes ``new ArrayList(count)``
run out of heap in the JVM; lethe just reports the count mismatch.)

Writing is :func:`write_checkpoint_atomically`: ``.tmp`` + fsync + rename +
directory fsync, as ``CheckpointFile.write`` does (see :mod:`.atomic`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from lethe_formats.storage.atomic import write_atomically
from lethe_formats.storage.java_text import (
    JAVA_WHITESPACE,
    CheckpointReadError,
    JavaLine,
    JavaNumberFormatError,
    decode_utf8,
    java_parse_int,
    java_parse_long,
    java_read_lines,
    java_split,
)

__all__ = [
    "CHECKPOINT_KINDS",
    "CURRENT_VERSION",
    "LEADER_EPOCH_CHECKPOINT_FILE",
    "OFFSET_CHECKPOINT_FILES",
    "EpochEntry",
    "LeaderEpochCheckpoint",
    "OffsetCheckpoint",
    "Source",
    "TopicPartitionOffset",
    "format_checkpoint",
    "format_leader_epoch_checkpoint",
    "format_offset_checkpoint",
    "load_text",
    "read_leader_epoch_checkpoint",
    "read_offset_checkpoint",
    "write_checkpoint_atomically",
    "write_leader_epoch_checkpoint",
    "write_offset_checkpoint",
]

#: A file (``os.PathLike``), its raw bytes, or its already-decoded text (``str``).
Source = os.PathLike[str] | bytes | bytearray | str
T = TypeVar("T")

CURRENT_VERSION = 0
OFFSET_CHECKPOINT_FILES = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"


class TopicPartitionOffset(NamedTuple):
    """One offset-checkpoint entry: ``topic partition offset``."""

    topic: str
    partition: int
    offset: int


class EpochEntry(NamedTuple):
    """One leader-epoch entry: ``epoch startOffset``."""

    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class OffsetCheckpoint:
    """An offset checkpoint; ``version`` is None when the file was empty."""

    version: int | None
    entries: tuple[TopicPartitionOffset, ...]

    def as_dict(self) -> dict[tuple[str, int], int]:
        """``(topic, partition) -> offset``; a repeated partition keeps its last
        value, as Kafka's ``HashMap.put`` does."""
        return {(e.topic, e.partition): e.offset for e in self.entries}


@dataclass(frozen=True, slots=True)
class LeaderEpochCheckpoint:
    """A leader-epoch checkpoint; ``version`` is None when the file was empty."""

    version: int | None
    entries: tuple[EpochEntry, ...]

    def as_dict(self) -> dict[int, int]:
        return {e.epoch: e.start_offset for e in self.entries}


def load_text(source: Source, file: str | None = None) -> tuple[str, str | None]:
    """Text and display name of a source; bytes are decoded strictly as UTF-8."""
    if isinstance(source, os.PathLike):
        path = Path(source)
        name = file if file is not None else str(path)
        return decode_utf8(path.read_bytes(), file=name), name
    if isinstance(source, bytes | bytearray):
        return decode_utf8(bytes(source), file=file), file
    return source, file


def _malformed(line: JavaLine, file: str | None, field: str) -> CheckpointReadError:
    where = file if file is not None else "<checkpoint>"
    return CheckpointReadError(
        f"Malformed line in checkpoint file [{where}]: {line.text}",
        file=file,
        line=line.number,
        position=line.position,
        field=field,
    )


def _header_int(line: JavaLine, file: str | None, field: str) -> int:
    try:
        return java_parse_int(line.text)
    except JavaNumberFormatError:
        raise _malformed(line, file, field) from None


def _read_generic(
    text: str,
    file: str | None,
    parse_entry: Callable[[str], T | None],
) -> tuple[int | None, list[T]]:
    """``CheckpointReadBuffer.read`` with ``parse_entry`` as the EntryFormatter."""
    where = file if file is not None else "<checkpoint>"
    lines = list(java_read_lines(text))
    if not lines:
        return None, []
    version = _header_int(lines[0], file, "version")
    if version != CURRENT_VERSION:
        raise CheckpointReadError(
            f"Unrecognised version:{version}, expected version: {CURRENT_VERSION} "
            f"in checkpoint file at: {where}",
            file=file,
            line=1,
            position=0,
            field="version",
        )
    if len(lines) == 1:
        return version, []
    count = _header_int(lines[1], file, "count")
    if count < 0:
        raise CheckpointReadError(
            f"Illegal Capacity: {count}",
            kafka_exception="IllegalArgumentException",
            file=file,
            line=2,
            position=lines[1].position,
            field="count",
        )
    entries: list[T] = []
    for line in lines[2:]:
        try:
            entry = parse_entry(line.text)
        except JavaNumberFormatError as exc:
            raise CheckpointReadError(
                str(exc),
                kafka_exception="NumberFormatException",
                file=file,
                line=line.number,
                position=line.position,
                field="entry",
            ) from None
        if entry is None:
            raise _malformed(line, file, "entry")
        entries.append(entry)
    if len(entries) != count:
        at = lines[2 + count] if len(entries) > count else lines[1]
        raise CheckpointReadError(
            f"Expected [{count}] entries in checkpoint file [{where}], "
            f"but found only [{len(entries)}]",
            file=file,
            line=at.number,
            position=at.position,
            field="count",
        )
    return version, entries


def _offset_entry(text: str) -> TopicPartitionOffset | None:
    parts = java_split(text, JAVA_WHITESPACE + "+")
    if len(parts) != 3:
        return None
    return TopicPartitionOffset(parts[0], java_parse_int(parts[1]), java_parse_long(parts[2]))


def _epoch_entry(text: str) -> EpochEntry | None:
    parts = java_split(text, JAVA_WHITESPACE + "+")
    if len(parts) != 2:
        return None
    return EpochEntry(java_parse_int(parts[0]), java_parse_long(parts[1]))


def read_offset_checkpoint(source: Source, *, file: str | None = None) -> OffsetCheckpoint:
    """Read an offset checkpoint file (path), its bytes, or its text, strictly."""
    text, name = load_text(source, file)
    version, entries = _read_generic(text, name, _offset_entry)
    return OffsetCheckpoint(version, tuple(entries))


def read_leader_epoch_checkpoint(
    source: Source, *, file: str | None = None
) -> LeaderEpochCheckpoint:
    """Read a ``leader-epoch-checkpoint`` (path, bytes or text), strictly."""
    text, name = load_text(source, file)
    version, entries = _read_generic(text, name, _epoch_entry)
    return LeaderEpochCheckpoint(version, tuple(entries))


def _render(version: int, lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in [str(version), str(len(lines)), *lines])


def format_offset_checkpoint(
    entries: Iterable[tuple[str, int, int]] | Mapping[tuple[str, int], int],
    version: int = CURRENT_VERSION,
) -> str:
    """The file text Kafka writes for ``entries`` (order preserved)."""
    rows: list[tuple[str, int, int]] = (
        [(topic, partition, offset) for (topic, partition), offset in entries.items()]
        if isinstance(entries, Mapping)
        else [(entry[0], entry[1], entry[2]) for entry in entries]
    )
    lines = []
    for topic, partition, offset in rows:
        if not topic or java_split(topic, JAVA_WHITESPACE + "+") != [topic]:
            raise ValueError(f"topic {topic!r} is empty or has whitespace: unreadable by Kafka")
        lines.append(f"{topic} {int(partition)} {int(offset)}")
    return _render(version, lines)


def format_leader_epoch_checkpoint(
    entries: Iterable[tuple[int, int]] | Mapping[int, int], version: int = CURRENT_VERSION
) -> str:
    """The ``leader-epoch-checkpoint`` text for ``entries`` (order preserved)."""
    rows = list(entries.items()) if isinstance(entries, Mapping) else list(entries)
    return _render(version, [f"{int(epoch)} {int(start)}" for epoch, start in rows])


def format_checkpoint(checkpoint: OffsetCheckpoint | LeaderEpochCheckpoint) -> str:
    """Re-format a checkpoint read earlier; an empty-file checkpoint gives ``""``."""
    if checkpoint.version is None:
        return ""
    if isinstance(checkpoint, OffsetCheckpoint):
        return format_offset_checkpoint(checkpoint.entries, checkpoint.version)
    return format_leader_epoch_checkpoint(checkpoint.entries, checkpoint.version)


def write_checkpoint_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write checkpoint ``text`` as Kafka does: ``.tmp``, fsync, rename, fsync dir."""
    write_atomically(path, text.encode("utf-8"))


def write_offset_checkpoint(
    path: str | os.PathLike[str],
    entries: Iterable[tuple[str, int, int]] | Mapping[tuple[str, int], int],
    version: int = CURRENT_VERSION,
) -> None:
    write_checkpoint_atomically(path, format_offset_checkpoint(entries, version))


def write_leader_epoch_checkpoint(
    path: str | os.PathLike[str],
    entries: Iterable[tuple[int, int]] | Mapping[int, int],
    version: int = CURRENT_VERSION,
) -> None:
    write_checkpoint_atomically(path, format_leader_epoch_checkpoint(entries, version))


#: File name → reader, so tools can dispatch on ``path.name``.
CHECKPOINT_KINDS: dict[str, Callable[..., OffsetCheckpoint | LeaderEpochCheckpoint]] = {
    **{name: read_offset_checkpoint for name in OFFSET_CHECKPOINT_FILES},
    LEADER_EPOCH_CHECKPOINT_FILE: read_leader_epoch_checkpoint,
}
