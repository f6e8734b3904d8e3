"""Open and completed transactions of one partition: the last stable offset.

Theory of operation
-------------------
Kafka's ``ProducerStateManager`` tracks, per partition, which transactions are
still undecided; the log's **last stable offset** (LSO) follows from it
(``UnifiedLog.lastStableOffset``)::

    offsets   0   1    2    3   4    5       (producer 7: data at 1-2 and 4, COMMIT at 5)
              a  [t1   t1]  b  [t1]  COMMIT
    LEO 5, HW 5, COMMIT not yet written  ->  first unstable offset 1  ->  LSO = min(1, HW) = 1

* A **transactional data batch** of a producer with no open transaction opens
  one at the batch's first offset (``ProducerAppendInfo.appendDataBatch``); a
  producer has at most one open transaction.
* A **control batch** with a producer id holds an end-transaction marker
  (kafka-facts 3.3). COMMIT or ABORT closes the producer's open transaction and
  yields a :class:`CompletedTxn` (``appendEndTxnMarker``); a marker without an
  open transaction, or an empty control batch (the cleaner emptied it), changes
  nothing.
* A completed transaction stays *unreplicated* until the high watermark passes
  its marker (``completeTxn`` / ``onHighWatermarkUpdated``), or the log start
  offset does (``onLogStartOffsetIncremented``).
* **First unstable offset** = the smallest first offset of an open or
  unreplicated transaction, raised to the log start offset
  (``maybeIncrementFirstUnstableOffset``); **LSO** = that offset if it is below
  the HW, else the HW.

An aborted transaction is written to the ``.txnindex`` of the segment holding
its ABORT marker as ``(producer id, first offset, marker offset, LSO)``, where
that LSO is the first offset of the oldest transaction still open for another
producer, else marker offset + 1 (``ProducerStateManager.lastStableOffset``;
golden transactions: producer 0, 6, 9, 10). :meth:`TransactionState.track`
applies the batches of one append and returns those entries; the log writes them.

**Rebuild on load** (:func:`rebuild`): Kafka restores producer state from its
``.snapshot`` files and replays the batches after the snapshot; a segment it
recovers gets its ``.txnindex`` rebuilt by that replay, batch by batch
(``LogSegment.recover``). lethe keeps the snapshots too
(:mod:`.producer_snapshots`, for idempotent producers), but rebuilds the
transactions by replaying every batch of every segment, oldest first, and
reports each segment's entries; batches
below the log start offset in the first segment count, as the snapshot taken
before a DeleteRecords would (Kafka 4.0 keeps such producers: its snapshot
load drops only expired ones, and a producer with an open transaction never
expires). The known gap: a transaction whose first batches went with a deleted
segment is seen to start at its first batch still on disk (Kafka's snapshot
remembers the real start, which the log start offset then bounds).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from lethe_formats.errors import FormatError
from lethe_formats.model import AbortedTxn, BatchHeader, ControlType
from lethe_formats.records.control import decode_control_key
from lethe_formats.records.scan import Buffer, ScannedEntry, decode_records

__all__ = ["CompletedTxn", "TransactionState", "batches", "marker_type", "rebuild"]

_log = logging.getLogger(__name__)
_MARKERS = (ControlType.ABORT, ControlType.COMMIT)


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction closed by its marker at ``last_offset`` (``CompletedTxn``)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


class TransactionState:
    """Open and unreplicated transactions of one partition (module docstring)."""

    def __init__(self) -> None:
        #: producer id -> first offset of its open transaction (``currentTxnFirstOffset``).
        self._current: dict[int, int] = {}
        #: first offset -> producer id of every open transaction (``ongoingTxns``).
        self._ongoing: dict[int, int] = {}
        #: first offset -> (producer id, marker offset) of a completed, unreplicated one.
        self._unreplicated: dict[int, tuple[int, int]] = {}

    @property
    def ongoing(self) -> Mapping[int, int]:
        """Producer id -> first offset of its open transaction (read-only)."""
        return MappingProxyType(self._current)

    def track(self, batches: Iterable[tuple[BatchHeader, ControlType | None]]) -> list[AbortedTxn]:
        """Apply the batches of one append, in order (``marker``: the COMMIT/ABORT of a
        control batch); return the ``.txnindex`` entries of the transactions they abort.

        As in ``UnifiedLog.append``, every batch is applied first; then each completed
        transaction gets its index LSO (:meth:`lso_after`) and is closed."""
        completed = [txn for header, marker in batches if (txn := self._apply(header, marker))]
        aborted = []
        for txn in completed:
            if txn.is_aborted:
                lso = self.lso_after(txn)
                aborted.append(
                    AbortedTxn(0, txn.producer_id, txn.first_offset, txn.last_offset, lso)
                )
            self._complete(txn)
        return aborted

    def _apply(self, header: BatchHeader, marker: ControlType | None) -> CompletedTxn | None:
        pid = header.producer_id
        if pid < 0:  # ``hasProducerId``: NO_PRODUCER_ID (-1) carries no state
            return None
        if not header.is_control:
            if header.is_transactional and pid not in self._current:
                self._current[pid] = header.base_offset
                self._ongoing[header.base_offset] = pid
            return None
        if marker is None or pid not in self._current:
            return None  # no marker, or a marker of an empty transaction: no effect
        first = self._current.pop(pid)
        return CompletedTxn(pid, first, header.base_offset, marker is ControlType.ABORT)

    def lso_after(self, txn: CompletedTxn) -> int:
        """The LSO written with ``txn``'s ``.txnindex`` entry (module docstring)."""
        others = [first for first, pid in self._ongoing.items() if pid != txn.producer_id]
        return min(others) if others else txn.last_offset + 1

    def _complete(self, txn: CompletedTxn) -> None:
        """Close ``txn``; it stays unstable until the HW passes its marker."""
        self._ongoing.pop(txn.first_offset, None)
        self._unreplicated[txn.first_offset] = (txn.producer_id, txn.last_offset)

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """Forget completed transactions whose marker lies below the HW."""
        self._drop_unreplicated_below(high_watermark)

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """Forget completed transactions whose marker lies below the log start offset."""
        self._drop_unreplicated_below(log_start_offset)

    def _drop_unreplicated_below(self, offset: int) -> None:
        gone = [first for first, (_, last) in self._unreplicated.items() if last < offset]
        for first in gone:
            del self._unreplicated[first]

    def first_unstable_offset(self, log_start_offset: int) -> int | None:
        """The oldest open or unreplicated transaction's first offset, at least
        ``log_start_offset``; None when every transaction is decided and replicated."""
        firsts = [*self._ongoing, *self._unreplicated]
        return max(min(firsts), log_start_offset) if firsts else None

    def last_stable_offset(self, high_watermark: int, log_start_offset: int) -> int:
        """``UnifiedLog.lastStableOffset``: the first unstable offset if below the HW."""
        unstable = self.first_unstable_offset(log_start_offset)
        return unstable if unstable is not None and unstable < high_watermark else high_watermark


