"""``lethe dump``'s library: read each file by kind and feed a renderer.

Theory of operation
-------------------
:func:`dump_files` is kafka-dump-log's main loop: for every path, announce it
(``Dumping <path>``), pick the reader from the file name
(:func:`~lethe_tools.inspect.kinds.classify`), decode, and call the matching
:class:`DumpRenderer` method with typed values. The renderer (kafka-dump-log
text, or JSON lines) owns every byte of output; this module owns reading,
the order of events, and the findings Kafka prints to stderr at the very end
(index mismatches, time index errors, non-consecutive offsets), collected in
a :class:`DumpReport` keyed by absolute path as Kafka keys them.

Kinds kafka-dump-log knows (``.log``, ``.index``, ``.timeindex``,
``.txnindex``, ``.snapshot``) follow it exactly, including the sibling
``.log``/``.index`` reads of the index checks. Checkpoints,
``partition.metadata``, ``meta.properties`` (which it does not dump)
and ``.kafka_cleanshutdown`` (the clean shutdown marker, as Kafka writes it:
``version`` and ``brokerEpoch``) are decoded with the strict storage
readers. A file that cannot be read or decoded becomes one ``error`` event
and the loop goes on with the next file; ``DumpReport.failed`` then makes
the command exit non-zero.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lethe_formats.errors import FormatError
from lethe_formats.model import AbortedTxn
from lethe_formats.storage.checkpoint import (
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
)
from lethe_formats.storage.clean_shutdown import read_clean_shutdown
from lethe_formats.storage.index import check_offset_index, check_time_index
from lethe_formats.storage.meta_properties import read_meta_properties
from lethe_formats.storage.partition_metadata import read_partition_metadata
from lethe_formats.storage.producer_snapshot import ProducerSnapshotEntry, read_producer_snapshot
from lethe_formats.storage.txn_index import read_txn_index

from lethe_tools.inspect.decoders import RecordParser
from lethe_tools.inspect.index_dump import (
    TimeIndexFindings,
    check_index_entries,
    check_time_index_entries,
    index_rows,
    time_rows,
)
from lethe_tools.inspect.kinds import FileInfo, Kind, classify
from lethe_tools.inspect.log_walk import LogObserver, LogWalk, walk_log
from lethe_tools.inspect.mapped import mapped, read_small
from lethe_tools.inspect.misplaced import directory_problem
from lethe_tools.inspect.problems import WHOLE_FILE, Problem
from lethe_tools.progress import scan_progress

__all__ = ["DumpOptions", "DumpRenderer", "DumpReport", "dump_files"]


@dataclass(frozen=True, slots=True)
class DumpOptions:
    """kafka-dump-log's options (``DumpLogSegmentsOptions``)."""

    deep: bool = False
    print_data: bool = False
    max_bytes: int | None = None
    #: ``--*-decoder`` / ``--*-decoder-class``: key and value to text (None: UTF-8)
    parser: RecordParser | None = None
    #: ``--skip-record-metadata``: record lines hold only key and payload
    skip_metadata: bool = False
    #: ``--verify-index-only``: index entries checked against the log, not printed
    verify_only: bool = False
    #: ``--index-sanity-check``: only Kafka's startup check of each index
    index_sanity: bool = False


@dataclass(slots=True)
class DumpReport:
    """What kafka-dump-log prints to stderr after all files, keyed by absolute path."""

    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_index: dict[str, TimeIndexFindings] = field(default_factory=dict)
    gaps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    failed: bool = False


