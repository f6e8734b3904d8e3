"""Batch-level rules a JSON Schema cannot express, and the resolution of defaults.

What each magic can carry (kafka-facts 3.1-3.4), enforced here so that a spec
never asks the builders for something Kafka could not have written:

=====================  =========  =========  ==============================
feature                v0         v1         v2
=====================  =========  =========  ==============================
record timestamps      none       required   required
headers                no         no         yes
zstd                   no         no         yes
snappy-xerial, -raw    yes        yes        yes
LogAppendTime          no         yes        yes
producer id/epoch/seq  no         no         yes
transactions/control   no         no         yes
delete horizon         no         no         yes
offset deltas (gaps)   no         no         yes
empty batch            no         no         yes
KIP-87 tombstone bit   no         no         yes (null value only)
=====================  =========  =========  ==============================
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, NoReturn

from lethe_formats.model import ControlType, TimestampType

from lethe_tools.fixturegen.spec import (
    DEFAULT_PARTITION_LEADER_EPOCH,
    BatchSpec,
    ControlSpec,
    RecordData,
    SpecError,
)

__all__ = ["Context", "check_compacted_keys", "resolve_batch"]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_V2_ONLY = (
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "partition_leader_epoch",
    "transactional",
    "control",
    "delete_horizon_ms",
    "offset_deltas",
    "last_offset_delta",
    "max_timestamp",
)


class Context:
    """Carries the file name so every rule can raise a fully located SpecError."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, message: str, path: str) -> NoReturn:
        raise SpecError(message, file=self.file, path=path)

    def int64(self, value: object, path: str) -> int:
        """An int64 given as a decimal string or a JSON integer (schema-checked shape)."""
        number = int(value) if isinstance(value, str | int) else None
        if number is None or not _INT64_MIN <= number <= _INT64_MAX:
            self.fail(f"{value!r} is not an int64", path)
        return number

    def bytes_value(self, value: object, path: str) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, str):
            try:
                return value.encode("utf-8")
            except UnicodeEncodeError:
                self.fail('string is not valid UTF-8 (lone surrogate); use {"hex": ...}', path)
        assert isinstance(value, Mapping)
        return bytes.fromhex(value["hex"])


def resolve_batch(ctx: Context, node: Mapping[str, Any], path: str, next_offset: int) -> BatchSpec:
    """Check one batch node and resolve its defaults; ``next_offset`` is the log end so far."""
    magic = node.get("magic", 2)
    _check_magic_features(ctx, node, path, magic)
    base = (
        ctx.int64(node["base_offset"], f"{path}.base_offset")
        if "base_offset" in node
        else next_offset
    )
    if base < next_offset:
        ctx.fail(
            f"base_offset {base} is below the previous batch's next offset {next_offset}", path
        )
    control = _control(ctx, node, path)
    records = tuple(
        _record(ctx, r, f"{path}.records[{i}]", magic)
        for i, r in enumerate(node.get("records", ()))
    )
    deltas = _offset_deltas(ctx, node, path, len(records) if control is None else 1)
    last_delta = node.get("last_offset_delta", deltas[-1] if deltas else 0)
    if deltas and last_delta < deltas[-1]:
        ctx.fail(
            f"last_offset_delta {last_delta} is below the last record's delta {deltas[-1]}",
            f"{path}.last_offset_delta",
        )
    timestamp_type = TimestampType.CREATE_TIME
    if node.get("timestamp_type") == "LogAppendTime":
        timestamp_type = TimestampType.LOG_APPEND_TIME
    append_time = _log_append_time(ctx, node, path, timestamp_type)
    roll = node.get("roll", False)
    roll_base = (
        ctx.int64(roll["base_offset"], f"{path}.roll.base_offset")
        if isinstance(roll, Mapping)
        else None
    )
    if roll_base is not None and not next_offset <= roll_base <= base:
        ctx.fail(
            f"roll base_offset must lie in [{next_offset}, {base}]", f"{path}.roll.base_offset"
        )
    max_ts = _max_timestamp(ctx, node, path, records, control)
    if magic == 0 and timestamp_type is TimestampType.CREATE_TIME and "timestamp_type" not in node:
        timestamp_type = TimestampType.NO_TIMESTAMP_TYPE
    return BatchSpec(
        path=path,
        magic=magic,
        base_offset=base,
        codec=node.get("codec", "none"),
        timestamp_type=timestamp_type,
        log_append_time=append_time,
        producer_id=ctx.int64(node.get("producer_id", -1), f"{path}.producer_id"),
        producer_epoch=node.get("producer_epoch", -1),
        base_sequence=node.get("base_sequence", -1),
        partition_leader_epoch=node.get("partition_leader_epoch", DEFAULT_PARTITION_LEADER_EPOCH),
        transactional=node.get("transactional", control is not None),
        control=control,
        delete_horizon_ms=(
            ctx.int64(node["delete_horizon_ms"], f"{path}.delete_horizon_ms")
            if "delete_horizon_ms" in node
            else None
        ),
        offset_deltas=deltas,
        last_offset_delta=last_delta,
        max_timestamp=max_ts,
        roll=bool(roll),
        roll_base_offset=roll_base,
        records=records,
    )


