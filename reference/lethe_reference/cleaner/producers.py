"""Producer facts the cleaner needs, read from the log itself.

Theory of operation
-------------------
Kafka's cleaner asks the log's ``ProducerStateManager`` two things:

* ``lastRecordsOfActiveProducers``: per producer id still active, the last
  offset of its last *data* batch (none when its epoch moved on through a
  marker) and its epoch; the cleaner keeps that batch, empty if need be, so
  the producer's sequence survives (kafka-facts 4.2, KIP534-TXN-7);
* the **last stable offset**: the cleaner never touches an offset at or above
  the first offset of a transaction still open (KIP534-TXN-9).

:func:`scan_producers` rebuilds both from the batches on disk (the log's own
producer state, :mod:`lethe_reference.storage.producer_state`, is not consulted
yet), as Kafka's ``ProducerStateManager`` is rebuilt from the log on load:
every batch with a producer id updates that producer's entry; a data batch
sets its last data offset (a new epoch forgets the old one); a transactional
data batch opens a transaction unless one is open; a COMMIT/ABORT marker
closes it and, when it carries a newer epoch, clears the last data offset.

A producer stops being active when ``now - its last batch's max timestamp >=
producer.id.expiration.ms`` and it has no open transaction
(``removeExpiredProducers``), or when its last batch lies below the log start
offset (``evictUnretainedProducers`` after retention or DeleteRecords).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lethe_formats.model import BatchHeader

from lethe_reference.cleaner.filter import LastRecord

__all__ = ["ProducerScan", "scan_producers"]


@dataclass(slots=True)
class _Entry:
    epoch: int
    last_data_offset: int | None
    last_offset: int
    last_timestamp: int
    open_txn_first_offset: int | None = None


@dataclass(frozen=True, slots=True)
class ProducerScan:
    """The result of :func:`scan_producers`."""

    active: dict[int, LastRecord]
    #: First offset of the oldest open transaction (None: none is open).
    first_unstable_offset: int | None


def scan_producers(
    headers: Iterable[BatchHeader], *, now_ms: int, expiration_ms: int, log_start_offset: int
) -> ProducerScan:
    """Producer state after ``headers`` (every v2 batch of the log, in order)."""
    entries: dict[int, _Entry] = {}
    for header in headers:
        if header.producer_id < 0:
            continue
        _apply(entries, header)
    active: dict[int, LastRecord] = {}
    unstable: int | None = None
    for pid, entry in entries.items():
        open_first = entry.open_txn_first_offset
        if open_first is not None:
            unstable = open_first if unstable is None else min(unstable, open_first)
        expired = open_first is None and now_ms - entry.last_timestamp >= expiration_ms
        if expired or entry.last_offset < log_start_offset:
            continue
        active[pid] = LastRecord(entry.last_data_offset, entry.epoch)
    return ProducerScan(active, unstable)


def _apply(entries: dict[int, _Entry], header: BatchHeader) -> None:
    entry = entries.get(header.producer_id)
    if entry is None:
        entry = entries[header.producer_id] = _Entry(header.producer_epoch, None, -1, -1)
    if header.producer_epoch != entry.epoch:
        entry.epoch = header.producer_epoch
        entry.last_data_offset = None
    entry.last_offset = header.last_offset
    entry.last_timestamp = header.max_timestamp
    if header.is_control:
        if header.is_transactional:
            entry.open_txn_first_offset = None
        return
    entry.last_data_offset = header.last_offset
    if header.is_transactional and entry.open_txn_first_offset is None:
        entry.open_txn_first_offset = header.base_offset
