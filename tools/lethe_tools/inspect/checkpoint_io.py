"""``lethe checkpoint``'s library: which format a file has, reading, writing, validating.

Theory of operation
-------------------
A checkpoint's format follows from its file name (kafka-facts 1.4): the four
log-dir files hold ``topic partition offset`` entries (kind ``offsets``),
``leader-epoch-checkpoint`` holds ``epoch startOffset`` (kind
``leader-epoch``). A file with another name needs an explicit kind.
``validate`` also accepts the other text files of a log dir,
``partition.metadata`` and ``meta.properties``.

Reading and validating use the strict storage readers, so a problem is worded
as Kafka words it (``Malformed line in checkpoint file [...]``, ``Expected [n]
entries ...``) and located by line and byte. Writing goes through the storage
writers: the whole text to ``<file>.tmp``, fsync, rename over the target,
fsync of the directory, as ``CheckpointFile.write`` does; entries are
validated first (ranges of Java int/long, topics without whitespace), so a
file Kafka could not read back is never written.

Entries to write come from ``--entry`` values or from JSON: a list of entry
objects, or the object ``lethe checkpoint read --json`` prints (its
``entries``), so read → edit → write round-trips; ``"version": null`` there
stands for an empty file (Kafka creates the file empty before its first write).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from lethe_formats.storage.checkpoint import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    OFFSET_CHECKPOINT_FILES,
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    write_checkpoint_atomically,
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
)
from lethe_formats.storage.meta_properties import read_meta_properties
from lethe_formats.storage.partition_metadata import read_partition_metadata

from lethe_tools.inspect.mapped import read_small

__all__ = [
    "KINDS",
    "CheckpointUsageError",
    "Entries",
    "entries_from_json",
    "entries_from_values",
    "kind_of",
    "read_checkpoint",
    "validate_file",
    "write_checkpoint",
]

OFFSETS = "offsets"
LEADER_EPOCH = "leader-epoch"
KINDS = (OFFSETS, LEADER_EPOCH)
_VALIDATE_ONLY = {"partition.metadata": "partition-metadata", "meta.properties": "meta-properties"}

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class CheckpointUsageError(ValueError):
    """Bad command-line input (kind unknown, entries malformed); not a file problem.

    ``file`` is set when the input at fault is a file (its kind cannot be told
    from its name, the ``--from-json`` file is not JSON), so the message names
    the file, byte position and field like every other one.
    """

    def __init__(
        self, message: str, *, file: str | None = None, position: int = 0, field: str = "file name"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.position = position
        self.field = field


def kind_of(path: str, override: str | None = None, *, validating: bool = False) -> str:
    """``offsets`` or ``leader-epoch`` (or, when validating, the metadata kinds)."""
    if override is not None:
        return override
    name = os.path.basename(path)
    if name in OFFSET_CHECKPOINT_FILES:
        return OFFSETS
    if name == LEADER_EPOCH_CHECKPOINT_FILE:
        return LEADER_EPOCH
    if validating and name in _VALIDATE_ONLY:
        return _VALIDATE_ONLY[name]
    raise CheckpointUsageError(
        "cannot tell the checkpoint format from the file name; pass --kind " + "|".join(KINDS),
        file=path,
    )


def read_checkpoint(path: str, kind: str) -> OffsetCheckpoint | LeaderEpochCheckpoint:
    """Read strictly; raises FormatError (Kafka's wording) or OSError."""
    data = read_small(path)
    if kind == OFFSETS:
        return read_offset_checkpoint(data, file=path)
    return read_leader_epoch_checkpoint(data, file=path)


def validate_file(path: str, kind: str) -> None:
    """Raise the FormatError Kafka's reader would (as a typed error), else return."""
    if kind in KINDS:
        read_checkpoint(path, kind)
    elif kind == "partition-metadata":
        read_partition_metadata(read_small(path), file=path)
    else:
        read_meta_properties(read_small(path), file=path)


def _integer(text: object, bounds: tuple[int, int], what: str) -> int:
    if isinstance(text, bool) or not isinstance(text, int | str):
        raise CheckpointUsageError(f"{what} {text!r} is not an integer")
    try:
        value = int(text)
    except ValueError:
        raise CheckpointUsageError(f"{what} {text!r} is not an integer") from None
    if not bounds[0] <= value <= bounds[1]:
        raise CheckpointUsageError(f"{what} {value} does not fit in {bounds[0]}..{bounds[1]}")
    return value


@dataclass(slots=True)
class Entries:
    """Entries to write: ``offsets`` rows for kind offsets, ``epochs`` rows otherwise."""

    kind: str
    offsets: list[tuple[str, int, int]] = field(default_factory=list)
    epochs: list[tuple[int, int]] = field(default_factory=list)
    #: write an empty file (what Kafka creates before the first checkpoint)
    empty: bool = False


def entries_from_values(kind: str, values: Sequence[Sequence[object]]) -> Entries:
    """``--entry`` values: ``TOPIC PARTITION OFFSET`` or ``EPOCH START_OFFSET``."""
    width = 3 if kind == OFFSETS else 2
    entries = Entries(kind)
    for value in values:
        if len(value) != width:
            shape = "TOPIC PARTITION OFFSET" if kind == OFFSETS else "EPOCH START_OFFSET"
            shown = " ".join(str(part) for part in value)
            raise CheckpointUsageError(f"entry '{shown}': expected {shape}")
        if kind == OFFSETS:
            partition = _integer(value[1], _INT32, "partition")
            entries.offsets.append((str(value[0]), partition, _integer(value[2], _INT64, "offset")))
        else:
            epoch = _integer(value[0], _INT32, "epoch")
            entries.epochs.append((epoch, _integer(value[1], _INT64, "start offset")))
    return entries


def entries_from_json(kind: str, document: object) -> Entries:
    """Entries from a JSON list of objects or from ``checkpoint read --json`` output."""
    empty = False
    if isinstance(document, dict):
        if document.get("kind") not in (None, kind):
            raise CheckpointUsageError(f"JSON holds a {document['kind']} checkpoint, not {kind}")
        empty = "version" in document and document["version"] is None
        document = document.get("entries")
    if not isinstance(document, list):
        raise CheckpointUsageError("JSON entries must be a list of objects")
    names = ("topic", "partition", "offset") if kind == OFFSETS else ("epoch", "start_offset")
    rows: list[list[object]] = []
    for item in document:
        if not isinstance(item, dict) or any(name not in item for name in names):
            raise CheckpointUsageError(f"JSON entry {item!r} needs the keys {', '.join(names)}")
        if kind == OFFSETS and not isinstance(item["topic"], str):
            raise CheckpointUsageError(f"JSON entry {item!r}: topic must be a string")
        rows.append([item[name] for name in names])
    if empty and rows:
        raise CheckpointUsageError('JSON has "version": null (an empty file) but also entries')
    entries = entries_from_values(kind, rows)
    entries.empty = empty
    return entries


def write_checkpoint(path: str, entries: Entries) -> None:
    """Write atomically (``.tmp``, fsync, rename, fsync dir) as Kafka does."""
    try:
        if entries.empty:
            write_checkpoint_atomically(path, "")
        elif entries.kind == OFFSETS:
            write_offset_checkpoint(path, entries.offsets)
        else:
            write_leader_epoch_checkpoint(path, entries.epochs)
    except ValueError as error:
        raise CheckpointUsageError(str(error)) from None
