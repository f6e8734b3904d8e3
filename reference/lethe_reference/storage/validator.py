"""Validate a producer's batch and assign its offsets, patching bytes in place.

Theory of operation
-------------------
A produce request carries, per partition, the raw bytes of one record batch.
Kafka 4.0 checks it in three places, in this order, and so do we:

1. ``ProduceRequest.validateRecords`` (every Produce version Kafka 4.0 serves
   is v3+, KIP-896): at least one batch (17 bytes up to the magic, the whole
   batch present), ``magic == 2``, exactly one batch. **Decision (KIP-724):**
   magic 0/1 data is refused here with ``INVALID_RECORD`` (87), the error Kafka
   4.0 gives; it is never converted. A claimed length below 14 bytes is
   ``CORRUPT_MESSAGE`` (2). Bytes after the batch too few to be a second one
   are dropped, as Kafka's ``trimInvalidBytes`` drops them.
2. ``UnifiedLog.analyzeAndValidateRecords``: ``baseOffset`` must be 0
   (``INVALID_RECORD``); size <= ``max.message.bytes`` (``MESSAGE_TOO_LARGE``
   10); header >= 61 bytes and CRC-32C valid (``CORRUPT_MESSAGE``); a codec id
   of 5-7 makes ``CompressionType.forId`` throw (``UNKNOWN_SERVER_ERROR`` -1).
3. ``LogValidator``: offset range and record count consistent, no control
   batch, a producer id needs a sequence (all ``INVALID_RECORD``); then every
   record is decoded (decompressed if needed; a compressed stream Kafka's
   codec reader refuses is ``UNKNOWN_SERVER_ERROR`` -1, Kafka's answer to its
   ``KafkaException``; other undecodable records are ``INVALID_RECORD``, as
   Kafka's iterators throw ``InvalidRecordException``)
   and checked: compacted topics need keys (``INVALID_RECORD``), CreateTime
   timestamps must lie within ``message.timestamp.{before,after}.max.ms`` of
   now and a LogAppendTime attribute from a producer is refused (both
   ``INVALID_TIMESTAMP`` 32). Per-record failures are collected as
   ``(batch index, message)`` pairs for the v8+ ``RecordErrors``.

**Offset assignment without re-encoding.** The batch bytes are kept; only
header fields change::

    0   baseOffset            := the log end offset        } not covered by
    12  partitionLeaderEpoch  := the leader's epoch        } the CRC
    21  attributes            bit 3 := topic timestamp type  } rewritten, CRC
    35  maxTimestamp          := max record ts, or now (LAT) } recomputed, only
    17  crc                   := CRC-32C over [21, end)      } if they changed

(``setLastOffset``, ``setPartitionLeaderEpoch``, ``setMaxTimestamp``.) Kafka
rebuilds a batch only when the topic's ``compression.type`` differs from the
batch's codec or when a compressed batch's inner offset deltas are not 0..n-1;
:mod:`.rebuild` does that here too. Records' own attributes bytes are never
looked at (Kafka reads and ignores them): in place they stay as sent, rebuilt
they are 0, except bit 0 on a ``tombstone.flag.enable`` topic (KIP-87
extension, see :mod:`.rebuild`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lethe_formats.crc import crc32c
from lethe_formats.errors import DecompressionError, FormatError
from lethe_formats.model import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    Record,
    RecordBatch,
    TimestampType,
)
from lethe_formats.records.scan import LogScanner, ScannedEntry, decode_records

from lethe_reference.storage import errors
from lethe_reference.storage.rebuild import needs_rebuild, rebuild_batch
from lethe_reference.storage.settings import LogSettings
from lethe_reference.storage.tombstones import record_attribute_mask

__all__ = ["ValidatedBatch", "validate_and_assign_offsets"]

_PREFIX = struct.Struct(">qi4xb")  # baseOffset, length, magic
_HEADER_UP_TO_MAGIC = 17
_RECORD_OVERHEAD_V0 = 14
_LOG_OVERHEAD = 12
_KEPT_ATTRIBUTES = COMPRESSION_MASK | TRANSACTIONAL_BIT | CONTROL_BIT | DELETE_HORIZON_BIT


@dataclass(frozen=True, slots=True)
class ValidatedBatch:
    """A batch ready to append, and what the ProduceResponse needs from it."""

    records: bytes
    header: BatchHeader
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    #: The broker time written into a LogAppendTime batch, else -1.
    log_append_time: int

    @property
    def first_offset(self) -> int:
        return self.header.base_offset

    @property
    def last_offset(self) -> int:
        return self.header.last_offset


def validate_and_assign_offsets(
    records: bytes | bytearray | memoryview,
    *,
    next_offset: int,
    leader_epoch: int,
    now_ms: int,
    settings: LogSettings,
    target_compression: str = "producer",
    topic_partition: str = "",
    from_coordinator: bool = False,
) -> ValidatedBatch:
    """Run the checks of the module docstring; raise a ``RecordValidationError``
    or return the batch with offsets from ``next_offset`` on. A coordinator's
    append (``AppendOrigin.COORDINATOR``: transaction markers) may be a control batch."""
    data = bytearray(_single_batch(bytes(records)))
    entry = _checked_entry(data, settings, topic_partition)
    header = entry.header
    assert isinstance(header, BatchHeader)  # _single_batch accepted only magic 2
    if not from_coordinator:  # Kafka checks these for AppendOrigin.CLIENT only
        _validate_batch_fields(header, topic_partition)
    decoded = _decode(data, entry)
    _validate_records(header, decoded, now_ms, settings, topic_partition)
    append_time = settings.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    if needs_rebuild(header, decoded, target_compression):
        rebuilt = rebuild_batch(
            RecordBatch(header, decoded),
            base_offset=next_offset,
            leader_epoch=leader_epoch,
            log_append_time=now_ms if append_time else None,
            target_compression=target_compression,
            record_attribute_mask=record_attribute_mask(settings),
        )
        _check_size(len(rebuilt), settings, topic_partition)
        return _result(rebuilt, now_ms if append_time else NO_TIMESTAMP, rebuilt=True)
    max_ts = now_ms if append_time else _max_record_timestamp(header, decoded)
    _patch(
        data,
        header,
        base_offset=next_offset,
        leader_epoch=leader_epoch,
        append_time=append_time,
        max_timestamp=max_ts,
    )
    return _result(bytes(data), now_ms if append_time else NO_TIMESTAMP, rebuilt=False)


def _result(data: bytes, log_append_time: int, *, rebuilt: bool) -> ValidatedBatch:
    """The final header, and the shallow offset of the max timestamp as the
    validator reports it: the last offset, or -1 when no record had a timestamp
    (except on Kafka's in-place compressed path, which always says last)."""
    header = BatchHeader(*struct.unpack_from(">qiibIhiqqqhii", data, 0))
    in_place_compressed = not rebuilt and header.attributes & COMPRESSION_MASK != 0
    shallow = header.last_offset
    if header.max_timestamp == NO_TIMESTAMP and not in_place_compressed:
        shallow = -1
    return ValidatedBatch(data, header, header.max_timestamp, shallow, log_append_time)


# --- 1. ProduceRequest.validateRecords --------------------------------------------------


def _single_batch(data: bytes) -> bytes:
    """The one complete batch in ``data`` (trailing partial bytes dropped)."""
    first = _batch_size(data, 0)
    if first is None:
        raise errors.InvalidRecordError(
            "Produce requests must have at least one record batch per partition"
        )
    size, magic = first
    if magic != 2:
        raise errors.InvalidRecordError(
            "Produce requests are only allowed to contain record batches with magic version 2"
        )
    if _batch_size(data, size) is not None:
        raise errors.InvalidRecordError(
            "Produce requests are only allowed to contain exactly one record batch per partition"
        )
    return data[:size]


def _batch_size(data: bytes, position: int) -> tuple[int, int] | None:
    """``(size, magic)`` of the entry at ``position``, None if it is not all there
    (``ByteBufferLogInputStream.nextBatch``)."""
    if len(data) - position < _HEADER_UP_TO_MAGIC:
        return None
    _base, length, magic = _PREFIX.unpack_from(data, position)
    if length < _RECORD_OVERHEAD_V0:
        raise errors.CorruptMessageError(
            f"Record size {length} is less than the minimum record overhead ({_RECORD_OVERHEAD_V0})"
        )
    size = length + _LOG_OVERHEAD
    return None if len(data) - position < size else (size, magic)


# --- 2. UnifiedLog.analyzeAndValidateRecords --------------------------------------------


def _checked_entry(data: bytearray, settings: LogSettings, tp: str) -> ScannedEntry:
    (base_offset,) = struct.unpack_from(">q", data, 0)
    if base_offset != 0:
        raise errors.InvalidRecordError(
            f"The baseOffset of the record batch in the append to {tp} should be 0, "
            f"but it is {base_offset}"
        )
    _check_size(len(data), settings, tp)
    entry = next(iter(LogScanner(data, verify_crc=True)), None)
    if entry is None or len(data) < RECORD_BATCH_OVERHEAD or not entry.crc_valid:
        (stored,) = struct.unpack_from(">I", data, 17) if len(data) >= 21 else (0,)
        raise errors.CorruptMessageError(
            f"Record is corrupt (stored crc = {stored}) in topic partition {tp}."
        )
    codec = entry.header.attributes & COMPRESSION_MASK
    if codec > 4:
        raise errors.UnknownCodecError(f"Unknown compression type id: {codec}")
    return entry


def _check_size(size: int, settings: LogSettings, tp: str) -> None:
    if size > settings.max_message_bytes:
        raise errors.MessageTooLargeError(
            f"The record batch size in the append to {tp} is {size} bytes which exceeds "
            f"the maximum configured value of {settings.max_message_bytes}."
        )


# --- 3. LogValidator ----------------------------------------------------------------------


def _validate_batch_fields(header: BatchHeader, tp: str) -> None:
    """``LogValidator.validateBatch`` for a client append."""
    first, last, count = header.base_offset, header.last_offset, header.records_count
    span = last - first + 1
    if span <= 0:
        raise errors.InvalidRecordError(
            f"Batch has an invalid offset range: [{first}, {last}] in topic partition {tp}"
        )
    if count <= 0:
        raise errors.InvalidRecordError(
            f"Invalid reported count for record batch: {count} in topic partition {tp}"
        )
    if span != count:
        raise errors.InvalidRecordError(
            f"Inconsistent batch offset range [{first}, {last}] and count of records {count} "
            f"in topic partition {tp}"
        )
    if header.is_control:
        raise errors.InvalidRecordError(
            f"Clients are not allowed to write control records in topic partition {tp}"
        )
    if header.producer_id >= 0 and header.base_sequence < 0:
        raise errors.InvalidRecordError(
            f"Invalid sequence number {header.base_sequence} in record batch with producerId "
            f"{header.producer_id} in topic partition {tp}"
        )


def _decode(data: bytearray, entry: ScannedEntry) -> tuple[Record, ...]:
    try:
        return decode_records(data, entry)
    except DecompressionError as error:
        raise errors.UnreadableCompressionError(f"Invalid record batch: {error}") from None
    except FormatError as error:
        raise errors.InvalidRecordError(f"Invalid record batch: {error}") from None


def _validate_records(
    header: BatchHeader,
    records: tuple[Record, ...],
    now_ms: int,
    settings: LogSettings,
    tp: str,
) -> None:
    problems: list[tuple[int, str, bool]] = []  # (index, message, is timestamp error)
    batch = RecordBatch(header, records)
    for index, record in enumerate(records):
        if settings.compact and record.key is None:
            message = f"Compacted topic cannot accept message without key in topic partition {tp}."
            problems.append((index, message, False))
            continue
        stamp_problem = _timestamp_problem(header, batch.timestamp_of(record), now_ms, settings)
        if stamp_problem is not None:
            problems.append((index, stamp_problem, True))
    if not problems:
        return
    record_errors = tuple((index, message) for index, message, _ in problems)
    if any(is_time for _, _, is_time in problems):
        raise errors.InvalidTimestampError(
            "One or more records have been rejected due to invalid timestamp", record_errors
        )
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in record_errors[:3])
    raise errors.InvalidRecordError(
        f"One or more records have been rejected due to {len(record_errors)} record errors "
        f"in total, and only showing the first three errors at most: [{shown}]",
        record_errors,
    )


