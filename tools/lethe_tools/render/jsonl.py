"""The JSON-lines renderer of ``lethe dump --json``: one object per line.

Theory of operation
-------------------
Same events as the text renderer, but every line of stdout is one JSON object
with a ``"type"`` member, so ``jq`` and friends can filter without parsing
kafka-dump-log's layout. Objects, in file order::

    {"type": "file", "path": P, "kind": "log", "base_offset": 0}
    {"type": "batch", "position": 0, "base_offset": 0, "last_offset": 5, ...,
     "records": [{"offset": 0, "timestamp": T, "key": {"utf8": "k"}, ...}]}
    {"type": "legacy_entry", "position": 0, "offset": 3, "magic": 1, ..., "records": [...]}
    {"type": "log_end", "path": P, "valid_bytes": N, "trailing_bytes": 0, "stop_error": null}
    {"type": "index_entry", "offset": O, "position": N}
    {"type": "time_index_entry", "timestamp": T, "offset": O}
    {"type": "aborted_txn", "version": 0, "producer_id": ..., ...}
    {"type": "producer_state", "producer_id": ..., ...}
    {"type": "checkpoint", "path": P, "kind": "offsets", "version": 0, "entries": [...]}
    {"type": "properties", "path": P, "values": {"version": "0", ...}}
    {"type": "unknown_file", "path": P}
    {"type": "non_consecutive_offsets", "path": ABS, "pairs": [[7, 9], ...]}   (found order)
    {"type": "index_mismatches" | "time_index_findings", "path": ABS, ...}

Encoding decisions:

* int64 values are JSON numbers (Python's ``json`` writes them exactly; a
  JavaScript reader beyond 2**53 should use a big-number-aware parser);
* bytes are ``{"utf8": "..."}`` when they are valid UTF-8, else
  ``{"hex": "..."}`` (lowercase), so they round-trip exactly; a null key or
  value is ``null`` (the same convention as the golden ``case.json`` files,
  made explicit with ``utf8``);
* ``records`` appears only with ``--deep-iteration``/``--print-data-log``, and
  ``key``/``value``/header values only with ``--print-data-log``, mirroring
  the text output;
* errors (decoding failures) go to stderr as located text lines, keeping
  stdout valid JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from lethe_formats.errors import FormatError
from lethe_formats.model import AbortedTxn, BatchHeader, LegacyMessage, Record
from lethe_formats.records.scan import ScannedEntry
from lethe_formats.storage.checkpoint import LeaderEpochCheckpoint, OffsetCheckpoint
from lethe_formats.storage.producer_snapshot import ProducerSnapshotEntry

from lethe_tools.inspect.dump import DumpOptions, DumpReport
from lethe_tools.inspect.kinds import FileInfo
from lethe_tools.inspect.log_walk import LogWalk
from lethe_tools.inspect.problems import Problem
from lethe_tools.render.checkpoint import checkpoint_json
from lethe_tools.render.dump_text import control_suffix
from lethe_tools.render.output import LineSink
from lethe_tools.render.text import codec_name, legacy_timestamp_type

__all__ = ["JsonDumpRenderer", "json_bytes"]

_INT_MAX = 0x7FFFFFFF


def json_bytes(data: bytes | None) -> dict[str, str] | None:
    """``{"utf8": text}`` or ``{"hex": digits}``; None stays None."""
    if data is None:
        return None
    try:
        return {"utf8": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"hex": data.hex()}


def _dumps(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class JsonDumpRenderer:
    """One JSON object per line on ``out``; errors as text on ``err``."""

    def __init__(self, options: DumpOptions, out: TextIO, err: TextIO) -> None:
        self._print_data = options.print_data
        self._out = LineSink(out)
        self._err = LineSink(err)
        self._path = ""

    def _emit(self, value: dict[str, Any]) -> None:
        self._out.line(_dumps(value))

    def file_begin(self, path: str, info: FileInfo) -> None:
        self._path = path
        self._emit(
            {"type": "file", "path": path, "kind": info.kind.value, "base_offset": info.base_offset}
        )

    def file_error(self, path: str, message: str) -> None:
        del path
        self._out.flush()
        self._err.line(message)
        self._err.flush()

    def unknown(self, path: str) -> None:
        self._emit({"type": "unknown_file", "path": path})

    def log_begin(self, path: str, base_offset: int | None) -> None:
        del path, base_offset  # already in the "file" object

    def snapshot_begin(self, path: str, snapshot_id: tuple[int, int] | None) -> None:
        del path, snapshot_id  # the name is in the "file" object

    def on_batch(
        self, entry: ScannedEntry, header: BatchHeader, records: tuple[Record, ...] | None
    ) -> None:
        attributes = header.attributes
        value: dict[str, Any] = {
            "type": "batch",
            "position": entry.position,
            "base_offset": header.base_offset,
            "last_offset": header.last_offset,
            "count": header.records_count,
            "base_sequence": header.base_sequence,
            "last_sequence": header.last_sequence,
            "producer_id": header.producer_id,
            "producer_epoch": header.producer_epoch,
            "partition_leader_epoch": header.partition_leader_epoch,
            "is_transactional": bool(attributes & 0x10),
            "is_control": bool(attributes & 0x20),
            "delete_horizon_ms": header.base_timestamp if attributes & 0x40 else None,
            "timestamp_type": "LogAppendTime" if attributes & 0x08 else "CreateTime",
            "base_timestamp": header.base_timestamp,
            "max_timestamp": header.max_timestamp,
            "size": header.batch_length + 12,
            "magic": header.magic,
            "compression": codec_name(attributes),
            "attributes": attributes,
            "crc": header.crc,
            "crc_valid": entry.crc_valid,
        }
        if records is not None:
            value["records"] = [self._record(header, record) for record in records]
        self._emit(value)

    def _record(self, header: BatchHeader, record: Record) -> dict[str, Any]:
        attributes = header.attributes
        delta = record.offset_delta
        sequence = -1
        if header.base_sequence >= 0:
            sequence = header.base_sequence + delta
            sequence -= (_INT_MAX + 1) if sequence > _INT_MAX else 0
        value: dict[str, Any] = {
            "offset": header.base_offset + delta,
            "timestamp": header.max_timestamp
            if attributes & 0x08
            else header.base_timestamp + record.timestamp_delta,
            "attributes": record.attributes,
            "key_size": -1 if record.key is None else len(record.key),
            "value_size": -1 if record.value is None else len(record.value),
            "sequence": sequence,
            "header_keys": [h.key.decode("utf-8", "replace") for h in record.headers],
        }
        if attributes & 0x20:
            try:
                value["control"] = control_suffix(record)
            except FormatError as error:
                self.on_error(error)
                value["control"] = None
        elif self._print_data:
            value["key"] = json_bytes(record.key)
            value["value"] = json_bytes(record.value)
            value["headers"] = [
                {"key": json_bytes(h.key), "value": json_bytes(h.value)} for h in record.headers
            ]
        return value

    def on_legacy(
        self,
        entry: ScannedEntry,
        message: LegacyMessage,
        inner: tuple[LegacyMessage, ...] | None,
        inner_valid: Sequence[bool] | None,
    ) -> None:
        value = self._legacy(message)
        value.update(
            {
                "type": "legacy_entry",
                "position": entry.position,
                "size": message.message_size + 12,
                "crc_valid": entry.crc_valid,
            }
        )
        if inner is not None and inner_valid is not None:
            override = (
                message.timestamp if message.magic == 1 and message.attributes & 0x08 else None
            )
            records = []
            for item, valid in zip(inner, inner_valid, strict=True):
                record = self._legacy(item)
                if override is not None:
                    record["timestamp"] = override
                record["crc_valid"] = valid
                records.append(record)
            value["records"] = records
        self._emit(value)

    def _legacy(self, message: LegacyMessage) -> dict[str, Any]:
        value: dict[str, Any] = {
            "offset": message.offset,
            "magic": message.magic,
            "attributes": message.attributes,
            "compression": codec_name(message.attributes),
            "timestamp_type": legacy_timestamp_type(message),
            "timestamp": -1 if message.timestamp is None else message.timestamp,
            "crc": message.crc,
            "key_size": -1 if message.key is None else len(message.key),
            "value_size": -1 if message.value is None else len(message.value),
        }
        if self._print_data and not message.attributes & 0x07:
            value["key"] = json_bytes(message.key)
            value["value"] = json_bytes(message.value)
        return value

    def on_error(self, error: FormatError) -> None:
        self._out.flush()
        self._err.line(str(Problem.from_error(error, error.file or self._path)))

    def log_end(self, path: str, walk: LogWalk, limited: bool) -> None:
        if walk.stop_error is not None and not walk.torn_tail:
            self.on_error(walk.stop_error)
        self._emit(
            {
                "type": "log_end",
                "path": path,
                "valid_bytes": walk.end_position,
                "trailing_bytes": walk.trailing_bytes,
                "limited": limited,
                "stop_error": None if walk.stop_error is None else str(walk.stop_error),
            }
        )

    def offset_index(self, path: str, rows: Sequence[tuple[int, int]]) -> None:
        del path
        self._out.lines(
            [_dumps({"type": "index_entry", "offset": o, "position": p}) for o, p in rows]
        )

    def index_sane(self, path: str) -> None:
        self._out.lines([_dumps({"type": "index_sanity", "file": path, "passed": True})])

    def time_index(self, path: str, rows: Sequence[tuple[int, int]]) -> None:
        del path
        self._out.lines(
            [_dumps({"type": "time_index_entry", "timestamp": t, "offset": o}) for t, o in rows]
        )

    def txn_index(self, path: str, entries: Sequence[AbortedTxn]) -> None:
        del path
        self._out.lines(
            [
                _dumps(
                    {
                        "type": "aborted_txn",
                        "version": t.version,
                        "producer_id": t.producer_id,
                        "first_offset": t.first_offset,
                        "last_offset": t.last_offset,
                        "last_stable_offset": t.last_stable_offset,
                    }
                )
                for t in entries
            ]
        )

    def producer_snapshot(self, path: str, entries: Sequence[ProducerSnapshotEntry]) -> None:
        del path
        self._out.lines([_dumps(_producer(entry)) for entry in entries])

    def offset_checkpoint(self, path: str, checkpoint: OffsetCheckpoint) -> None:
        self._emit(checkpoint_json(path, checkpoint))

    def epoch_checkpoint(self, path: str, checkpoint: LeaderEpochCheckpoint) -> None:
        self._emit(checkpoint_json(path, checkpoint))

    def properties(self, path: str, items: Sequence[tuple[str, str]]) -> None:
        self._emit({"type": "properties", "path": path, "values": dict(items)})

    def finish(self, report: DumpReport) -> None:
        for path, mismatches in report.index_mismatches.items():
            pairs = [list(pair) for pair in reversed(mismatches)]
            self._emit({"type": "index_mismatches", "path": path, "pairs": pairs})
        for path, findings in report.time_index.items():
            self._emit(
                {
                    "type": "time_index_findings",
                    "path": path,
                    "timestamp_mismatches": [list(p) for p in findings.mismatches],
                    "out_of_order": [list(p) for p in findings.out_of_order],
                    "offsets_not_found": [list(p) for p in findings.not_found],
                }
            )
        for path, gaps in report.gaps.items():
            self._emit(
                {"type": "non_consecutive_offsets", "path": path, "pairs": [list(p) for p in gaps]}
            )
        self._out.flush()
        self._err.flush()


def _producer(entry: ProducerSnapshotEntry) -> dict[str, Any]:
    value: dict[str, Any] = {
        "type": "producer_state",
        "producer_id": entry.producer_id,
        "producer_epoch": entry.producer_epoch,
        "coordinator_epoch": entry.coordinator_epoch,
        "current_txn_first_offset": entry.ongoing_txn_first_offset,
        "last_timestamp": entry.timestamp,
    }
    if entry.has_batch_metadata:
        value.update(
            {
                "first_sequence": entry.first_sequence,
                "last_sequence": entry.last_sequence,
                "last_offset": entry.last_offset,
                "offset_delta": entry.offset_delta,
            }
        )
    return value
