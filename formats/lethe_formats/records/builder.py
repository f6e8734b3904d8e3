"""Deterministic encoders for fixtures and tests: record specs in, log bytes out.

Theory of operation
-------------------
A :class:`RecordSpec` says what a producer sent (key, value, headers, absolute
timestamp, and the record's own attributes byte: 0 from every Kafka client, bit 0
the KIP-87 tombstone flag of lethe's extension). The builders derive everything a
Kafka writer derives, build the model values, and hand them to
``batch.encode_batch`` / ``legacy.encode_message``, so bytes are packed in exactly
one place:

* ``baseTimestamp`` = the first record's timestamp, ``maxTimestamp`` = the
  largest (LogAppendTime: the broker time, which overrides them all; record
  deltas keep the producer's timestamps as the broker leaves them in place);
* ``offsetDelta`` 0..n-1, or the given ``offset_deltas`` for a compacted batch
  with gaps; ``lastOffsetDelta`` = the last delta unless forced, as the
  cleaner forces it to the original batch's;
* with ``delete_horizon_ms`` (KIP-534, kafka-facts 4.3): attribute bit 6,
  ``baseTimestamp`` = the horizon and ``timestampDelta`` = ts - horizon, so
  record timestamps are unchanged (deltas usually negative);
* an empty batch (count 0), as the cleaner keeps one to preserve a producer's
  sequence: ``baseTimestamp`` -1, no horizon bit, no compression;
* an end-transaction marker batch: transactional + control, one record with
  the 4-byte control key and the 6-byte marker value, ``baseSequence`` -1;
* legacy v0/v1 message sets, plain or as one compressed wrapper (v1 inner
  offsets relative, wrapper offset = last inner offset, wrapper timestamp =
  max inner timestamp or the LogAppendTime).

Nothing here reads a clock or a random source; equal inputs give equal bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lethe_formats.model import (
    KIP87_TOMBSTONE_BIT,
    NO_TIMESTAMP,
    BatchHeader,
    Compression,
    ControlType,
    Header,
    LegacyMessage,
    Record,
    RecordBatch,
    TimestampType,
)
from lethe_formats.records.attributes import batch_attributes, legacy_attributes
from lethe_formats.records.batch import MAGIC, encode_batch
from lethe_formats.records.control import encode_control_key, encode_end_txn_marker_value
from lethe_formats.records.legacy import encode_message

__all__ = [
    "RecordSpec",
    "build_batch",
    "build_empty_batch",
    "build_end_txn_marker_batch",
    "build_legacy_message_set",
]


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """One produced record; ``timestamp`` is absolute (ms)."""

    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    timestamp: int = NO_TIMESTAMP
    kip87_tombstone: bool = False
    #: The record's own attributes byte, 0-255 (Kafka writes 0 and ignores it);
    #: ``kip87_tombstone`` sets bit 0 on top of it.
    attributes: int = 0

    def attributes_byte(self) -> int:
        """The attributes as the signed int8 a :class:`Record` holds."""
        if not 0 <= self.attributes <= 0xFF:
            raise ValueError(f"record attributes {self.attributes} is not a byte (0-255)")
        value = self.attributes | (KIP87_TOMBSTONE_BIT if self.kip87_tombstone else 0)
        return value - 0x100 if value >= 0x80 else value


def _header(
    *,
    base_offset: int,
    attributes: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    partition_leader_epoch: int,
    records_count: int,
) -> BatchHeader:
    # batch_length and crc are placeholders: encode_batch computes both.
    return BatchHeader(
        base_offset=base_offset,
        batch_length=0,
        partition_leader_epoch=partition_leader_epoch,
        magic=MAGIC,
        crc=0,
        attributes=attributes,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=records_count,
    )


def build_batch(
    records: Sequence[RecordSpec],
    *,
    base_offset: int,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    delete_horizon_ms: int | None = None,
    offset_deltas: Sequence[int] | None = None,
    last_offset_delta: int | None = None,
    snappy_framing: str = "xerial",
) -> bytes:
    """A v2 batch holding ``records`` (at least one; see :func:`build_empty_batch`)."""
    if not records:
        raise ValueError("a batch needs at least one record; use build_empty_batch")
    deltas = list(range(len(records))) if offset_deltas is None else list(offset_deltas)
    if len(deltas) != len(records):
        raise ValueError("offset_deltas must give one delta per record")
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        if log_append_time is None:
            raise ValueError("LogAppendTime needs log_append_time")
        max_timestamp = log_append_time
    else:
        max_timestamp = max(spec.timestamp for spec in records)
    horizon = delete_horizon_ms is not None
    base_timestamp = delete_horizon_ms if delete_horizon_ms is not None else records[0].timestamp
    built = tuple(
        Record(
            attributes=spec.attributes_byte(),
            timestamp_delta=spec.timestamp - base_timestamp,
            offset_delta=delta,
            key=spec.key,
            value=spec.value,
            headers=tuple(spec.headers),
        )
        for spec, delta in zip(records, deltas, strict=True)
    )
    header = _header(
        base_offset=base_offset,
        attributes=batch_attributes(
            compression=compression,
            timestamp_type=timestamp_type,
            transactional=is_transactional,
            control=is_control,
            delete_horizon=horizon,
        ),
        last_offset_delta=deltas[-1] if last_offset_delta is None else last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=partition_leader_epoch,
        records_count=len(built),
    )
    return encode_batch(RecordBatch(header, built), snappy_framing=snappy_framing)


def build_empty_batch(
    *,
    base_offset: int,
    last_offset_delta: int,
    max_timestamp: int,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    is_transactional: bool = False,
    is_control: bool = False,
) -> bytes:
    """A header-only batch (count 0) as the cleaner's ``writeEmptyHeader`` writes it."""
    header = _header(
        base_offset=base_offset,
        attributes=batch_attributes(
            timestamp_type=timestamp_type, transactional=is_transactional, control=is_control
        ),
        last_offset_delta=last_offset_delta,
        base_timestamp=NO_TIMESTAMP,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=partition_leader_epoch,
        records_count=0,
    )
    return encode_batch(RecordBatch(header, ()))


