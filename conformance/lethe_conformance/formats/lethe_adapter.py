"""lethe's own decoders as a format-conformance adapter (in-process).

Theory of operation
-------------------
:class:`LetheAdapter` answers a case request with lethe_formats' public
decoders, one per kind:

==================  ==========================================================
kind                decoder
==================  ==========================================================
record-batch        ``records.decode_batch`` (the input must be one batch)
log-segment         ``records.decode_log``
record              ``records.record.RecordSchema`` + the batch context
control-record      the record, then ``decode_control_key`` /
                    ``decode_end_txn_marker``
offset-index        ``storage.index.read_offset_index``; validity from the
time-index          ``check_*_index`` problems Kafka's sanityCheck raises
txn-index           ``storage.txn_index.read_txn_index``
checkpoint          ``storage.checkpoint.read_offset_checkpoint`` /
                    ``read_leader_epoch_checkpoint``
partition-metadata  ``storage.partition_metadata.read_partition_metadata``
producer-snapshot   ``storage.producer_snapshot.read_producer_snapshot``
==================  ==========================================================

Values are converted by :mod:`.lethe_values`; a :class:`FormatError` becomes
a rejection whose id :mod:`.lethe_errors` derives from the error's class,
field and wording. This module and those two are the only ones in the kit
that import ``lethe_formats``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from construct import ConstructError
from lethe_formats.errors import CorruptRecordError, FormatError
from lethe_formats.model import (
    TIMESTAMP_TYPE_BIT,
    BatchHeader,
    ControlType,
    Record,
    RecordBatch,
)
from lethe_formats.primitives import Window
from lethe_formats.records import (
    decode_batch,
    decode_control_key,
    decode_end_txn_marker,
    decode_log,
)
from lethe_formats.records.record import RecordSchema, record_from_container
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
from lethe_formats.storage.txn_index import read_txn_index

from lethe_conformance.formats.adapters import AdapterResult, Decoded, Rejected
from lethe_conformance.formats.lethe_errors import error_id, index_problem_id
from lethe_conformance.formats.lethe_values import (
    batch_value,
    checkpoint_value,
    legacy_value,
    offset_index_value,
    partition_metadata_value,
    record_value,
    snapshot_value,
    time_index_value,
    txn_index_value,
)

__all__ = ["IndexSanityError", "LetheAdapter", "decode_request"]


class IndexSanityError(Exception):
    """An index file that fails Kafka's sanityCheck (lethe reports it as a problem list)."""

    def __init__(self, problem: IndexProblem, error: str) -> None:
        super().__init__(problem.message)
        self.problem = problem
        self.error = error


def _one_record(data: bytes) -> Record:
    """The single record that is the whole of ``data``."""
    stream = Window(data, 0)
    try:
        parsed = RecordSchema.parse_stream(stream)
    except ConstructError as exc:
        raise CorruptRecordError(f"undecodable record: {exc}", position=0, field="record") from None
    _check_consumed(data, stream.tell(), "record")
    return record_from_container(parsed)


def _check_consumed(data: bytes, end: int, what: str) -> None:
    if end != len(data):
        raise CorruptRecordError(
            f"{len(data) - end} bytes after the {what}", position=end, field="trailing bytes"
        )


def _record(data: bytes, context: Mapping[str, Any]) -> dict[str, Any]:
    record = _one_record(data)
    log_append = context["timestampType"] == "LogAppendTime"
    header = BatchHeader(
        base_offset=int(context["baseOffset"]),
        batch_length=0,
        partition_leader_epoch=-1,
        magic=2,
        crc=0,
        attributes=TIMESTAMP_TYPE_BIT if log_append else 0,
        last_offset_delta=0,
        base_timestamp=int(context["baseTimestamp"]),
        max_timestamp=int(context["maxTimestamp"]),
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=int(context["baseSequence"]),
        records_count=1,
    )
    batch = RecordBatch(header, (record,))
    return record_value(record) | {
        "offset": str(batch.offset_of(record)),
        "timestamp": str(batch.timestamp_of(record)),
        "sequence": batch.sequence_of(record),
    }


def _control(data: bytes) -> dict[str, Any]:
    record = _one_record(data)
    version, kind = decode_control_key(record.key)
    marker = None
    if kind in (ControlType.COMMIT, ControlType.ABORT):
        decoded = decode_end_txn_marker(record)
        marker = {"version": decoded.value_version, "coordinatorEpoch": decoded.coordinator_epoch}
    return {
        "keyVersion": version,
        "type": int(kind),
        "typeName": kind.name if isinstance(kind, ControlType) else "UNKNOWN",
        "endTxnMarker": marker,
    }


def _batch(data: bytes) -> dict[str, Any]:
    batch = decode_batch(data)
    _check_consumed(data, batch.header.size_in_bytes, "batch")
    return batch_value(batch)


def _segment(data: bytes) -> dict[str, Any]:
    entries = decode_log(data)
    return {
        "entries": [
            batch_value(e) if isinstance(e, RecordBatch) else legacy_value(e) for e in entries
        ]
    }


def _sane(problems: list[IndexProblem]) -> None:
    kafka = [problem for problem in problems if problem.kafka_check]
    if kafka:
        raise IndexSanityError(kafka[0], index_problem_id(kafka[0]))


def _offset_index(data: bytes) -> dict[str, Any]:
    _sane(check_offset_index(data))
    return offset_index_value(read_offset_index(data))


def _time_index(data: bytes) -> dict[str, Any]:
    _sane(check_time_index(data))
    return time_index_value(read_time_index(data))


def _checkpoint(text: str, context: Mapping[str, Any]) -> dict[str, Any]:
    if context["format"] == "offset":
        return checkpoint_value(read_offset_checkpoint(text))
    return checkpoint_value(read_leader_epoch_checkpoint(text))


_BINARY: dict[str, Callable[[bytes], dict[str, Any]]] = {
    "record-batch": _batch,
    "log-segment": _segment,
    "control-record": _control,
    "offset-index": _offset_index,
    "time-index": _time_index,
    "txn-index": lambda data: txn_index_value(read_txn_index(data)),
    "producer-snapshot": lambda data: snapshot_value(read_producer_snapshot(data)),
}


def decode_request(request: Mapping[str, Any]) -> AdapterResult:
    """Decode one request with lethe_formats; rejections carry the suite's error ids."""
    kind = request["kind"]
    source = request["input"]
    context = request.get("context") or {}
    try:
        if kind == "checkpoint":
            value = _checkpoint(source["text"], context)
        elif kind == "partition-metadata":
            value = partition_metadata_value(read_partition_metadata(source["text"]))
        elif kind == "record":
            value = _record(bytes.fromhex(source["hex"]), context)
        else:
            value = _BINARY[kind](bytes.fromhex(source["hex"]))
    except IndexSanityError as rejected:
        return Rejected(rejected.error, rejected.problem.position, None, rejected.problem.message)
    except FormatError as error:
        text_kind = kind in ("checkpoint", "partition-metadata")
        return Rejected(
            error_id(kind, error),
            None if text_kind else error.position,
            error.line if text_kind else None,
            str(error),
        )
    return Decoded(value)


class LetheAdapter:
    """In-process adapter over lethe_formats."""

    name = "lethe_formats (in-process)"

    def decode(self, request: Mapping[str, Any]) -> AdapterResult:
        return decode_request(request)
