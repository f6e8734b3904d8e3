"""Idempotent and transactional producer state of one partition (sans-IO).

Theory of operation
-------------------
Kafka keeps, per partition and per producer id, a ``ProducerStateEntry``: the
producer's epoch, the coordinator epoch of its last marker, the timestamp of
its last batch, the first offset of its open transaction, and the metadata of
its last :data:`BATCHES_TO_RETAIN` (5) data batches. This module is that table
(:class:`ProducerTable`) and the rules that change it; the snapshot files and
the replay on load are :mod:`.producer_snapshots`.

A client batch with a producer id is checked against its entry
(``UnifiedLog.analyzeAndValidateProducerState`` + ``ProducerAppendInfo``),
after the batch itself was validated and offsets were assigned:

1. **Duplicate** (``findDuplicateBatch``): same epoch, and a retained batch
   with exactly the same first and last sequence. Nothing is appended; the
   response is NONE with the *original* first offset and, as
   ``log_append_time``, the original batch's max timestamp.
2. **Epoch** (``checkProducerEpoch``): an epoch below the known one is
   INVALID_PRODUCER_EPOCH (47).
3. **Sequence** (``checkSequence``): with a new epoch the first sequence must
   be 0, unless the producer had no epoch yet; with the same epoch it must
   follow the last sequence (``last + 1``, or 0 after Int.MAX). A producer the
   partition does not know (first append, expired, or loaded without batch
   metadata) may start anywhere. Otherwise OUT_OF_ORDER_SEQUENCE_NUMBER (45).

Kafka 4.0 never answers UNKNOWN_PRODUCER_ID (59) nor DUPLICATE_SEQUENCE_NUMBER
(46) on Produce (no code path in its 4.0 storage raises them), so neither does
lethe. Batches replayed on load or appended as a follower are applied without
the sequence check and with a stale epoch only logged (``AppendOrigin.REPLICATION``).

A COMMIT/ABORT marker from the coordinator is refused with
TRANSACTION_COORDINATOR_FENCED (52) when its coordinator epoch is below the
one the entry recorded (``checkCoordinatorEpoch``: a deposed coordinator);
replayed, it is applied as Kafka applies a replicated one. A COMMIT/ABORT
marker sets the entry's epoch (a new epoch forgets the
batches), coordinator epoch and last timestamp (the marker record's) and
closes its transaction (``appendEndTxnMarker``).

A producer **expires** when it has no open transaction and ``now - last
timestamp >= producer.id.expiration.ms`` (``isProducerExpired``); the log
removes expired producers every ``producer.id.expiration.check.interval.ms``
and skips them when it loads a snapshot.

**Snapshot order.** Kafka writes the entries in the iteration order of its
``HashMap<Long, ProducerStateEntry>``: by bucket ``(h ^ h >>> 16) & (capacity
- 1)`` with ``h = (int)(id ^ id >>> 32)``, insertion order within a bucket;
the capacity starts at 16 and doubles whenever the size passes 3/4 of it and
never shrinks. :meth:`ProducerTable.snapshot_entries` reproduces that order,
so a snapshot holds Kafka's bytes, not only Kafka's entries.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lethe_formats.errors import FormatError
from lethe_formats.model import NO_PRODUCER_EPOCH, NO_SEQUENCE, BatchHeader, ControlType
from lethe_formats.records.control import decode_end_txn_marker
from lethe_formats.records.scan import Buffer, ScannedEntry, decode_records
from lethe_formats.storage.producer_snapshot import ProducerSnapshotEntry

from lethe_reference.storage import errors

__all__ = [
    "BATCHES_TO_RETAIN",
    "BatchMetadata",
    "ProducerBatch",
    "ProducerEntry",
    "ProducerTable",
    "producer_batches",
]

_log = logging.getLogger(__name__)
BATCHES_TO_RETAIN = 5
_INT_MAX = 0x7FFFFFFF
_NO_TIMESTAMP = -1


def _decrement_wrap(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``."""
    if sequence < decrement:
        return _INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


