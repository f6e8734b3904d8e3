"""Decode the small files of a log dir: indexes, snapshots, checkpoints, partition.metadata.

Theory of operation
-------------------
Everything but ``.log`` is small (an index is at most ``segment.index.bytes``,
10 MiB by default) and is read whole, then decoded with lethe_formats'
single-process readers, the same ones ``lethe verify`` uses::

    .index        read_offset_index + check_offset_index   -> indexes rows (+ problems)
    .timeindex    read_time_index + check_time_index       -> indexes rows (+ problems)
    .txnindex     read_txn_index + check_txn_index         -> indexes rows (+ problems)
    .snapshot     read_producer_snapshot                   -> problems only
    root offset checkpoints      read_offset_checkpoint    -> checkpoints rows
    leader-epoch-checkpoint      read_leader_epoch_checkpoint -> checkpoints rows
    partition dir + partition.metadata                     -> partitions row
      + its log dir's root offset checkpoints              (checkpoint columns)
    discovery problem                                      -> problems row

Index entries keep Kafka's reading rule (an entry after the first with a
relative offset of 0 ends a preallocated index); their offsets are made
absolute with the segment's base offset from the file name.

A partitions row carries the root checkpoints' entries for it
(``log_start_offset`` <- ``log-start-offset-checkpoint``, ``recovery_point``,
``high_watermark`` <- ``replication-offset-checkpoint``, ``cleaner_offset``):
the largest offset of the entries with its topic and partition in that file
of its log dir, null when there is none, when the file cannot be read (the
checkpoint item reports that problem) or when the directory is not live
(Kafka's checkpoints describe the live log, not a ``-delete``/``-stray``/
``-future`` copy). Each task reads the few root checkpoint files itself
(kept per process by path and modification time), so the table needs no
join after the tasks.
"""

from __future__ import annotations

import os
from typing import Any

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import read_leader_epoch_checkpoint, read_offset_checkpoint
from lethe_formats.storage.index import (
    check_offset_index,
    check_time_index,
    read_offset_index,
    read_time_index,
)
from lethe_formats.storage.index_problems import IndexProblem
from lethe_formats.storage.partition_metadata import read_partition_metadata
from lethe_formats.storage.producer_snapshot import read_producer_snapshot
from lethe_formats.storage.txn_index import check_txn_index, read_txn_index

from lethe_tools.audit.discover import Item
from lethe_tools.audit.rows import Tables, problem_row

__all__ = ["CHECKPOINT_COLUMNS", "checkpoint_values", "decode_small_file"]

#: partitions column <- root checkpoint file
CHECKPOINT_COLUMNS = {
    "log_start_offset": "log-start-offset-checkpoint",
    "recovery_point": "recovery-point-offset-checkpoint",
    "high_watermark": "replication-offset-checkpoint",
    "cleaner_offset": "cleaner-offset-checkpoint",
}
_READ_CHECKPOINTS: dict[tuple[str, int], dict[tuple[str, int], int]] = {}

_OFFSET_INDEX_SIZE, _TIME_INDEX_SIZE, _TXN_INDEX_SIZE = 8, 12, 34


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def decode_small_file(item: Item, out: Tables) -> None:
    """Append the rows of one non-segment item to ``out``."""
    handler = _HANDLERS.get(item.kind)
    if handler is not None:
        handler(item, out)


def _index_problems(item: Item, problems: list[IndexProblem], out: Tables) -> None:
    for problem in problems:
        out.problems.add(problem_row(item, problem.as_error(), "index"))


def _index_row(item: Item, entry: int, size: int, **values: Any) -> tuple[Any, ...]:
    columns = (
        "offset",
        "log_position",
        "timestamp",
        "producer_id",
        "first_offset",
        "last_offset",
        "last_stable_offset",
    )
    base = (item.topic, item.partition, item.path, item.kind, item.base_offset, entry, entry * size)
    return (*base, *(values.get(name) for name in columns))


def _index_rows(item: Item, size: int, count: int, **values: list[int]) -> dict[str, Any]:
    """Columns.extend arguments for ``count`` entries of an index file: the file's
    constants once, ``values`` (offset, log_position or timestamp) per entry."""
    columns: dict[str, Any] = {
        "topic": item.topic,
        "partition": item.partition,
        "file": item.path,
        "kind": item.kind,
        "segment_base_offset": item.base_offset,
        "entry": list(range(count)),
        "position": list(range(0, count * size, size)),
    }
    for name in _INDEX_VALUES:
        columns[name] = values.get(name)
    return columns


_INDEX_VALUES = (
    "offset",
    "log_position",
    "timestamp",
    "producer_id",
    "first_offset",
    "last_offset",
    "last_stable_offset",
)


def _offset_index(item: Item, out: Tables) -> None:
    data, base = _read(item.path), item.base_offset or 0
    entries = read_offset_index(data, file=item.path)
    if entries:
        offsets = [base + entry.relative_offset for entry in entries]
        positions = [entry.position for entry in entries]
        columns = _index_rows(
            item, _OFFSET_INDEX_SIZE, len(entries), offset=offsets, log_position=positions
        )
        out.indexes.extend(len(entries), **columns)
    _index_problems(item, check_offset_index(data, base_offset=base, file=item.path), out)