def build_end_txn_marker_batch(
    *,
    base_offset: int,
    producer_id: int,
    producer_epoch: int,
    control_type: ControlType,
    coordinator_epoch: int,
    timestamp: int,
    partition_leader_epoch: int = -1,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """A COMMIT or ABORT marker batch as the transaction coordinator has it written."""
    if control_type not in (ControlType.COMMIT, ControlType.ABORT):
        raise ValueError(f"an end-txn marker is COMMIT or ABORT, not {control_type!r}")
    spec = RecordSpec(
        key=encode_control_key(control_type),
        value=encode_end_txn_marker_value(coordinator_epoch),
        timestamp=timestamp,
    )
    return build_batch(
        [spec],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        partition_leader_epoch=partition_leader_epoch,
        is_transactional=True,
        is_control=True,
        delete_horizon_ms=delete_horizon_ms,
    )


def build_legacy_message_set(
    records: Sequence[RecordSpec],
    *,
    magic: int,
    base_offset: int,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    snappy_framing: str = "xerial",
) -> bytes:
    """v0/v1 messages for ``records``: one entry each, or one compressed wrapper."""
    if magic not in (0, 1):
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic}")
    if any(spec.headers or spec.kip87_tombstone or spec.attributes for spec in records):
        raise ValueError("v0/v1 messages have no headers, no record attributes, no KIP-87 flag")
    if not records:
        return b""
    append_time = timestamp_type is TimestampType.LOG_APPEND_TIME and magic == 1
    if append_time and log_append_time is None:
        raise ValueError("LogAppendTime needs log_append_time")
    kind = timestamp_type if magic == 1 else TimestampType.CREATE_TIME
    plain = tuple(
        LegacyMessage(
            offset=base_offset + index,
            message_size=0,
            crc=0,
            magic=magic,
            attributes=legacy_attributes(timestamp_type=kind),
            timestamp=None if magic == 0 else (log_append_time if append_time else spec.timestamp),
            key=spec.key,
            value=spec.value,
        )
        for index, spec in enumerate(records)
    )
    if compression is Compression.NONE:
        return b"".join(encode_message(message) for message in plain)
    wrapper_timestamp = None
    if magic == 1:
        wrapper_timestamp = max(m.timestamp for m in plain if m.timestamp is not None)
    wrapper = LegacyMessage(
        offset=plain[-1].offset,
        message_size=0,
        crc=0,
        magic=magic,
        attributes=legacy_attributes(compression=compression, timestamp_type=kind),
        timestamp=wrapper_timestamp,
        key=None,
        value=None,
        inner=plain,
    )
    return encode_message(wrapper, snappy_framing=snappy_framing)