def marker_type(data: Buffer, entry: ScannedEntry, file: str | None = None) -> ControlType | None:
    """COMMIT or ABORT for a control batch holding that marker, else None.

    Kafka fails the append or load on a control record it cannot parse; lethe
    logs it and treats the batch as holding no marker."""
    header = entry.header
    if not isinstance(header, BatchHeader) or not header.is_control:
        return None
    try:
        records = decode_records(data, entry, file=file)
        if not records:
            return None  # emptied by the cleaner: the transaction is already gone
        _version, kind = decode_control_key(records[0].key)
    except FormatError as error:
        _log.warning("Unreadable control record at %d in %s: %s", entry.position, file, error)
        return None
    return kind if isinstance(kind, ControlType) and kind in _MARKERS else None


def batches(
    data: Buffer, entries: Iterable[ScannedEntry], file: str | None = None
) -> Iterator[tuple[BatchHeader, ControlType | None]]:
    """``(header, marker)`` of the v2 batches among ``entries`` (positions into ``data``)."""
    for entry in entries:
        if isinstance(entry.header, BatchHeader):
            yield entry.header, marker_type(data, entry, file)


def rebuild(
    segments: Iterable[Iterable[tuple[BatchHeader, ControlType | None]]], log_start_offset: int
) -> tuple[TransactionState, list[list[AbortedTxn]]]:
    """Replay every segment's batches, oldest first, one batch at a time as
    ``LogSegment.recover`` does (module docstring); also return, per segment,
    the ``.txnindex`` entries that replay writes."""
    state = TransactionState()
    aborted = [[txn for batch in segment for txn in state.track([batch])] for segment in segments]
    state.on_log_start_offset_incremented(log_start_offset)
    return state, aborted
