"""Idempotent-producer state of one partition: epochs, sequences, duplicates.

Theory of operation
-------------------
Kafka keeps, per partition and per producer id, a ``ProducerStateEntry``: the
producer's epoch and the metadata of its last :data:`BATCHES_TO_RETAIN` (5)
batches. A client append with a producer id (``UnifiedLog.analyzeAndValidate
ProducerState``) is checked against it, after the batch itself was validated:

1. **Duplicate** (``findDuplicateBatch``): same epoch, and a retained batch with
   exactly the same first and last sequence. Nothing is appended; the response
   carries the *original* offsets, and Kafka's ``log_append_time_ms`` of a
   duplicate is the original batch's max timestamp (``appendInfo.setLogAppend
   Time(duplicate.timestamp)``, whatever the timestamp type).
2. **Epoch** (``checkProducerEpoch``): an epoch below the known one is
   INVALID_PRODUCER_EPOCH (47).
3. **Sequence** (``checkSequence``): with a new epoch the first sequence must be
   0, unless the producer had no epoch yet; with the same epoch it must follow
   the last sequence (``last + 1``, or 0 after Int.MAX). A producer Kafka does
   not know (first append, or every batch deleted) may start anywhere.
   Otherwise OUT_OF_ORDER_SEQUENCE_NUMBER (45).

Kafka 4.0 never sends DUPLICATE_SEQUENCE_NUMBER (46): only its clients still
know the code, so neither does this module.

After a successful append the batch's ``(last sequence, last offset, offset
delta, max timestamp)`` is recorded; a new epoch forgets the older batches.
Entries whose last batch lies below the log start offset are dropped
(``ProducerStateManager.truncateHead`` after DeleteRecords or retention);
here that happens lazily, on the next check, which nobody can tell apart.

Limits (documented, not hidden): state lives in memory only (Kafka snapshots
it to ``.snapshot`` files), so after a restart every producer is unknown and
may continue at any sequence; producer ids never expire
(``producer.id.expiration.ms``). Open transactions (``currentTxnFirstOffset``)
are tracked by storage for the last stable offset
(:mod:`lethe_reference.storage.transactions`); the INVALID_TXN_STATE check (a
non-transactional batch while the producer's transaction is open) is not made,
as this broker has no transaction coordinator.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from lethe_formats.model import NO_PRODUCER_EPOCH, NO_SEQUENCE, BatchHeader
from lethe_formats.protocol.error_codes import ErrorCode

__all__ = [
    "BATCHES_TO_RETAIN",
    "BatchMetadata",
    "ProducerEntry",
    "ProducerStateError",
    "ProducerStates",
]

BATCHES_TO_RETAIN = 5
_INT_MAX = 0x7FFFFFFF


def _decrement_wrap(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``."""
    if sequence < decrement:
        return _INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One retained batch (``BatchMetadata``)."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrement_wrap(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerEntry:
    """What the partition knows of one producer id (``ProducerStateEntry``)."""

    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        first, last = header.base_sequence, header.last_sequence
        return next((b for b in self.batches if b.first_seq == first and b.last_seq == last), None)


class ProducerStateError(Exception):
    """A producer-state check failed with ``code`` (45 or 47)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ProducerStates:
    """The producer entries of one partition (``ProducerStateManager``, in memory)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: dict[int, ProducerEntry] = {}

    def truncate_head(self, log_start_offset: int) -> None:
        """Forget producers whose last batch is below the log start offset."""
        gone = [
            pid
            for pid, entry in self.entries.items()
            if entry.batches and entry.last_data_offset < log_start_offset
        ]
        for pid in gone:
            del self.entries[pid]

    def check(self, header: BatchHeader, first_offset: int) -> BatchMetadata | None:
        """Validate a client batch that will get ``first_offset``; returns the
        original batch of a duplicate, None to append, or raises
        :class:`ProducerStateError`."""
        entry = self.entries.get(header.producer_id)
        if entry is None:
            return None
        duplicate = entry.find_duplicate(header)
        if duplicate is not None:
            return duplicate
        self._check_epoch(entry, header, first_offset)
        self._check_sequence(entry, header, first_offset)
        return None

    def _check_epoch(self, entry: ProducerEntry, header: BatchHeader, offset: int) -> None:
        if header.producer_epoch < entry.epoch:
            raise ProducerStateError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {entry.producer_id} at offset {offset} in {self.name} is "
                f"{header.producer_epoch}, which is smaller than the last seen epoch {entry.epoch}",
            )

    def _check_sequence(self, entry: ProducerEntry, header: BatchHeader, offset: int) -> None:
        seq = header.base_sequence
        if header.producer_epoch != entry.epoch:
            if seq != 0 and entry.epoch != NO_PRODUCER_EPOCH:
                raise ProducerStateError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {entry.producer_id}at "
                    f"offset {offset} in partition {self.name}: {header.producer_epoch} (request "
                    f"epoch), {seq} (seq. number), {entry.epoch} (current producer epoch)",
                )
            return
        last = entry.last_seq
        in_sequence = seq == last + 1 or (seq == 0 and last == _INT_MAX)
        if entry.epoch != NO_PRODUCER_EPOCH and not in_sequence:
            raise ProducerStateError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {entry.producer_id} at offset "
                f"{offset} in partition {self.name}: {seq} (incoming seq. number), {last} "
                "(current end sequence number)",
            )

    def record(self, header: BatchHeader, last_offset: int, max_timestamp: int) -> None:
        """Remember an appended batch (``ProducerStateEntry.addBatch``)."""
        entry = self.entries.setdefault(header.producer_id, ProducerEntry(header.producer_id))
        if entry.epoch != header.producer_epoch:
            entry.batches.clear()
            entry.epoch = header.producer_epoch
        entry.batches.append(
            BatchMetadata(
                header.last_sequence, last_offset, header.last_offset_delta, max_timestamp
            )
        )
