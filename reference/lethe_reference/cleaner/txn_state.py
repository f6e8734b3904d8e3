"""Transaction state while the cleaner walks a log (``CleanedTransactionMetadata``).

Theory of operation
-------------------
The cleaner decides about transactional data and markers as it reads the log
in offset order (kafka-facts 4.4). The aborted transactions of the range come
from the ``.txnindex`` files and wait in a queue ordered by first offset; a
transaction becomes *ongoing aborted* once the walk reaches its first offset.

* **data batch** (:meth:`TxnState.on_batch_read`): transactional and its
  producer has an ongoing aborted transaction -> remember the batch's last
  offset and answer *discard*; transactional otherwise -> the producer has an
  *ongoing committed* transaction; non-transactional -> keep.
* **ABORT marker**: ends the ongoing aborted transaction. If any of its batches
  was seen in this walk the marker stays (not discardable) and the aborted
  transaction is written again to the cleaned segment's ``.txnindex``
  (:attr:`TxnState.cleaned_index`); otherwise it is discardable.
* **COMMIT marker**: discardable iff no data batch of the transaction was seen
  in this walk (all of its data was compacted away earlier).
* an **empty control batch** (an earlier cleaning emptied it) is discardable;
  other control types never are.

One instance serves a whole cleaning round (all segment groups), as in Kafka;
the offset map build uses its own instance.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from lethe_formats.errors import FormatError
from lethe_formats.model import AbortedTxn, BatchHeader, ControlType, Record
from lethe_formats.records.control import decode_control_key

__all__ = ["TxnState"]


@dataclass(slots=True)
class _OngoingAborted:
    txn: AbortedTxn
    last_observed_batch_offset: int | None = None


class TxnState:
    """See the module docstring."""

    def __init__(self) -> None:
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _OngoingAborted] = {}
        self._queue: list[tuple[int, int, AbortedTxn]] = []
        self._seq = itertools.count()
        #: Where kept aborted transactions go (the cleaned segment's ``.txnindex``).
        self.cleaned_index: list[AbortedTxn] | None = None

    def add_aborted_transactions(self, txns: Iterable[AbortedTxn]) -> None:
        for txn in txns:
            heapq.heappush(self._queue, (txn.first_offset, next(self._seq), txn))

    def _consume_aborted_up_to(self, offset: int) -> None:
        while self._queue and self._queue[0][0] <= offset:
            _, _, txn = heapq.heappop(self._queue)
            self._ongoing_aborted.setdefault(txn.producer_id, _OngoingAborted(txn))

    def on_batch_read(self, header: BatchHeader | None, last_offset: int) -> bool:
        """A data batch (``None``: a legacy entry); True when it may be discarded."""
        self._consume_aborted_up_to(last_offset)
        if header is None or not header.is_transactional:
            return False
        ongoing = self._ongoing_aborted.get(header.producer_id)
        if ongoing is not None:
            ongoing.last_observed_batch_offset = last_offset
            return True
        self._ongoing_committed.add(header.producer_id)
        return False

    def on_control_batch_read(self, header: BatchHeader, records: tuple[Record, ...]) -> bool:
        """A control batch; True when it may be discarded."""
        self._consume_aborted_up_to(header.last_offset)
        if not records:
            return True
        try:
            _version, kind = decode_control_key(records[0].key)
        except FormatError:
            return False  # Kafka parses an unknown/short key as UNKNOWN: never discarded
        producer_id = header.producer_id
        if kind == ControlType.ABORT:
            ongoing = self._ongoing_aborted.pop(producer_id, None)
            if ongoing is not None and ongoing.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(ongoing.txn)
                return False
            return True
        if kind == ControlType.COMMIT:
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False
