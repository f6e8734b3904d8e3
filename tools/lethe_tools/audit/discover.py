"""Find what an audit reads: log dirs, partition dirs and their files, by listing only.

Theory of operation
-------------------
Discovery runs where Spark plans the read (the driver side) and never opens a
segment, index or checkpoint: it lists directories and ``stat``s files, so
a log dir of terabytes is planned in the time ``ls -R`` takes. Everything it
finds becomes an :class:`Item`, a small picklable description of one unit of
work that a Spark task decodes later (:mod:`lethe_tools.audit.decode`)::

    LOGDIR/                                   a log dir: it holds meta.properties, a root
        meta.properties                       checkpoint, or a partition dir with segments
        log-start-offset-checkpoint ...       -> Item(kind="checkpoint")
        <topic>-<partition>[.<id>-delete]/    -> Item(kind="partition")   (partition.metadata)
            00000000000000000042.log          -> Item(kind="log")
            00000000000000000042.index        -> Item(kind="index") / "timeindex" / "txnindex"
            00000000000000000042.snapshot     -> Item(kind="snapshot")
            leader-epoch-checkpoint           -> Item(kind="leader-epoch")

A path given on the command line that is not itself a log dir is searched
for log dirs below it (a folder of log dirs, such as ``fixtures/golden``); a
partition dir given directly is audited alone, with its parent as its log
dir. Names are parsed with Kafka's rules (``lethe_formats.storage.filenames``);
a name that looks like a segment or partition dir but does not parse becomes
an ``Item(kind="problem")`` so that it reaches the problems table through the
same tasks as every other finding. Files Kafka does not write (``*.tmp``,
broker logs) are ignored, as ``lethe verify`` ignores them.

Each ``partition`` item also carries ``checkpoints``: the root offset
checkpoint files found for its log dir, so the task that writes its
partitions row fills the checkpoint columns itself
(:mod:`lethe_tools.audit.files`) instead of a join after all tasks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import LEADER_EPOCH_CHECKPOINT_FILE, OFFSET_CHECKPOINT_FILES
from lethe_formats.storage.filenames import (
    FileKind,
    PartitionDirName,
    parse_partition_dir_name,
    parse_segment_file_name,
)

__all__ = ["Inventory", "Item", "PartitionInfo", "discover", "find_logdirs"]

#: How deep below a command-line path log dirs are searched for.
MAX_DEPTH = 4
_LOGDIR_MARKERS = ("meta.properties", *OFFSET_CHECKPOINT_FILES)
_PARTITION_METADATA = "partition.metadata"


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """What the listing of a partition dir tells (schemas.PARTITIONS columns)."""

    dir_kind: str
    unique_id: str | None
    segment_count: int
    log_bytes: int
    first_base_offset: int | None
    active_base_offset: int | None
    has_metadata: bool


@dataclass(frozen=True, slots=True)
class Item:
    """One unit of decoding work: a file (or a partition dir) and what the listing knows.

    ``kind`` is ``log``, ``index``, ``timeindex``, ``txnindex``, ``snapshot``,
    ``checkpoint``, ``leader-epoch``, ``partition`` or ``problem``. For a
    ``partition`` item ``path`` is the directory and ``partition_info`` the
    listing's figures; for a ``problem`` item ``message``/``field``/``error``
    describe what discovery could not parse.
    """

    kind: str
    path: str
    logdir: str
    size: int = 0
    modified_ms: int = 0
    topic: str | None = None
    partition: int | None = None
    base_offset: int | None = None
    extra_suffix: str = ""
    is_active: bool = False
    partition_info: PartitionInfo | None = None
    message: str | None = None
    field: str | None = None
    error: str | None = None
    checkpoints: tuple[str, ...] = ()


@dataclass(slots=True)
class Inventory:
    """Everything discovery found, in a stable order."""

    logdirs: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    @property
    def bytes_of_logs(self) -> int:
        return sum(item.size for item in self.items if item.kind == "log")


def _is_partition_dir(path: str) -> bool:
    try:
        parse_partition_dir_name(os.path.basename(path))
    except FormatError:
        return False
    return any(name.endswith(".log") for name in _names(path))


def _names(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _is_logdir(path: str) -> bool:
    names = _names(path)
    if any(marker in names for marker in _LOGDIR_MARKERS):
        return True
    return any(_is_partition_dir(os.path.join(path, name)) for name in names)


def find_logdirs(path: str, depth: int = 0) -> Iterator[tuple[str, str | None]]:
    """(log dir, only this partition dir or None) for each log dir at or below ``path``."""
    path = os.path.abspath(path)
    if _is_partition_dir(path) and not _is_logdir(path):
        yield os.path.dirname(path), os.path.basename(path)
    elif _is_logdir(path):
        yield path, None
    elif depth < MAX_DEPTH:
        for name in _names(path):
            child = os.path.join(path, name)
            if os.path.isdir(child) and not name.startswith("."):
                yield from find_logdirs(child, depth + 1)


def _stat(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return 0, 0
    return info.st_size, info.st_mtime_ns // 1_000_000


def _problem(path: str, logdir: str, error: FormatError, dir_name: PartitionDirName | None) -> Item:
    return Item(
        "problem",
        path,
        logdir,
        topic=dir_name.topic if dir_name else None,
        partition=dir_name.partition if dir_name else None,
        message=error.message,
        field=error.field,
        error=type(error).__name__,
    )


def _partition_items(logdir: str, name: str) -> list[Item]:
    """The items of one partition dir: the dir itself first, then its files."""
    path = os.path.join(logdir, name)
    try:
        dir_name = parse_partition_dir_name(name)
    except FormatError as error:
        return [_problem(path, logdir, error, None)]
    where = {"logdir": logdir, "topic": dir_name.topic, "partition": dir_name.partition}
    files: list[Item] = []
    for file_name in _names(path):
        file_path = os.path.join(path, file_name)
        item = _file_item(file_path, file_name, where, dir_name)
        if item is not None:
            files.append(item)
    return [_partition_item(path, dir_name, files, where), *files]


def _file_item(
    path: str, name: str, where: dict[str, object], dir_name: PartitionDirName
) -> Item | None:
    logdir = str(where["logdir"])
    if name == LEADER_EPOCH_CHECKPOINT_FILE:
        return Item("leader-epoch", path, logdir, *_stat(path), dir_name.topic, dir_name.partition)
    if not name[:1].isdigit() or name.endswith(".tmp"):
        return None  # partition.metadata (read with the partition item) or not Kafka's
    try:
        parsed = parse_segment_file_name(name)
    except FormatError as error:
        return _problem(path, logdir, error.at(file=path), dir_name)
    size, modified = _stat(path)
    return Item(
        parsed.kind.value,
        path,
        logdir,
        size,
        modified,
        dir_name.topic,
        dir_name.partition,
        parsed.base_offset,
        parsed.extra_suffix,
    )


def _partition_item(
    path: str, dir_name: PartitionDirName, files: list[Item], where: dict[str, object]
) -> Item:
    logs = [item for item in files if item.kind == FileKind.LOG.value]
    live = [item.base_offset for item in logs if not item.extra_suffix]
    active = max((offset for offset in live if offset is not None), default=None)
    for index, item in enumerate(files):
        if item.kind == FileKind.LOG.value and not item.extra_suffix and item.base_offset == active:
            files[index] = replace(item, is_active=True)
    first = min((offset for offset in live if offset is not None), default=None)
    info = PartitionInfo(
        dir_name.kind.value.lstrip("-") or "live",
        dir_name.unique_id,
        len(logs),
        sum(item.size for item in logs),
        first,
        active,
        os.path.exists(os.path.join(path, _PARTITION_METADATA)),
    )
    return Item(
        "partition",
        path,
        str(where["logdir"]),
        topic=dir_name.topic,
        partition=dir_name.partition,
        partition_info=info,
    )


def _logdir_items(logdir: str, only: str | None) -> list[Item]:
    items: list[Item] = []
    for name in _names(logdir):
        path = os.path.join(logdir, name)
        if only is None and name in OFFSET_CHECKPOINT_FILES:
            items.append(Item("checkpoint", path, logdir, *_stat(path)))
        elif os.path.isdir(path) and not name.startswith(".") and (only in (None, name)):
            items.extend(_partition_items(logdir, name))
    return items


def discover(paths: Iterable[str]) -> Inventory:
    """List the log dirs at or below ``paths`` and every file an audit decodes."""
    inventory = Inventory()
    seen: set[tuple[str, str | None]] = set()
    for path in paths:
        if not os.path.exists(path):
            error = FormatError("no such file or directory", file=path, field="path")
            inventory.items.append(_problem(os.path.abspath(path), path, error, None))
            continue
        for logdir, only in find_logdirs(path):
            if (logdir, only) in seen:
                continue
            seen.add((logdir, only))
            inventory.logdirs.append(logdir)
            inventory.items.extend(_logdir_items(logdir, only))
    return _with_checkpoints(inventory)


def _with_checkpoints(inventory: Inventory) -> Inventory:
    """Give every partition item the root checkpoint files found for its log dir."""
    found: dict[str, list[str]] = {}
    for item in inventory.items:
        if item.kind == "checkpoint":
            found.setdefault(item.logdir, []).append(item.path)
    for index, item in enumerate(inventory.items):
        if item.kind == "partition" and item.logdir in found:
            inventory.items[index] = replace(item, checkpoints=tuple(found[item.logdir]))
    return inventory