def _time_index(item: Item, out: Tables) -> None:
    data, base = _read(item.path), item.base_offset or 0
    entries = read_time_index(data, file=item.path)
    if entries:
        offsets = [base + entry.relative_offset for entry in entries]
        stamps = [entry.timestamp for entry in entries]
        columns = _index_rows(
            item, _TIME_INDEX_SIZE, len(entries), offset=offsets, timestamp=stamps
        )
        out.indexes.extend(len(entries), **columns)
    _index_problems(item, check_time_index(data, base_offset=base, file=item.path), out)


def _txn_index(item: Item, out: Tables) -> None:
    data, base = _read(item.path), item.base_offset or 0
    problems = check_txn_index(data, base_offset=base, file=item.path)
    _index_problems(item, problems, out)
    try:
        entries = read_txn_index(data, file=item.path)
    except FormatError:
        return  # check_txn_index reported it, with the entry's position
    for number, txn in enumerate(entries):
        row = _index_row(
            item,
            number,
            _TXN_INDEX_SIZE,
            producer_id=txn.producer_id,
            first_offset=txn.first_offset,
            last_offset=txn.last_offset,
            last_stable_offset=txn.last_stable_offset,
        )
        out.indexes.add(row)


def _snapshot(item: Item, out: Tables) -> None:
    try:
        read_producer_snapshot(_read(item.path), file=item.path)
    except FormatError as error:
        out.problems.add(problem_row(item, error, "snapshot"))


def _checkpoint(item: Item, out: Tables) -> None:
    kind = os.path.basename(item.path)
    try:
        checkpoint = read_offset_checkpoint(_read(item.path), file=item.path)
    except FormatError as error:
        out.problems.add(problem_row(item, error, "checkpoint"))
        return
    for entry in checkpoint.entries:
        out.checkpoints.add(
            (
                item.logdir,
                item.path,
                kind,
                checkpoint.version,
                entry.topic,
                entry.partition,
                entry.offset,
                None,
                None,
            )
        )


def _leader_epoch(item: Item, out: Tables) -> None:
    try:
        checkpoint = read_leader_epoch_checkpoint(_read(item.path), file=item.path)
    except FormatError as error:
        out.problems.add(problem_row(item, error, "checkpoint"))
        return
    for entry in checkpoint.entries:
        out.checkpoints.add(
            (
                item.logdir,
                item.path,
                "leader-epoch-checkpoint",
                checkpoint.version,
                item.topic,
                item.partition,
                None,
                entry.epoch,
                entry.start_offset,
            )
        )


def _checkpoint_entries(path: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> largest offset in one root checkpoint ({} when unreadable)."""
    try:
        key = (path, os.stat(path).st_mtime_ns)
    except OSError:
        return {}
    cached = _READ_CHECKPOINTS.get(key)
    if cached is None:
        cached = {}
        try:
            checkpoint = read_offset_checkpoint(_read(path), file=path)
        except (FormatError, OSError):
            checkpoint = None
        for entry in checkpoint.entries if checkpoint else ():
            where = (entry.topic, entry.partition)
            cached[where] = max(cached.get(where, entry.offset), entry.offset)
        _READ_CHECKPOINTS[key] = cached
    return cached


def checkpoint_values(item: Item) -> tuple[int | None, ...]:
    """The partitions row's checkpoint columns (CHECKPOINT_COLUMNS order) for ``item``."""
    info = item.partition_info
    if info is None or info.dir_kind != "live" or item.topic is None or item.partition is None:
        return (None,) * len(CHECKPOINT_COLUMNS)
    files = {os.path.basename(path): path for path in item.checkpoints}
    where = (item.topic, item.partition)
    values: list[int | None] = []
    for name in CHECKPOINT_COLUMNS.values():
        path = files.get(name)
        values.append(None if path is None else _checkpoint_entries(path).get(where))
    return tuple(values)


def _partition(item: Item, out: Tables) -> None:
    info = item.partition_info
    assert info is not None, "discovery sets it on every partition item"
    topic_id: str | None = None
    if info.has_metadata:
        path = os.path.join(item.path, "partition.metadata")
        try:
            topic_id = str(read_partition_metadata(_read(path), file=path).topic_id)
        except FormatError as error:
            out.problems.add(problem_row(item, error.at(file=path), "partition-metadata"))
    out.partitions.add(
        (
            item.logdir,
            item.path,
            item.topic,
            item.partition,
            info.dir_kind,
            info.unique_id,
            topic_id,
            info.segment_count,
            info.log_bytes,
            info.first_base_offset,
            info.active_base_offset,
            *checkpoint_values(item),
        )
    )


def _problem(item: Item, out: Tables) -> None:
    error = FormatError(item.message or "unreadable", file=item.path, field=item.field)
    row = problem_row(item, error, "discover")
    out.problems.add((*row[:3], item.error or "FormatError", *row[4:]))


_HANDLERS = {
    "index": _offset_index,
    "timeindex": _time_index,
    "txnindex": _txn_index,
    "snapshot": _snapshot,
    "checkpoint": _checkpoint,
    "leader-epoch": _leader_epoch,
    "partition": _partition,
    "problem": _problem,
}
