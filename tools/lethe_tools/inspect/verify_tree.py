"""``lethe verify``'s library: walk files, partition dirs and log dirs, collect problems.

Theory of operation
-------------------
A path is a file, a partition directory or anything above (a log dir, a folder
of log dirs). Directories are walked bottom-up, so each partition directory is
verified before the log dir holding it, and a directory is whatever its files
make it::

    <log dir>/                      offset checkpoints, meta.properties
        <topic>-<partition>/        segments, leader-epoch-checkpoint, partition.metadata

Per partition directory (files named as Kafka names them; others are ignored):

1. every ``.log`` is scanned once (:func:`verify_segment`), in base-offset order,
   and each segment must end before the next one's base offset;
2. its ``.index``/``.timeindex``/``.txnindex`` are checked against that scan
   (:mod:`.verify_index`); an index with no ``.log`` is an orphan, which
   Kafka deletes at startup;
3. ``.snapshot`` files are read strictly; each producer's last offset must be
   below the snapshot's offset, and the snapshot offset may not pass the log end;
4. ``leader-epoch-checkpoint`` and ``partition.metadata`` are read strictly.

Per log dir, after its partitions: the offset checkpoints are read strictly and
their values compared with the partitions' ranges (:mod:`.verify_checkpoint`).
A file given directly is checked alone (an index against its sibling ``.log``
when there is one). Each file's checks are fenced: any exception becomes a
problem line, never a traceback.

A directory bearing the name of a file Kafka reads (an index, a snapshot, a
checkpoint, ``partition.metadata``, ``meta.properties``, a segment) is a
problem of its own (:mod:`.misplaced`), found in a walk and when given as a
path.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lethe_formats.errors import FormatError
from lethe_formats.storage.clean_shutdown import read_clean_shutdown
from lethe_formats.storage.filenames import PartitionDirKind, parse_partition_dir_name
from lethe_formats.storage.producer_snapshot import read_producer_snapshot

from lethe_tools.inspect.kinds import FileInfo, Kind, classify
from lethe_tools.inspect.mapped import mapped, read_small
from lethe_tools.inspect.misplaced import misplaced_directory
from lethe_tools.inspect.problems import WHOLE_FILE, Problems
from lethe_tools.inspect.verify_checkpoint import (
    PartitionRange,
    check_offset_ranges,
    read_checked,
    verify_epoch_checkpoint,
    verify_properties_file,
)
from lethe_tools.inspect.verify_index import (
    verify_offset_index,
    verify_time_index,
    verify_txn_index,
)
from lethe_tools.inspect.verify_log import SegmentSummary, verify_segment
from lethe_tools.progress import scan_progress

__all__ = ["VerifyOptions", "verify_paths"]

_SEGMENT_KINDS = (Kind.LOG, Kind.INDEX, Kind.TIME_INDEX, Kind.TXN_INDEX, Kind.SNAPSHOT)


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    deep: bool = False


def verify_paths(paths: Sequence[str], options: VerifyOptions, problems: Problems) -> int:
    """Verify every path; returns the number of files checked."""
    walker = _Walker(options, problems)
    for path in paths:
        if os.path.isdir(path):
            misplaced = misplaced_directory(path)
            if misplaced is not None:
                walker.checked += 1
                problems.append(misplaced)
            else:
                walker.tree(path)
        elif os.path.exists(path):
            walker.single(path)
        else:
            problems.add(path, "No such file or directory", position=0, field=WHOLE_FILE)
    return walker.checked


class _Walker:
    def __init__(self, options: VerifyOptions, problems: Problems) -> None:
        self.options = options
        self.problems = problems
        self.checked = 0

    def fenced(self, path: str, check: Callable[..., object], *args: Any) -> None:
        """Run ``check(*args)`` for one file; whatever escapes becomes a problem line."""
        self.checked += 1
        try:
            check(*args)
        except FormatError as error:
            self.problems.error(error, path)
        except OSError as error:
            self.problems.add(path, error.strerror or str(error), position=0, field=WHOLE_FILE)
        except Exception as error:
            self.problems.add(
                path,
                f"unexpected {type(error).__name__}: {error} (a lethe bug)",
                position=0,
                field=WHOLE_FILE,
            )

    # -- directories -----------------------------------------------------------
    def tree(self, root: str) -> None:
        ranges: dict[str, dict[str, PartitionRange]] = {}
        for directory, subdirs, names in os.walk(root, topdown=False):
            subdirs.sort()
            for name in subdirs:
                misplaced = misplaced_directory(_join(directory, name))
                if misplaced is not None:
                    self.checked += 1
                    self.problems.append(misplaced)
            infos = {name: classify(name, strict=True) for name in sorted(names)}
            if any(info.kind in _SEGMENT_KINDS for info in infos.values()) or any(
                info.kind is Kind.LEADER_EPOCH_CHECKPOINT for info in infos.values()
            ):
                found = self.partition(directory, infos)
                if found is not None:
                    parent = os.path.dirname(directory)
                    ranges.setdefault(parent, {})[os.path.basename(directory)] = found
            self.log_dir_files(directory, infos, ranges.get(directory, {}))

    def partition(self, directory: str, infos: dict[str, FileInfo]) -> PartitionRange | None:
        segments: dict[int, dict[Kind, str]] = {}
        for name, info in infos.items():
            path = _join(directory, name)
            if info.kind in _SEGMENT_KINDS and info.base_offset is not None:
                if info.transient:
                    self.fenced(path, self.file, path, info)
                else:
                    segments.setdefault(info.base_offset, {})[info.kind] = path
        summaries = self.segments(segments)
        log_end = _log_end(summaries)
        for base in sorted(segments):
            self.segment_files(base, segments, summaries, log_end)
        for name, info in infos.items():
            path = _join(directory, name)
            if info.kind is Kind.LEADER_EPOCH_CHECKPOINT:
                self.fenced(path, lambda p=path: verify_epoch_checkpoint(p, log_end, self.problems))
            elif info.kind is Kind.PARTITION_METADATA:
                self.fenced(
                    path,
                    lambda p=path: verify_properties_file(p, "partition.metadata", self.problems),
                )
        if not summaries or log_end is None:
            return None
        return PartitionRange(min(summaries), log_end)

    def segments(self, segments: dict[int, dict[Kind, str]]) -> dict[int, SegmentSummary]:
        summaries: dict[int, SegmentSummary] = {}
        bases = sorted(base for base, files in segments.items() if Kind.LOG in files)
        for base in bases:
            path = segments[base][Kind.LOG]
            self.fenced(path, self.scan_into, path, base, summaries)
        for base, following in itertools.pairwise(bases):
            summary = summaries.get(base)
            if (
                summary is not None
                and summary.last_offsets
                and summary.last_offsets[-1] >= following
            ):
                self.problems.add(
                    summary.path,
                    f"last offset {summary.last_offsets[-1]} reaches into the next segment, "
                    f"which starts at offset {following}",
                    position=summary.positions[-1],
                    field="lastOffsetDelta",
                )
        return summaries

    def scan_into(self, path: str, base: int, summaries: dict[int, SegmentSummary]) -> None:
        summaries[base] = self.scan_log(path, base)

    def scan_log(self, path: str, base: int | None) -> SegmentSummary:
        with mapped(path) as data, scan_progress(len(data), os.path.basename(path)) as progress:
            return verify_segment(
                data, path, base, self.problems, deep=self.options.deep, progress=progress
            )

    def segment_files(
        self,
        base: int,
        segments: dict[int, dict[Kind, str]],
        summaries: dict[int, SegmentSummary],
        log_end: int | None,
    ) -> None:
        files = segments[base]
        summary = summaries.get(base)
        later = [b for b in segments if b > base and Kind.LOG in segments[b]]
        next_base = min(later) if later else None
        for kind in (Kind.INDEX, Kind.TIME_INDEX, Kind.TXN_INDEX):
            path = files.get(kind)
            if path is None:
                continue
            if Kind.LOG not in files:
                self.problems.add(
                    path,
                    f"orphaned index: no {base:020d}.log in this directory (Kafka deletes it "
                    "at startup)",
                    position=0,
                    field="file name",
                )
            self.fenced(path, self.index, path, kind, base, summary, next_base)
        snapshot = files.get(Kind.SNAPSHOT)
        if snapshot is not None:
            self.fenced(snapshot, self.snapshot, snapshot, base, log_end)

    def index(
        self,
        path: str,
        kind: Kind,
        base: int,
        summary: SegmentSummary | None,
        next_base: int | None,
    ) -> None:
        data = read_small(path)
        if kind is Kind.INDEX:
            verify_offset_index(data, path, base, summary, self.problems)
        elif kind is Kind.TIME_INDEX:
            verify_time_index(data, path, base, summary, self.problems)
        else:
            verify_txn_index(data, path, base, next_base, self.problems)

    def snapshot(self, path: str, offset: int, log_end: int | None) -> None:
        snapshot = read_producer_snapshot(read_small(path), file=path)
        for i, entry in enumerate(snapshot.entries):
            if entry.last_offset >= offset:
                self.problems.add(
                    path,
                    f"producer {entry.producer_id}: last offset {entry.last_offset} is not below "
                    f"the snapshot offset {offset}",
                    position=10 + i * 46 + 14,
                    field="last_offset",
                )
        if log_end is not None and offset > log_end:
            self.problems.add(
                path,
                f"snapshot offset {offset} is beyond the log end offset {log_end} (Kafka deletes "
                "such snapshots when it loads the log)",
                position=0,
                field="file name",
            )

    def log_dir_files(
        self, directory: str, infos: dict[str, FileInfo], partitions: dict[str, PartitionRange]
    ) -> None:
        checkpoints = {}
        for name, info in infos.items():
            path = _join(directory, name)
            if info.kind is Kind.OFFSET_CHECKPOINT:
                self.checked += 1
                parsed = read_checked(path, self.problems)
                if parsed is not None:
                    checkpoints[name] = parsed
            elif info.kind is Kind.META_PROPERTIES:
                self.fenced(path, verify_properties_file, path, "meta.properties", self.problems)
            elif info.kind is Kind.CLEAN_SHUTDOWN:
                self.fenced(path, self.file, path, info)
        live = {name: r for name, r in partitions.items() if _is_live(name)}
        if checkpoints and live:
            check_offset_ranges(directory, checkpoints, live, self.problems)

    # -- single files ----------------------------------------------------------
    def single(self, path: str) -> None:
        info = classify(path)
        if info.kind is Kind.UNKNOWN:
            self.problems.add(
                path, "not a file lethe verify knows (by its name)", position=0, field="file name"
            )
            return
        self.fenced(path, lambda: self.file(path, info))

    def file(self, path: str, info: FileInfo) -> None:
        kind = info.kind
        base = info.base_offset
        if kind is Kind.LOG:
            self.scan_log(path, base)
        elif kind is Kind.KRAFT_SNAPSHOT:  # batches from offset 0, like a segment
            self.scan_log(path, 0)
        elif kind in (Kind.INDEX, Kind.TIME_INDEX):
            self.index(path, kind, base or 0, self.sibling_summary(path), None)
        elif kind is Kind.TXN_INDEX:
            self.index(path, kind, base or 0, None, None)
        elif kind is Kind.SNAPSHOT:
            self.snapshot(path, base or 0, None)
        elif kind is Kind.OFFSET_CHECKPOINT:
            read_checked(path, self.problems)
        elif kind is Kind.LEADER_EPOCH_CHECKPOINT:
            verify_epoch_checkpoint(path, None, self.problems)
        elif kind is Kind.CLEAN_SHUTDOWN:
            read_clean_shutdown(read_small(path), file=path)
        else:
            verify_properties_file(path, kind.value, self.problems)

    def sibling_summary(self, path: str) -> SegmentSummary | None:
        """The scan of ``X.log`` next to ``X.index``; its own problems are not reported."""
        stem = os.path.basename(path).split(".", 1)[0]
        log = os.path.join(os.path.dirname(path), stem + ".log")
        if not os.path.isfile(log):
            return None
        with mapped(log) as data:
            return verify_segment(data, log, classify(log).base_offset, Problems())


def _join(directory: str, name: str) -> str:
    """``dir/name`` without a leading ``./`` when the walk started at ``.``."""
    return os.path.normpath(os.path.join(directory, name))


def _is_live(name: str) -> bool:
    try:
        return parse_partition_dir_name(name).kind is PartitionDirKind.LIVE
    except FormatError:
        return False


def _log_end(summaries: dict[int, SegmentSummary]) -> int | None:
    """Last batch's offset + 1 in the newest segment, or its base if it is empty."""
    if not summaries:
        return None
    last = max(summaries)
    next_offset = summaries[last].next_offset
    return next_offset if next_offset is not None else last