class DumpRenderer(LogObserver, Protocol):
    """Everything a dump can show; implementations write text or JSON lines."""

    def file_begin(self, path: str, info: FileInfo) -> None: ...
    def log_begin(self, path: str, base_offset: int | None) -> None: ...
    def snapshot_begin(self, path: str, snapshot_id: tuple[int, int] | None) -> None: ...
    def log_end(self, path: str, walk: LogWalk, limited: bool) -> None: ...
    def offset_index(self, path: str, rows: Sequence[tuple[int, int]]) -> None: ...
    def time_index(self, path: str, rows: Sequence[tuple[int, int]]) -> None: ...
    def index_sane(self, path: str) -> None: ...
    def txn_index(self, path: str, entries: Sequence[AbortedTxn]) -> None: ...
    def producer_snapshot(self, path: str, entries: Sequence[ProducerSnapshotEntry]) -> None: ...
    def offset_checkpoint(self, path: str, checkpoint: OffsetCheckpoint) -> None: ...
    def epoch_checkpoint(self, path: str, checkpoint: LeaderEpochCheckpoint) -> None: ...
    def properties(self, path: str, items: Sequence[tuple[str, str]]) -> None: ...
    def unknown(self, path: str) -> None: ...
    def file_error(self, path: str, message: str) -> None: ...
    def finish(self, report: DumpReport) -> None: ...


def dump_files(paths: Sequence[str], options: DumpOptions, renderer: DumpRenderer) -> DumpReport:
    """Dump every path in order, then let the renderer print the stderr findings."""
    report = DumpReport()
    for path in paths:
        info = classify(path)
        renderer.file_begin(path, info)
        try:
            if os.path.isdir(path):
                report.failed = True
                renderer.file_error(path, str(directory_problem(path, info.kind)))
                continue
            _dump_one(path, info, options, renderer, report)
        except FormatError as error:
            report.failed = True
            renderer.file_error(path, str(Problem.from_error(error, error.file or path)))
        except BrokenPipeError:
            raise  # the reader went away (`| head`): the CLI ends quietly
        except (OSError, ValueError) as error:
            report.failed = True
            renderer.file_error(path, _os_message(path, error))
    renderer.finish(report)
    return report


def _os_message(path: str, error: Exception) -> str:
    """A whole-file fault (cannot open, not text): byte 0, field ``file``."""
    text = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return str(Problem(path, text, position=0, field=WHOLE_FILE))


def _dump_one(
    path: str, info: FileInfo, options: DumpOptions, renderer: DumpRenderer, report: DumpReport
) -> None:
    kind = info.kind
    if kind in (Kind.LOG, Kind.KRAFT_SNAPSHOT):
        _dump_log(path, info, options, renderer, report)
    elif kind is Kind.INDEX:
        _dump_index(path, info, options, renderer, report)
    elif kind is Kind.TIME_INDEX:
        _dump_time_index(path, info, options, renderer, report)
    elif kind is Kind.TXN_INDEX:
        renderer.txn_index(path, read_txn_index(read_small(path), file=path))
    elif kind is Kind.SNAPSHOT:
        snapshot = read_producer_snapshot(read_small(path), file=path)
        renderer.producer_snapshot(path, snapshot.entries)
    elif kind is Kind.OFFSET_CHECKPOINT:
        renderer.offset_checkpoint(path, read_offset_checkpoint(read_small(path), file=path))
    elif kind is Kind.LEADER_EPOCH_CHECKPOINT:
        renderer.epoch_checkpoint(path, read_leader_epoch_checkpoint(read_small(path), file=path))
    elif kind is Kind.PARTITION_METADATA:
        metadata = read_partition_metadata(read_small(path), file=path)
        renderer.properties(
            path, [("version", str(metadata.version)), ("topic_id", str(metadata.topic_id))]
        )
    elif kind is Kind.META_PROPERTIES:
        meta = read_meta_properties(read_small(path), file=path)
        renderer.properties(path, meta.properties)
    elif kind is Kind.CLEAN_SHUTDOWN:
        marker = read_clean_shutdown(read_small(path), file=path)
        fields = [("version", str(marker.version)), ("brokerEpoch", str(marker.broker_epoch))]
        renderer.properties(path, fields)
    else:
        renderer.unknown(path)