def _timestamp_problem(
    header: BatchHeader, stamp: int, now_ms: int, settings: LogSettings
) -> str | None:
    create_time = settings.message_timestamp_type is TimestampType.CREATE_TIME
    if create_time and stamp != NO_TIMESTAMP:
        before = settings.message_timestamp_before_max_ms
        after = settings.message_timestamp_after_max_ms
        if now_ms - stamp > before or stamp - now_ms > after:
            return (
                f"Timestamp {stamp} of message is out of range. The timestamp should be within "
                f"[{now_ms - before}, {now_ms + after}]"
            )
        return None
    if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return "Producer should not set timestamp type to LogAppendTime."
    return None


def _max_record_timestamp(header: BatchHeader, records: tuple[Record, ...]) -> int:
    batch = RecordBatch(header, records)
    return max((batch.timestamp_of(r) for r in records), default=NO_TIMESTAMP)


def _patch(
    data: bytearray,
    header: BatchHeader,
    *,
    base_offset: int,
    leader_epoch: int,
    append_time: bool,
    max_timestamp: int,
) -> None:
    """Assign offsets and epoch; rewrite type bit + maxTimestamp + CRC only if they change."""
    struct.pack_into(">q", data, 0, base_offset)
    struct.pack_into(">i", data, 12, leader_epoch)
    attributes = (header.attributes & _KEPT_ATTRIBUTES) | (TIMESTAMP_TYPE_BIT if append_time else 0)
    same_type = bool(header.attributes & TIMESTAMP_TYPE_BIT) == append_time
    if same_type and header.max_timestamp == max_timestamp:
        return
    struct.pack_into(">h", data, 21, attributes)
    struct.pack_into(">q", data, 35, max_timestamp)
    struct.pack_into(">I", data, 17, crc32c(memoryview(data)[21:]))
