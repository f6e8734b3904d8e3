"""The kafka-dump-log text renderer of ``lethe dump``.

Theory of operation
-------------------
:class:`TextDumpRenderer` receives the events of
:func:`lethe_tools.inspect.dump.dump_files` and writes what
``bin/kafka-dump-log.sh`` would (Kafka 4.0, ``DumpLogSegments``): per file
``Dumping <path>``, then the kind's lines (layouts in :mod:`.text`). The
stderr side follows Kafka too: ``Ignoring unknown file``, and after the last
file the collected findings in Kafka's order and words::

    Mismatches in :<abs path>                 (.index entry vs. the batch at its position)
      Index offset: X, log offset: Y
    Found timestamp mismatch in :<abs path>   (.timeindex entry vs. the batch's records)
      Index timestamp: T, log timestamp: U
    Found out of order timestamp in :<abs path>
      Index timestamp: T, Previously indexed timestamp: U
    The following indexed offsets are not found in the log.
    Indexed offset: X, found log offset: Y
    Non-consecutive offsets in <abs path>     (record offsets, deep iteration)
      X is followed by Y                      (newest first, as Kafka prepends)

Files kafka-dump-log does not dump get stable ``key: value`` lines of lethe's
own: ``version: 0``, ``entries: 2``, ``topic: T partition: P offset: O``
(offset checkpoints), ``epoch: E startOffset: O`` (leader epochs), and one
``key: value`` line per property (``partition.metadata``,
``meta.properties``); an empty checkpoint prints ``<path> is empty.`` as an
empty index does. Decoding failures go to stderr as one located line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TextIO

from lethe_formats.coordinator.cluster_metadata import decode_control_record
from lethe_formats.errors import FormatError, printable
from lethe_formats.model import AbortedTxn, BatchHeader, ControlType, LegacyMessage, Record
from lethe_formats.records.control import control_type, decode_end_txn_marker
from lethe_formats.records.scan import ScannedEntry
from lethe_formats.storage.checkpoint import LeaderEpochCheckpoint, OffsetCheckpoint
from lethe_formats.storage.producer_snapshot import ProducerSnapshotEntry, kafka_dump_line

from lethe_tools.inspect.dump import DumpOptions, DumpReport
from lethe_tools.inspect.kinds import FileInfo
from lethe_tools.inspect.log_walk import LogWalk
from lethe_tools.inspect.problems import Problem
from lethe_tools.render.checkpoint import checkpoint_lines
from lethe_tools.render.kafka_json import json_text, message_json
from lethe_tools.render.output import LineSink
from lethe_tools.render.text import (
    legacy_entry_line,
    legacy_record_lines,
    record_lines,
    v2_batch_line,
)

__all__ = ["TextDumpRenderer", "control_suffix"]


def control_suffix(record: Record) -> str:
    """What kafka-dump-log appends to a control record's line (without the space).

    COMMIT/ABORT markers print ``endTxnMarker: TYPE coordinatorEpoch: N``; any
    other type ``controlType: NAME(id)`` (UNKNOWN for ids Kafka does not know).
    The KRaft snapshot header/footer, kraft.version and voters records print as
    ``SnapshotHeader {json}`` etc., as Kafka renders them. Raises FormatError for
    a bad key/value.
    """
    kind = control_type(record)
    if kind in (ControlType.ABORT, ControlType.COMMIT):
        marker = decode_end_txn_marker(record)
        return (
            f"endTxnMarker: {marker.control_type.name} coordinatorEpoch: {marker.coordinator_epoch}"
        )
    kraft = decode_control_record(int(kind), record.value)
    if kraft is not None:  # KRaft's snapshot and voter records print as Kafka's JSON
        name, message = kraft
        return f"{name} {json_text(message_json(message, message.version, True))}"
    if isinstance(kind, ControlType):
        return f"controlType: {kind.name}({kind.value})"
    return f"controlType: UNKNOWN({kind})"


class TextDumpRenderer:
    """kafka-dump-log's layout on ``out`` (stdout) and ``err`` (stderr)."""

    def __init__(self, options: DumpOptions, out: TextIO, err: TextIO) -> None:
        self._print_data = options.print_data
        self._parser = options.parser
        self._skip_metadata = options.skip_metadata
        self._out = LineSink(out)
        self._err = LineSink(err)
        self._path = ""

    # -- files -------------------------------------------------------------
    def file_begin(self, path: str, info: FileInfo) -> None:
        del info
        self._path = path
        self._out.line(f"Dumping {printable(path)}")

    def file_error(self, path: str, message: str) -> None:
        del path
        self._out.flush()
        self._err.line(message)
        self._err.flush()

    def unknown(self, path: str) -> None:
        self._out.flush()
        self._err.line(f"Ignoring unknown file {printable(path)}")

    # -- .log ----------------------------------------------------------------
    def log_begin(self, path: str, base_offset: int | None) -> None:
        if base_offset is None:
            problem = Problem(path, "no base offset before the first '.'", 0, "file name")
            self.file_error(path, str(problem))
            return
        self._out.line(f"Log starting offset: {base_offset}")

    def snapshot_begin(self, path: str, snapshot_id: tuple[int, int] | None) -> None:
        del path
        if snapshot_id is None:
            self._out.line("KRaft bootstrap snapshot")
        else:
            self._out.line(f"Snapshot end offset: {snapshot_id[0]}, epoch: {snapshot_id[1]}")

    def on_batch(
        self, entry: ScannedEntry, header: BatchHeader, records: tuple[Record, ...] | None
    ) -> None:
        lines = [v2_batch_line(entry.position, header, entry.crc_valid)]
        if records is not None:
            suffixes = self._control_suffixes(records) if header.attributes & 0x20 else None
            record_lines(
                header,
                records,
                self._print_data,
                suffixes,
                lines,
                parser=self._parser,
                skip_metadata=self._skip_metadata,
            )
        self._out.lines(lines)

    def _control_suffixes(self, records: Sequence[Record]) -> list[str]:
        suffixes = []
        for record in records:
            try:
                suffixes.append(control_suffix(record))
            except FormatError as error:
                self.on_error(error)
                suffixes.append("")
        return suffixes

    def on_legacy(
        self,
        entry: ScannedEntry,
        message: LegacyMessage,
        inner: tuple[LegacyMessage, ...] | None,
        inner_valid: Sequence[bool] | None,
    ) -> None:
        lines = [legacy_entry_line(entry.position, message, entry.crc_valid)]
        if inner is not None and inner_valid is not None:
            legacy_record_lines(
                message,
                inner,
                inner_valid,
                self._print_data,
                lines,
                parser=self._parser,
                skip_metadata=self._skip_metadata,
            )
        self._out.lines(lines)

    def on_error(self, error: FormatError) -> None:
        self._out.flush()
        self._err.line(str(Problem.from_error(error, error.file or self._path)))

    def log_end(self, path: str, walk: LogWalk, limited: bool) -> None:
        if walk.stop_error is not None and not walk.torn_tail:
            self.on_error(walk.stop_error)
        if walk.trailing_bytes > 0 and not limited:
            name = os.path.basename(path)
            self._out.line(
                f"Found {walk.trailing_bytes} invalid bytes at the end of {printable(name)}"
            )

    # -- indexes and snapshots -------------------------------------------------
    def offset_index(self, path: str, rows: Sequence[tuple[int, int]]) -> None:
        if not rows:
            self._out.line(f"{printable(path)} is empty.")
            return
        self._out.lines([f"offset: {offset} position: {position}" for offset, position in rows])

    def index_sane(self, path: str) -> None:
        self._out.line(f"{printable(path)} passed sanity check.")

    def time_index(self, path: str, rows: Sequence[tuple[int, int]]) -> None:
        del path  # kafka-dump-log prints nothing at all for an empty time index
        self._out.lines([f"timestamp: {ts} offset: {offset}" for ts, offset in rows])

    def txn_index(self, path: str, entries: Sequence[AbortedTxn]) -> None:
        del path
        self._out.lines(
            [
                f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
                f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}"
                for t in entries
            ]
        )

    def producer_snapshot(self, path: str, entries: Sequence[ProducerSnapshotEntry]) -> None:
        del path
        self._out.lines([kafka_dump_line(entry) for entry in entries])

    # -- lethe's own layouts ------------------------------------------------------
    def offset_checkpoint(self, path: str, checkpoint: OffsetCheckpoint) -> None:
        self._out.lines(checkpoint_lines(path, checkpoint))

    def epoch_checkpoint(self, path: str, checkpoint: LeaderEpochCheckpoint) -> None:
        self._out.lines(checkpoint_lines(path, checkpoint))

    def properties(self, path: str, items: Sequence[tuple[str, str]]) -> None:
        del path
        self._out.lines([f"{printable(key)}: {printable(value)}" for key, value in items])

    # -- end -------------------------------------------------------------------
    def finish(self, report: DumpReport) -> None:
        self._out.flush()
        lines: list[str] = []
        for path, mismatches in report.index_mismatches.items():
            lines.append(f"Mismatches in :{printable(path)}")
            lines += [f"  Index offset: {a}, log offset: {b}" for a, b in mismatches]
        for path, findings in report.time_index.items():
            if findings.mismatches:
                lines.append(f"Found timestamp mismatch in :{printable(path)}")
                lines += [
                    f"  Index timestamp: {a}, log timestamp: {b}" for a, b in findings.mismatches
                ]
        for path, findings in report.time_index.items():
            if findings.out_of_order:
                lines.append(f"Found out of order timestamp in :{printable(path)}")
                lines += [
                    f"  Index timestamp: {a}, Previously indexed timestamp: {b}"
                    for a, b in findings.out_of_order
                ]
        for findings in report.time_index.values():
            if findings.not_found:
                lines.append("The following indexed offsets are not found in the log.")
                lines += [
                    f"Indexed offset: {a}, found log offset: {b}" for a, b in findings.not_found
                ]
        for path, gaps in report.gaps.items():
            lines.append(f"Non-consecutive offsets in {printable(path)}")
            lines += [f"  {a} is followed by {b}" for a, b in reversed(gaps)]
        self._err.lines(lines)
        self._err.flush()