@dataclass(frozen=True, slots=True)
class ProducerBatch:
    """A v2 batch with a producer id, as producer state sees it; for a
    COMMIT/ABORT control batch also the marker's type, coordinator epoch and
    record timestamp (``marker`` None: a data batch, or an empty control batch)."""

    header: BatchHeader
    marker: ControlType | None = None
    coordinator_epoch: int = -1
    marker_timestamp: int = _NO_TIMESTAMP


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
    coordinator_epoch: int = -1
    last_timestamp: int = _NO_TIMESTAMP
    current_txn_first_offset: int | None = None
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

    def set_epoch(self, epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: a new epoch forgets the retained batches."""
        if self.epoch != epoch:
            self.batches.clear()
            self.epoch = epoch

    def is_expired(self, now_ms: int, expiration_ms: int) -> bool:
        """``isProducerExpired``: idle that long and no open transaction."""
        return (
            self.current_txn_first_offset is None and now_ms - self.last_timestamp >= expiration_ms
        )

    def to_snapshot(self) -> ProducerSnapshotEntry:
        """The snapshot row ``writeSnapshot`` stores (only the last batch survives)."""
        last = self.batches[-1] if self.batches else None
        return ProducerSnapshotEntry(
            self.producer_id,
            self.epoch,
            last.last_seq if last else NO_SEQUENCE,
            last.last_offset if last else -1,
            last.offset_delta if last else 0,
            self.last_timestamp,
            self.coordinator_epoch,
            -1 if self.current_txn_first_offset is None else self.current_txn_first_offset,
        )

    @classmethod
    def from_snapshot(cls, row: ProducerSnapshotEntry) -> ProducerEntry:
        """``readSnapshot``: batch metadata only when the stored last offset is >= 0."""
        entry = cls(
            row.producer_id,
            row.producer_epoch,
            row.coordinator_epoch,
            row.timestamp,
            row.ongoing_txn_first_offset,
        )
        if row.has_batch_metadata:
            entry.batches.append(
                BatchMetadata(row.last_sequence, row.last_offset, row.offset_delta, row.timestamp)
            )
        return entry


def _java_long_hash(value: int) -> int:
    """``HashMap.hash(Long.valueOf(value))`` as an unsigned 32-bit int."""
    unsigned = value & 0xFFFFFFFFFFFFFFFF
    h = (unsigned ^ (unsigned >> 32)) & 0xFFFFFFFF
    return h ^ (h >> 16)


class ProducerTable:
    """The producer entries of one partition (module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: dict[int, ProducerEntry] = {}
        #: The Java HashMap's table size; it only ever grows (module docstring).
        self._capacity = 16

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, producer_id: int) -> ProducerEntry | None:
        return self.entries.get(producer_id)

    def _add(self, entry: ProducerEntry) -> None:
        self.entries[entry.producer_id] = entry
        while len(self.entries) > self._capacity * 3 // 4:
            self._capacity *= 2

    def clear(self) -> None:
        self.entries.clear()

    def load(self, rows: Iterable[ProducerSnapshotEntry], now_ms: int, expiration_ms: int) -> None:
        """``loadFromSnapshot``: the rows of a snapshot, expired producers skipped."""
        for row in rows:
            entry = ProducerEntry.from_snapshot(row)
            if not entry.is_expired(now_ms, expiration_ms):
                self._add(entry)

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """``removeExpiredProducers``; returns the ids removed."""
        gone = [p for p, e in self.entries.items() if e.is_expired(now_ms, expiration_ms)]
        for producer_id in gone:
            del self.entries[producer_id]
        return gone

    def snapshot_entries(self) -> list[ProducerSnapshotEntry]:
        """The rows of a snapshot in Kafka's ``HashMap`` iteration order."""
        mask = self._capacity - 1
        ordered = sorted(
            enumerate(self.entries.values()),
            key=lambda item: (_java_long_hash(item[1].producer_id) & mask, item[0]),
        )
        return [entry.to_snapshot() for _, entry in ordered]

    # --- client appends -----------------------------------------------------------------

    def check_client_batch(
        self,
        header: BatchHeader,
        first_offset: int,
        *,
        sequence: bool = True,
        coordinator_epoch: int | None = None,
    ) -> BatchMetadata | None:
        """Validate a client batch that got ``first_offset``: the original batch of a
        duplicate, None to append, or a typed :class:`~.errors.LogError` (45, 47, 52).
        ``coordinator_epoch``: a COMMIT/ABORT marker's, checked after the epoch
        (``appendEndTxnMarker``)."""
        entry = self.entries.get(header.producer_id)
        if entry is None:
            return None
        if header.is_control or not sequence:  # a coordinator's batch: no sequence
            self._check_epoch(entry, header.producer_epoch, first_offset)
            if coordinator_epoch is not None:
                self._check_coordinator_epoch(entry, coordinator_epoch, first_offset)
            return None
        duplicate = entry.find_duplicate(header)
        if duplicate is not None:
            return duplicate
        self._check_epoch(entry, header.producer_epoch, first_offset)
        self._check_sequence(entry, header, first_offset)
        return None

    def _check_epoch(self, entry: ProducerEntry, epoch: int, offset: int) -> None:
        if epoch < entry.epoch:
            raise errors.InvalidProducerEpochError(
                f"Epoch of producer {entry.producer_id} at offset {offset} in {self.name} is "
                f"{epoch}, which is smaller than the last seen epoch {entry.epoch}"
            )

    def _check_coordinator_epoch(self, entry: ProducerEntry, epoch: int, offset: int) -> None:
        if epoch < entry.coordinator_epoch:
            raise errors.TransactionCoordinatorFencedError(
                f"Invalid coordinator epoch for producerId {entry.producer_id} at offset "
                f"{offset} in partition {self.name}: {epoch} (zombie), "
                f"{entry.coordinator_epoch} (current)"
            )

    def _check_sequence(self, entry: ProducerEntry, header: BatchHeader, offset: int) -> None:
        seq = header.base_sequence
        if header.producer_epoch != entry.epoch:
            if seq != 0 and entry.epoch != NO_PRODUCER_EPOCH:
                raise errors.OutOfOrderSequenceError(
                    f"Invalid sequence number for new epoch of producer {entry.producer_id}at "
                    f"offset {offset} in partition {self.name}: {header.producer_epoch} (request "
                    f"epoch), {seq} (seq. number), {entry.epoch} (current producer epoch)"
                )
            return
        last = entry.last_seq
        in_sequence = seq == last + 1 or (seq == 0 and last == _INT_MAX)
        if entry.epoch != NO_PRODUCER_EPOCH and not in_sequence:
            raise errors.OutOfOrderSequenceError(
                f"Out of order sequence number for producer {entry.producer_id} at offset "
                f"{offset} in partition {self.name}: {seq} (incoming seq. number), {last} "
                "(current end sequence number)"
            )

    # --- applying batches ---------------------------------------------------------------

    def apply(self, batch: ProducerBatch) -> tuple[int, int] | None:
        """Record an appended (or replayed) batch (``ProducerAppendInfo.append`` +
        ``update``); returns ``(first offset, marker offset)`` of a transaction a
        marker closed, else None. A stale epoch is logged, as on replication."""
        header = batch.header
        entry = self.entries.get(header.producer_id)
        if entry is None:
            entry = ProducerEntry(header.producer_id)
            self._add(entry)
        if header.producer_epoch < entry.epoch:
            _log.warning(
                "Epoch of producer %d at offset %d in %s is %d, smaller than the last seen %d",
                header.producer_id,
                header.base_offset,
                self.name,
                header.producer_epoch,
                entry.epoch,
            )
        if header.is_control:
            return self._apply_marker(entry, batch)
        entry.set_epoch(header.producer_epoch)
        entry.batches.append(
            BatchMetadata(
                header.last_sequence,
                header.last_offset,
                header.last_offset_delta,
                header.max_timestamp,
            )
        )
        entry.last_timestamp = header.max_timestamp
        if header.is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = header.base_offset
        return None

    @staticmethod
    def _apply_marker(entry: ProducerEntry, batch: ProducerBatch) -> tuple[int, int] | None:
        if batch.marker is None:
            return None  # emptied by the cleaner: the transaction is already gone
        first = entry.current_txn_first_offset
        entry.set_epoch(batch.header.producer_epoch)
        entry.coordinator_epoch = batch.coordinator_epoch
        entry.last_timestamp = batch.marker_timestamp
        entry.current_txn_first_offset = None
        return None if first is None else (first, batch.header.base_offset)

    def __iter__(self) -> Iterator[ProducerEntry]:
        return iter(self.entries.values())


def producer_batches(
    data: Buffer, entries: Iterable[ScannedEntry], file: str | None = None
) -> Iterator[ProducerBatch]:
    """The v2 batches among ``entries`` (positions into ``data``), markers decoded.

    Kafka fails the append or load on a control record it cannot parse; lethe
    logs it and treats the batch as holding no marker (as :mod:`.transactions`)."""
    for entry in entries:
        header = entry.header
        if not isinstance(header, BatchHeader):
            continue
        if not header.is_control or header.producer_id < 0:
            yield ProducerBatch(header)
            continue
        try:
            records = decode_records(data, entry, file=file)
            if not records:
                yield ProducerBatch(header)
                continue
            marker = decode_end_txn_marker(records[0])
        except FormatError as error:
            _log.warning("Unreadable control record at %d in %s: %s", entry.position, file, error)
            yield ProducerBatch(header)
            continue
        timestamp = header.base_timestamp + records[0].timestamp_delta
        yield ProducerBatch(header, marker.control_type, marker.coordinator_epoch, timestamp)