def _dump_log(
    path: str, info: FileInfo, options: DumpOptions, renderer: DumpRenderer, report: DumpReport
) -> None:
    if info.kind is Kind.KRAFT_SNAPSHOT:
        renderer.snapshot_begin(path, kraft_snapshot_id(path))
    else:
        renderer.log_begin(path, info.base_offset)
        if info.base_offset is None:
            report.failed = True
    with mapped(path) as data:
        size = len(data) if options.max_bytes is None else min(len(data), options.max_bytes)
        with scan_progress(size, os.path.basename(path)) as progress:
            walk = walk_log(
                data,
                renderer,
                file=path,
                deep=options.deep or options.print_data,
                max_bytes=options.max_bytes,
                progress=progress,
            )
    if walk.gaps:
        report.gaps.setdefault(os.path.abspath(path), []).extend(walk.gaps)
    if walk.errors or not walk.torn_tail:
        report.failed = True
    renderer.log_end(path, walk, options.max_bytes is not None)


def kraft_snapshot_id(path: str) -> tuple[int, int] | None:
    """(end offset, epoch) from ``<20 digits>-<10 digits>.checkpoint``; None for
    ``bootstrap.checkpoint`` (Kafka's KRaft bootstrap snapshot)."""
    stem = os.path.basename(path).rsplit(".", 1)[0]
    offset, dash, epoch = stem.partition("-")
    if not dash or not (offset.isdigit() and epoch.isdigit()):
        if stem == "bootstrap":
            return None
        raise FormatError(
            "not a KRaft snapshot name <offset>-<epoch>.checkpoint", position=0, field="file name"
        )
    return int(offset), int(epoch)


def _sibling(path: str, suffix: str) -> str:
    """``X.log`` next to ``X.index``: Kafka takes the name up to the first dot."""
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.basename(path).split(".", 1)[0]
    return os.path.join(directory, stem + suffix)


def _read_optional(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _sane(path: str, data: bytes, base: int, kind: Kind, renderer: DumpRenderer) -> None:
    """``--index-sanity-check``: Kafka's startup check (its first failure ends the file)."""
    check = check_offset_index if kind is Kind.INDEX else check_time_index
    failures = [p for p in check(data, base_offset=base, file=path) if p.kafka_check]
    if failures:
        raise failures[0].as_error()
    renderer.index_sane(path)


def _dump_index(
    path: str, info: FileInfo, options: DumpOptions, renderer: DumpRenderer, report: DumpReport
) -> None:
    base = info.base_offset if info.base_offset is not None else 0
    data = read_small(path)
    rows = index_rows(data, base)
    if rows and options.index_sanity:  # an empty index is only "is empty."
        _sane(path, data, base, Kind.INDEX, renderer)
        return
    if not rows or not options.verify_only:
        renderer.offset_index(path, rows)
    log_path = _sibling(path, ".log")
    if not rows or not os.path.isfile(log_path):
        return
    with mapped(log_path) as log:
        mismatches = check_index_entries(rows, log)
    if mismatches:
        report.index_mismatches.setdefault(os.path.abspath(path), []).extend(mismatches)


def _dump_time_index(
    path: str, info: FileInfo, options: DumpOptions, renderer: DumpRenderer, report: DumpReport
) -> None:
    base = info.base_offset if info.base_offset is not None else 0
    data = read_small(path)
    if options.index_sanity:
        _sane(path, data, base, Kind.TIME_INDEX, renderer)
        return
    rows = time_rows(data, base)
    if not options.verify_only:
        renderer.time_index(path, rows)
    log_path = _sibling(path, ".log")
    if not rows or not os.path.isfile(log_path):
        return
    index_data = _read_optional(_sibling(path, ".index"))
    index = index_rows(index_data, base) if index_data is not None else []
    with mapped(log_path) as log:
        findings = check_time_index_entries(rows, index, log)
    if findings:
        report.time_index[os.path.abspath(path)] = findings
