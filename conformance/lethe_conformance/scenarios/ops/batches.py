"""Expectations on record batches: the headers KIP-534's cleaner writes, on disk or fetched.

Theory of operation
-------------------
KIP-534 is visible in the v2 batch header, so a scenario states the batches
it expects, in order, and the runner decodes what it finds with lethe_formats
(``check_files``: every live segment of a partition, oldest first; ``fetch``:
the response's records blob). The list is exact: a missing or an extra batch
is a mismatch. Each expected batch compares only the fields it lists::

    byte  0  baseOffset  ........ base_offset          (int64 string)
         12  partitionLeaderEpoch partition_leader_epoch
         17  crc ................. crc                  (byte-for-byte copies keep it)
         21  attributes .......... attributes           (the whole int16), or the named bits:
                                   compression (bits 0-2), timestamp_type (bit 3),
                                   transactional (bit 4), control (bit 5),
                                   delete_horizon (bit 6, KIP-534)
         23  lastOffsetDelta ..... last_offset          (base + delta)
         27  baseTimestamp ....... base_timestamp       (the horizon when bit 6 is set)
                                   delete_horizon_ms    (baseTimestamp if bit 6, else null)
         35  maxTimestamp ........ max_timestamp
         43  producerId .......... producer_id
         51  producerEpoch ....... producer_epoch
         53  baseSequence ........ base_sequence
         57  recordsCount ........ count
             records ............. offsets              (each kept record's offset)
                                   marker, coordinator_epoch (a COMMIT/ABORT
                                   batch: its first record's key type and value)

plus ``segment`` (check_files only): the base offset of the segment file
holding the batch. Magic 0/1 entries have none of these fields; they are
listed as ``{"magic": 0 | 1}`` and compare only ``base_offset`` (their last
offset, as Kafka's dump prints) and ``magic``.

Values that depend on the target's clock are given as a reference to a value
an earlier step captured (``{"ref": "t0", "plus": "6000"}``, see
:meth:`RunContext.value`), so a virtual-clock scenario can state "the horizon
is the cleaning's start time plus delete.retention.ms" without knowing the
clock's absolute reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lethe_formats.errors import FormatError
from lethe_formats.model import DELETE_HORIZON_BIT, LegacyMessage, RecordBatch
from lethe_formats.records.control import decode_end_txn_marker

from lethe_conformance.scenarios.context import Expectations, RunContext

__all__ = ["FoundBatch", "judge_batches"]

_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
_INT64_FIELDS = (
    "base_offset",
    "last_offset",
    "base_timestamp",
    "max_timestamp",
    "producer_id",
    "coordinator_epoch",
    "segment",
)
_INT32_FIELDS = (
    "partition_leader_epoch",
    "crc",
    "attributes",
    "producer_epoch",
    "base_sequence",
    "count",
    "magic",
)
_FLAG_FIELDS = ("transactional", "control", "delete_horizon")


@dataclass(frozen=True, slots=True)
class FoundBatch:
    """One log entry as read from a segment (``segment`` set) or a Fetch response."""

    entry: RecordBatch | LegacyMessage
    segment: int | None = None


def judge_batches(
    ctx: RunContext,
    exp: Expectations,
    path: str,
    wanted: Sequence[Mapping[str, Any]],
    found: Sequence[FoundBatch],
) -> None:
    """Compare the expected batches with the found ones, position by position."""
    exp.equal(f"{path} (count of batches)", len(wanted), len(found))
    for index, (want, got) in enumerate(zip(wanted, found, strict=False)):
        _judge_one(ctx, exp, f"{path}[{index}]", want, _fields(got))


def _fields(found: FoundBatch) -> dict[str, Any]:
    """The comparable fields of one entry (see the module docstring)."""
    entry = found.entry
    if isinstance(entry, LegacyMessage):
        return {"base_offset": entry.offset, "magic": entry.magic, "segment": found.segment}
    header = entry.header
    return {
        "segment": found.segment,
        "base_offset": header.base_offset,
        "last_offset": header.last_offset,
        "partition_leader_epoch": header.partition_leader_epoch,
        "magic": header.magic,
        "crc": header.crc,
        "attributes": header.attributes,
        "compression": _CODECS[header.compression]
        if header.compression < len(_CODECS)
        else str(header.compression),
        "timestamp_type": "log_append_time"
        if header.timestamp_type.name == "LOG_APPEND_TIME"
        else "create_time",
        "transactional": header.is_transactional,
        "control": header.is_control,
        "delete_horizon": bool(header.attributes & DELETE_HORIZON_BIT),
        "delete_horizon_ms": header.delete_horizon_ms,
        "base_timestamp": header.base_timestamp,
        "max_timestamp": header.max_timestamp,
        "producer_id": header.producer_id,
        "producer_epoch": header.producer_epoch,
        "base_sequence": header.base_sequence,
        "count": header.records_count,
        "offsets": [entry.offset_of(record) for record in entry.records],
        **_marker_fields(entry),
    }


def _marker_fields(batch: RecordBatch) -> dict[str, Any]:
    """``marker`` (COMMIT/ABORT) and ``coordinator_epoch`` of a transaction marker batch:
    the coordinator epoch lives only in the marker record's value (KIP534-TXC-1)."""
    if not batch.header.is_control or not batch.records:
        return {}
    try:
        marker = decode_end_txn_marker(batch.records[0])
    except FormatError:  # another control type (LEADER_CHANGE) or a torn record
        return {}
    return {"marker": marker.control_type.name, "coordinator_epoch": marker.coordinator_epoch}


def _judge_one(
    ctx: RunContext,
    exp: Expectations,
    path: str,
    want: Mapping[str, Any],
    got: Mapping[str, Any],
) -> None:
    if "delete_horizon_ms" in want:  # first: it may capture the value base_timestamp refers to
        horizon = want["delete_horizon_ms"]
        if horizon is None:
            exp.equal(f"{path}.delete_horizon_ms", None, got.get("delete_horizon_ms"))
        else:
            ctx.judge_int(exp, f"{path}.delete_horizon_ms", horizon, got.get("delete_horizon_ms"))
    for field in _INT64_FIELDS:
        if field in want:
            ctx.judge_int(exp, f"{path}.{field}", want[field], got.get(field))
    for field in (*_INT32_FIELDS, *_FLAG_FIELDS, "compression", "timestamp_type", "marker"):
        if field in want:
            exp.equal(f"{path}.{field}", want[field], got.get(field))
    if "offsets" in want:
        exp.equal(f"{path}.offsets", [ctx.value(o) for o in want["offsets"]], got.get("offsets"))
