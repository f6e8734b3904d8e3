"""Typed errors of the storage engine, each carrying the Kafka error it answers with.

Theory of operation
-------------------
Kafka's storage layer throws ``ApiException`` subclasses (``OffsetOutOfRange
Exception``, ``RecordTooLargeException``, ...) and ``Errors.forException``
turns each into a wire code. The reference broker keeps that split: storage
code raises these classes, and the protocol layer reads ``error_name`` /
``error_code`` off the exception when it builds a response, so no handler
needs its own table. Each class names its error (``error_name``, as in Kafka's
``Errors`` enum); its number is looked up in the protocol layer's error table,
the one place codes live::

    LogError                                 (base: UNKNOWN_SERVER_ERROR -1)
    +- OffsetOutOfRangeError                 OFFSET_OUT_OF_RANGE 1
    +- RecordValidationError                 (a produce append was refused)
    |  +- CorruptMessageError                CORRUPT_MESSAGE 2
    |  +- MessageTooLargeError               MESSAGE_TOO_LARGE 10
    |  +- RecordListTooLargeError            RECORD_LIST_TOO_LARGE 18
    |  +- InvalidTimestampError              INVALID_TIMESTAMP 32
    |  +- UnsupportedCompressionTypeError    UNSUPPORTED_COMPRESSION_TYPE 76
    |  +- InvalidRecordError                 INVALID_RECORD 87
    |  +- UnknownCodecError                  UNKNOWN_SERVER_ERROR -1
    |  +- UnreadableCompressionError         UNKNOWN_SERVER_ERROR -1
    +- OutOfOrderSequenceError               OUT_OF_ORDER_SEQUENCE_NUMBER 45
    +- InvalidProducerEpochError             INVALID_PRODUCER_EPOCH 47
    +- TransactionCoordinatorFencedError     TRANSACTION_COORDINATOR_FENCED 52
    +- SegmentOffsetOverflowError            (internal: a roll is needed first)
    +- KafkaStorageError                     KAFKA_STORAGE_ERROR 56

``RecordValidationError.record_errors`` holds ``(batch index, message)``
pairs, the ``RecordErrors`` a v8+ ProduceResponse carries
(``RecordValidationException``); they are empty for batch-level failures.
"""

from __future__ import annotations

from typing import ClassVar

from lethe_formats.protocol.error_codes import ErrorCode

__all__ = [
    "CorruptMessageError",
    "InvalidProducerEpochError",
    "InvalidRecordError",
    "InvalidTimestampError",
    "KafkaStorageError",
    "LogError",
    "MessageTooLargeError",
    "OffsetOutOfRangeError",
    "OutOfOrderSequenceError",
    "RecordListTooLargeError",
    "RecordValidationError",
    "SegmentOffsetOverflowError",
    "TransactionCoordinatorFencedError",
    "UnknownCodecError",
    "UnreadableCompressionError",
    "UnsupportedCompressionTypeError",
]


class LogError(Exception):
    """Base class: a storage operation Kafka would refuse with ``error_code``."""

    error_name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    error_code: ClassVar[int] = int(ErrorCode.UNKNOWN_SERVER_ERROR)

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.error_code = int(ErrorCode[cls.error_name])

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OffsetOutOfRangeError(LogError):
    """A fetch or log-start-offset move outside [log start offset, LEO] / above the HW."""

    error_name = "OFFSET_OUT_OF_RANGE"


class RecordValidationError(LogError):
    """A produce append refused by validation; nothing was written."""

    def __init__(self, message: str, record_errors: tuple[tuple[int, str], ...] = ()) -> None:
        super().__init__(message)
        self.record_errors = record_errors


class CorruptMessageError(RecordValidationError):
    """CorruptRecordException: bad CRC, impossible sizes, undecodable records
    (in a produce request, or in a stored batch a lookup had to decode)."""

    error_name = "CORRUPT_MESSAGE"


class MessageTooLargeError(RecordValidationError):
    """RecordTooLargeException: a batch larger than ``max.message.bytes``."""

    error_name = "MESSAGE_TOO_LARGE"


class RecordListTooLargeError(RecordValidationError):
    """RecordBatchTooLargeException: the append is larger than ``segment.bytes``."""

    error_name = "RECORD_LIST_TOO_LARGE"


class InvalidTimestampError(RecordValidationError):
    """A record timestamp outside ``message.timestamp.{before,after}.max.ms``."""

    error_name = "INVALID_TIMESTAMP"


class UnsupportedCompressionTypeError(RecordValidationError):
    """A codec the topic or request version does not allow."""

    error_name = "UNSUPPORTED_COMPRESSION_TYPE"


class InvalidRecordError(RecordValidationError):
    """InvalidRecordException: a batch or record that breaks an append rule."""

    error_name = "INVALID_RECORD"


class UnknownCodecError(RecordValidationError):
    """Compression id 5-7: Kafka's ``CompressionType.forId`` throws an
    IllegalArgumentException, which ``Errors.forException`` maps to -1."""


class UnreadableCompressionError(RecordValidationError):
    """Compressed records Kafka's codec reader refuses (LZ4 dependent blocks, a
    corrupt gzip/snappy/zstd stream...): Kafka throws a plain KafkaException,
    which ``Errors.forException`` maps to -1 (fixtures/kafka-codecs)."""


class OutOfOrderSequenceError(LogError):
    """An idempotent producer's batch does not follow its last sequence
    (``OutOfOrderSequenceException``)."""

    error_name = "OUT_OF_ORDER_SEQUENCE_NUMBER"


class InvalidProducerEpochError(LogError):
    """A producer epoch below the one the partition knows (``InvalidProducerEpochException``)."""

    error_name = "INVALID_PRODUCER_EPOCH"


class TransactionCoordinatorFencedError(LogError):
    """A COMMIT/ABORT marker from a coordinator epoch older than the last one the
    partition recorded for its producer (``TransactionCoordinatorFencedException``):
    a deposed coordinator must not end a transaction its successor owns."""

    error_name = "TRANSACTION_COORDINATOR_FENCED"


class SegmentOffsetOverflowError(LogError):
    """An offset that does not fit the segment's int32 relative offsets
    (``LogSegmentOffsetOverflowException``); callers roll before appending."""


class KafkaStorageError(LogError):
    """An I/O failure on a log directory (``KafkaStorageException``)."""

    error_name = "KAFKA_STORAGE_ERROR"
