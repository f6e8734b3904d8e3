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

**Magic 0/1.** Kafka 4.0 never writes a legacy entry back: every legacy
entry (a plain message, or a compressed wrapper) that keeps at least one
message becomes a magic 2 batch, whether or not the cleaner removed anything
(``filterBatch`` starts ``writeOriginalBatch`` as ``magic >= 2``). The new
batch: base offset = the first kept offset, ``lastOffsetDelta`` = the last kept
offset - base (no override: a legacy entry has no sequence to keep); the
wrapper's compression (a magic 0 raw-snappy wrapper becomes xerial snappy, a
magic 0 LZ4 frame gets a correct header checksum); timestamp type CreateTime
for magic 0, else the entry's; producer id, epoch and base sequence -1,
partition leader epoch -1, not transactional, not control. Each record keeps its
offset, key and value, no headers, attributes 0, and the timestamp the legacy
reader gives it: -1 for magic 0 (so ``maxTimestamp`` -1), the wrapper's time
under a LogAppendTime wrapper, else its own. A kept tombstone sets the delete
horizon (the legacy entry has none yet): bit 6 and ``baseTimestamp`` = now +
delete.retention.ms, so from then on the tombstone follows the KIP-534 rule,
not the segment times. Otherwise ``baseTimestamp`` is the first record's
timestamp (-1 for magic 0).

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
from lethe_formats.records.attributes import batch_attributes
from lethe_formats.records.batch import encode_batch

__all__ = ["Built", "convert_legacy", "rebuild_v2"]


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


def _legacy_timestamp(wrapper: LegacyMessage, message: LegacyMessage) -> int:
    """``LegacyRecord.timestamp()`` as the deep iterator yields it: -1 for magic 0,
    the wrapper's time under a LogAppendTime v1 wrapper, else the message's own."""
    if message.magic == 0 or message.timestamp is None:
        return NO_TIMESTAMP
    if wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME and wrapper.timestamp is not None:
        return wrapper.timestamp
    return message.timestamp


def convert_legacy(wrapper: LegacyMessage, kept: Sequence[LegacyMessage], horizon: int) -> Built:
    """The magic 2 batch Kafka's cleaner writes for the kept messages of a legacy
    entry (module docstring, "Magic 0/1"); ``horizon`` -1 for none."""
    if wrapper.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        kind = TimestampType.CREATE_TIME
    else:
        kind = wrapper.timestamp_type
    base = kept[0].offset
    legacy_view = BatchHeader(  # the legacy entry as Kafka's RecordBatch interface shows it
        base_offset=base,
        batch_length=0,
        partition_leader_epoch=-1,
        magic=wrapper.magic,
        crc=0,
        attributes=batch_attributes(compression=wrapper.compression, timestamp_type=kind),
        last_offset_delta=kept[-1].offset - base,
        base_timestamp=NO_TIMESTAMP,
        max_timestamp=NO_TIMESTAMP if wrapper.timestamp is None else wrapper.timestamp,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        records_count=len(kept),
    )
    records = [
        (
            Record(0, 0, message.offset - base, message.key, message.value, ()),
            message.offset,
            _legacy_timestamp(wrapper, message),
        )
        for message in kept
    ]
    return rebuild_v2(legacy_view, records, horizon)
