"""Appending a producer's batch to one partition (``ReplicaManager.appendToLocalLog``).

Theory of operation
-------------------
A Produce request reaches a partition's log through four gates, in Kafka's
order; the first that fails decides the partition's response:

1. ``ProduceRequest.validateRecords`` (KafkaApis, :func:`validate_produce_records`):
   at least one complete batch, magic 2, exactly one batch, no zstd below v7.
   These answers carry only the code: ``log_start_offset`` -1, no message.
   Only the fixed prefix of each entry is read (``ByteBufferLogInputStream``)::

       0   baseOffset   int64
       8   length       int32   < 14: CORRUPT_MESSAGE; entry = 12 + length bytes
       12  leaderEpoch  int32
       16  magic        int8    must be 2
       17  crc          uint32
       21  attributes   int16   bits 0-2 codec (4 = zstd), bit 4 transactional

   An entry is "there" when at least 17 bytes and its whole length are present;
   fewer trailing bytes are ignored, a second complete entry is refused.
2. ``acks`` must be -1, 0 or 1, else INVALID_REQUIRED_ACKS (21) for every
   partition (:func:`valid_acks`; the handler applies it).
3. Internal topics accept appends only from the client id ``__admin_client``:
   INVALID_TOPIC_EXCEPTION (17).
4. The append (:func:`append_to_partition`): storage validates and assigns
   offsets (:mod:`lethe_reference.storage.validator`), runs the idempotent
   producer checks (:mod:`lethe_reference.storage.producer_state`: a duplicate
   comes back with its original offsets and nothing written), then the batch
   is written and the HW moves to the LEO (one replica: the ISR is the leader
   alone, so ``maybeIncrementLeaderHW`` moves it at once, whatever ``acks``
   says).

How a failure is answered depends on its kind (``appendToLocalLog``'s catch):

===============================================  ==================  =============
exception                                        log_start_offset    error_message
===============================================  ==================  =============
CORRUPT_MESSAGE, MESSAGE_TOO_LARGE,              -1                  null
RECORD_LIST_TOO_LARGE, KAFKA_STORAGE_ERROR
per-record errors (``RecordValidationException``:  the partition's     the exception's
compacted topic without key, bad timestamps)     log start offset    message, plus
                                                                     ``record_errors``
anything else (INVALID_RECORD of a batch rule,   the partition's     null
45, 47, unknown codec -1, ...)                   log start offset
===============================================  ==================  =============

A duplicate is answered NONE with the original batch's base offset, its max
timestamp as ``log_append_time`` and the current log start offset
(``UnifiedLog.append`` sets exactly these on a duplicate).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lethe_formats.model import COMPRESSION_MASK, LOG_OVERHEAD, Compression
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.membership import high_watermark_after_append, leader_epoch
from lethe_reference.handlers.partition_ops.common import error_code_of
from lethe_reference.storage import errors

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.storage.log import PartitionLog

__all__ = [
    "ADMIN_CLIENT_ID",
    "PartitionAppend",
    "append_to_partition",
    "valid_acks",
    "validate_produce_records",
]

#: ``AdminUtils.ADMIN_CLIENT_ID``: the one client id that may append to internal topics.
ADMIN_CLIENT_ID = "__admin_client"
_HEADER_UP_TO_MAGIC = 17
_RECORD_OVERHEAD_V0 = 14
_KNOWN_ERRORS = (
    errors.CorruptMessageError,
    errors.MessageTooLargeError,
    errors.RecordListTooLargeError,
    errors.KafkaStorageError,
)


@dataclass(frozen=True, slots=True)
class PartitionAppend:
    """One partition's ProduceResponse fields (``PartitionResponse``)."""

    error: ErrorCode
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    record_errors: tuple[tuple[int, str | None], ...] = ()
    error_message: str | None = None
    #: True when records were written (delayed requests must be re-checked).
    appended: bool = False


def valid_acks(acks: int) -> bool:
    """``ReplicaManager.isValidRequiredAcks``."""
    return acks in (-1, 0, 1)


def _entry(records: bytes, position: int) -> tuple[int, int] | None:
    """(size, magic) of the complete entry at ``position`` (``ByteBufferLogInputStream``)."""
    remaining = len(records) - position
    if remaining < LOG_OVERHEAD:
        return None
    (length,) = struct.unpack_from(">i", records, position + 8)
    if length < _RECORD_OVERHEAD_V0:
        raise errors.CorruptMessageError(
            f"Record size {length} is less than the minimum record overhead ({_RECORD_OVERHEAD_V0})"
        )
    if remaining < _HEADER_UP_TO_MAGIC or remaining < length + LOG_OVERHEAD:
        return None
    return length + LOG_OVERHEAD, records[position + 16]


def validate_produce_records(api_version: int, records: bytes | None) -> ErrorCode:
    """``ProduceRequest.validateRecords``: the code, or NONE (null records: none)."""
    data = records or b""
    try:
        first = _entry(data, 0)
        if first is None or first[1] != 2:
            return ErrorCode.INVALID_RECORD
        (attributes,) = struct.unpack_from(">h", data, 21)
        if api_version < 7 and attributes & COMPRESSION_MASK == Compression.ZSTD:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if _entry(data, first[0]) is not None:
            return ErrorCode.INVALID_RECORD
    except errors.CorruptMessageError:
        return ErrorCode.CORRUPT_MESSAGE
    return ErrorCode.NONE


def append_to_partition(broker: Broker, log: PartitionLog, records: bytes) -> PartitionAppend:
    """Gate 4 of the module docstring; never raises for bad input."""
    try:
        return _append(broker, log, records)
    except _KNOWN_ERRORS as error:
        return PartitionAppend(error_code_of(error))
    except errors.RecordValidationError as error:
        if not error.record_errors:
            return PartitionAppend(error_code_of(error), log_start_offset=log.log_start_offset)
        return PartitionAppend(
            error_code_of(error),
            log_start_offset=log.log_start_offset,
            record_errors=tuple(error.record_errors),
            error_message=error.message,
        )
    except errors.LogError as error:  # 45, 47 and other batch rules
        return PartitionAppend(error_code_of(error), log_start_offset=log.log_start_offset)
    except OSError:  # an IOException becomes a KafkaStorageException in Kafka
        return PartitionAppend(ErrorCode.KAFKA_STORAGE_ERROR)


def _append(broker: Broker, log: PartitionLog, records: bytes) -> PartitionAppend:
    topic, _, partition = log.name.rpartition("-")
    result = log.append_as_leader(records, leader_epoch(broker, topic, int(partition)))
    if result.duplicate:
        return PartitionAppend(
            ErrorCode.NONE, result.first_offset, result.log_append_time, result.log_start_offset
        )
    high_watermark_after_append(broker, log, topic, int(partition))  # HW = LEO on one broker
    return PartitionAppend(
        ErrorCode.NONE,
        result.first_offset,
        result.log_append_time,
        result.log_start_offset,
        appended=True,
    )
