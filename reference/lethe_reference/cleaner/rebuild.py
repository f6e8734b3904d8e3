"""Rewriting a batch the cleaner changed (``MemoryRecords.buildRetainedRecordsInto``).

Theory of operation
-------------------
A batch that loses records, or gains a delete horizon, is written anew by a
``MemoryRecordsBuilder`` fed the kept records (kafka-facts 4.3):

**Magic 2.** Same base offset, compression, timestamp type, producer id and
epoch, base sequence, transactional/control flags and partition leader epoch;
``lastOffsetDelta`` forced to the original batch's (keeps the producer's last
sequence). With a horizon (>= 0) attribute bit 6 is set and ``baseTimestamp`` =
the horizon; without one, ``baseTimestamp`` = the first kept record's
timestamp. Every record keeps its offset delta, key, value, headers and
timestamp: ``timestampDelta`` = timestamp - baseTimestamp (negative under a
horizon). ``maxTimestamp`` = the largest kept timestamp (-1 if none is >= 0),
or the original for LogAppendTime. What ``LogSegment.append`` learns
(``RecordsInfo``): (maxTimestamp, the batch's last offset), or (-1, -1) when
no record has a timestamp.

**Magic 0/1** (only compressed wrappers get here; a plain message is kept or
dropped whole): a new wrapper over the kept messages, base = the first kept
offset, inner offsets relative for v1 and absolute for v0, wrapper offset =
the last kept offset, wrapper timestamp = the largest inner timestamp or the
LogAppendTime, inner messages uncompressed and stamped with the wrapper's
timestamp type.

Record attribute bytes are written as Kafka writes them, 0
(``DefaultRecord.writeTo``), except the bits of ``record_attribute_mask``,
copied from the old byte: the log's ``tombstone.flag.enable`` makes that bit 0,
so the KIP-87 flag survives cleaning (``storage.tombstones.record_attribute_mask``).
Compressed output uses lethe's codecs (snappy in the xerial framing, as the
broker's Java library writes it); the compressed bytes may differ from Java's
encoder, which no reader can observe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lethe_formats.model import (
    NO_TIMESTAMP,
    BatchHeader,
    LegacyMessage,
    Record,
    RecordBatch,
    TimestampType,
)
from lethe_formats.records.attributes import batch_attributes, legacy_attributes
from lethe_formats.records.batch import encode_batch
from lethe_formats.records.legacy import encode_message

__all__ = ["Built", "rebuild_legacy", "rebuild_v2"]


@dataclass(frozen=True, slots=True)
class Built:
    """A rewritten entry and its ``RecordsInfo``."""

    data: bytes
    max_timestamp: int
    shallow_offset: int


def rebuild_v2(
    header: BatchHeader,
    kept: Sequence[tuple[Record, int, int]],
    horizon: int,
    record_attribute_mask: int = 0,
) -> Built:
    """``kept`` = (record, absolute offset, timestamp); ``horizon`` -1 for none;
    ``record_attribute_mask``: record attribute bits kept (KIP-87), 0 as in Kafka."""
    append_time = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    base_timestamp = horizon if horizon >= 0 else kept[0][2]
    records = tuple(
        Record(
            record.attributes & record_attribute_mask,
            stamp - base_timestamp,
            offset - header.base_offset,
            record.key,
            record.value,
            record.headers,
        )
        for record, offset, stamp in kept
    )
    max_ts = max((stamp for _, _, stamp in kept), default=NO_TIMESTAMP)
    max_ts = header.max_timestamp if append_time else max(max_ts, NO_TIMESTAMP)
    new_header = BatchHeader(
        base_offset=header.base_offset,
        batch_length=0,
        partition_leader_epoch=header.partition_leader_epoch,
        magic=2,
        crc=0,
        attributes=batch_attributes(
            compression=header.compression,
            timestamp_type=header.timestamp_type,
            transactional=header.is_transactional,
            control=header.is_control,
            delete_horizon=horizon >= 0,
        ),
        last_offset_delta=header.last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_ts,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        records_count=len(records),
    )
    data = encode_batch(RecordBatch(new_header, records), snappy_framing="xerial")
    if max_ts == NO_TIMESTAMP and not append_time:
        return Built(data, NO_TIMESTAMP, -1)
    return Built(data, max_ts, header.last_offset)


def _inner_timestamp(magic: int, log_append_time: int | None, message: LegacyMessage) -> int | None:
    if magic == 0:
        return None
    return log_append_time if log_append_time is not None else message.timestamp


def rebuild_legacy(wrapper: LegacyMessage, kept: Sequence[LegacyMessage]) -> Built:
    """A compressed v0/v1 wrapper holding only ``kept`` (module docstring)."""
    magic = wrapper.magic
    kind = wrapper.timestamp_type
    append_time = kind is TimestampType.LOG_APPEND_TIME
    log_append_time = wrapper.timestamp if append_time else None
    inner_kind = TimestampType.LOG_APPEND_TIME if append_time else TimestampType.CREATE_TIME
    inner = tuple(
        LegacyMessage(
            offset=message.offset,
            message_size=0,
            crc=0,
            magic=magic,
            attributes=legacy_attributes(timestamp_type=inner_kind),
            timestamp=_inner_timestamp(magic, log_append_time, message),
            key=message.key,
            value=message.value,
        )
        for message in kept
    )
    stamps = [m.timestamp for m in inner if m.timestamp is not None]
    max_ts = max(stamps, default=NO_TIMESTAMP) if magic > 0 else NO_TIMESTAMP
    wrapper_ts = None if magic == 0 else (log_append_time if append_time else max_ts)
    last = kept[-1].offset
    built = LegacyMessage(
        offset=last,
        message_size=0,
        crc=0,
        magic=magic,
        attributes=legacy_attributes(compression=wrapper.compression, timestamp_type=inner_kind),
        timestamp=wrapper_ts,
        key=None,
        value=None,
        inner=inner,
    )
    data = encode_message(built, snappy_framing="xerial")
    info_ts = wrapper_ts if wrapper_ts is not None else NO_TIMESTAMP
    return Built(data, info_ts, last if info_ts != NO_TIMESTAMP else -1)