def _check_magic_features(ctx: Context, node: Mapping[str, Any], path: str, magic: int) -> None:
    if magic == 2:
        return
    for key in _V2_ONLY:
        if key in node:
            ctx.fail(f"{key} needs magic 2 (this batch is magic {magic})", f"{path}.{key}")
    if node.get("codec") == "zstd":
        ctx.fail(f"zstd needs magic 2 (this batch is magic {magic})", f"{path}.codec")
    if magic == 0 and "timestamp_type" in node:
        ctx.fail("magic 0 has no timestamp type", f"{path}.timestamp_type")
    if not node.get("records"):
        ctx.fail(f"a magic {magic} message set needs at least one record", f"{path}.records")


def _control(ctx: Context, node: Mapping[str, Any], path: str) -> ControlSpec | None:
    marker = node.get("control")
    if marker is None:
        if "records" not in node:
            ctx.fail("a batch needs records (or control for a transaction marker)", path)
        return None
    if "records" in node:
        ctx.fail("a control batch holds only its marker; remove records", f"{path}.records")
    if node.get("codec", "none") != "none":
        ctx.fail("control batches are never compressed", f"{path}.codec")
    if node.get("transactional") is False:
        ctx.fail("an end-transaction marker batch is transactional", f"{path}.transactional")
    if ctx.int64(node.get("producer_id", -1), f"{path}.producer_id") < 0:
        ctx.fail("a transaction marker needs the transaction's producer_id", f"{path}.producer_id")
    return ControlSpec(
        control_type=ControlType[marker["type"]],
        coordinator_epoch=marker.get("coordinator_epoch", 0),
        timestamp=ctx.int64(marker["timestamp"], f"{path}.control.timestamp"),
    )


def _record(ctx: Context, node: Mapping[str, Any], path: str, magic: int) -> RecordData:
    headers = node.get("headers", [])
    if magic < 2 and headers:
        ctx.fail(f"headers need magic 2 (this batch is magic {magic})", f"{path}.headers")
    if magic == 0 and "timestamp" in node:
        ctx.fail("magic 0 records have no timestamp", f"{path}.timestamp")
    if magic > 0 and "timestamp" not in node:
        ctx.fail(f"magic {magic} records need a timestamp (fixtures never read the clock)", path)
    value = ctx.bytes_value(node.get("value"), f"{path}.value")
    kip87 = node.get("kip87_tombstone", False)
    if kip87 and (magic < 2 or value is not None):
        ctx.fail("kip87_tombstone needs magic 2 and a null value", f"{path}.kip87_tombstone")
    return RecordData(
        key=ctx.bytes_value(node.get("key"), f"{path}.key"),
        value=value,
        headers=tuple(
            (
                h["key"].encode("utf-8"),
                ctx.bytes_value(h.get("value"), f"{path}.headers[{i}].value"),
            )
            for i, h in enumerate(headers)
        ),
        timestamp=ctx.int64(node["timestamp"], f"{path}.timestamp")
        if "timestamp" in node
        else None,
        kip87_tombstone=kip87,
        path=path,
    )


def _offset_deltas(ctx: Context, node: Mapping[str, Any], path: str, count: int) -> tuple[int, ...]:
    if "offset_deltas" not in node:
        return tuple(range(count))
    deltas = tuple(node["offset_deltas"])
    if len(deltas) != count:
        ctx.fail(f"{len(deltas)} offset deltas for {count} records", f"{path}.offset_deltas")
    if any(b <= a for a, b in itertools.pairwise(deltas)):
        ctx.fail("offset deltas must increase strictly", f"{path}.offset_deltas")
    return deltas


def _log_append_time(
    ctx: Context, node: Mapping[str, Any], path: str, timestamp_type: TimestampType
) -> int | None:
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        if "log_append_time" not in node:
            ctx.fail("LogAppendTime needs log_append_time (the broker's clock, fixed here)", path)
        return ctx.int64(node["log_append_time"], f"{path}.log_append_time")
    if "log_append_time" in node:
        ctx.fail("log_append_time needs timestamp_type LogAppendTime", f"{path}.log_append_time")
    return None


def _max_timestamp(
    ctx: Context,
    node: Mapping[str, Any],
    path: str,
    records: tuple[RecordData, ...],
    control: ControlSpec | None,
) -> int | None:
    """Only an empty batch states its maxTimestamp; the builders compute all others."""
    empty = control is None and not records
    if empty and "max_timestamp" not in node:
        ctx.fail("an empty batch needs max_timestamp (kept from the batch it replaced)", path)
    if not empty and "max_timestamp" in node:
        ctx.fail("max_timestamp is only for an empty batch", f"{path}.max_timestamp")
    if empty and node.get("codec", "none") != "none":
        ctx.fail("an empty batch is written uncompressed (writeEmptyHeader)", f"{path}.codec")
    if empty and "delete_horizon_ms" in node:
        ctx.fail("an empty batch has no delete horizon bit", f"{path}.delete_horizon_ms")
    return ctx.int64(node["max_timestamp"], f"{path}.max_timestamp") if empty else None


def check_compacted_keys(ctx: Context, batches: tuple[BatchSpec, ...]) -> None:
    """A compacted topic rejects key-less records (INVALID_RECORD, kafka-facts 3.1)."""
    for batch in batches:
        for record in batch.records:
            if record.key is None:
                ctx.fail(
                    "a compacted topic cannot hold a record without a key", f"{record.path}.key"
                )
