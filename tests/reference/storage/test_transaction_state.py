"""Transaction bookkeeping without a log: Kafka's ProducerStateManager rules.

Every expected value follows a rule of Kafka 4.0's producer state
(storage/.../log/ProducerAppendInfo.java, ProducerStateManager.java,
UnifiedLog.append), checked in apache/kafka:

* a transactional data batch opens a transaction unless its producer has one
  open (``appendDataBatch``);
* a COMMIT/ABORT marker completes it; a marker with no open transaction
  completes nothing (``appendEndTxnMarker``: "only emit the CompletedTxn for
  non-empty transactions"); an empty control batch is skipped ("the entire
  transaction has been cleaned from the log");
* the ``.txnindex`` LSO of an aborted transaction is the first offset of the
  oldest transaction open for another producer, else marker + 1
  (``lastStableOffset(completedTxn)``), computed after all batches of the
  append are applied (``UnifiedLog.append``: ``update`` before ``completeTxn``);
* a completed transaction stays unstable until the HW or the log start offset
  passes its marker; the first unstable offset is at least the log start offset.
"""

from __future__ import annotations

from lethe_formats.model import AbortedTxn, ControlType
from lethe_formats.records.builder import (
    RecordSpec,
    build_batch,
    build_empty_batch,
    build_end_txn_marker_batch,
)
from lethe_formats.records.scan import LogScanner
from lethe_reference.storage.transactions import TransactionState, batches

A, B = 7, 8


def data(offset: int, producer: int, *, count: int = 1, transactional: bool = True) -> bytes:
    specs = [RecordSpec(b"k%d" % i, b"v", (), 1_000) for i in range(count)]
    return build_batch(
        specs,
        base_offset=offset,
        producer_id=producer,
        producer_epoch=0,
        base_sequence=offset,
        is_transactional=transactional,
    )


def plain(offset: int) -> bytes:
    return build_batch([RecordSpec(b"k", b"v", (), 1_000)], base_offset=offset)


def marker(offset: int, producer: int, kind: ControlType) -> bytes:
    return build_end_txn_marker_batch(
        base_offset=offset,
        producer_id=producer,
        producer_epoch=0,
        control_type=kind,
        coordinator_epoch=0,
        timestamp=1_000,
    )


def append(state: TransactionState, *entries: bytes) -> list[AbortedTxn]:
    """One append of ``entries``; the ``.txnindex`` entries it yields."""
    buffer = b"".join(entries)
    return state.track(batches(buffer, LogScanner(buffer)))


def test_a_transactional_batch_opens_a_transaction_an_idempotent_one_does_not() -> None:
    state = TransactionState()
    append(state, data(0, A, transactional=False))
    assert dict(state.ongoing) == {}
    append(state, data(1, A, count=2))
    append(state, data(3, A))  # same transaction: its first offset stays 1
    assert dict(state.ongoing) == {A: 1}
    assert state.last_stable_offset(high_watermark=4, log_start_offset=0) == 1


def test_an_abort_while_another_producer_is_open_records_its_first_offset() -> None:
    state = TransactionState()
    assert append(state, data(10, A), data(11, B), plain(12)) == []
    assert append(state, marker(13, A, ControlType.ABORT)) == [AbortedTxn(0, A, 10, 13, 11)]
    assert state.last_stable_offset(high_watermark=14, log_start_offset=0) == 10  # unreplicated
    state.on_high_watermark_updated(14)
    assert state.last_stable_offset(high_watermark=14, log_start_offset=0) == 11
    assert append(state, marker(14, B, ControlType.COMMIT)) == []  # commits are not indexed
    state.on_high_watermark_updated(15)
    assert state.last_stable_offset(high_watermark=15, log_start_offset=0) == 15


def test_the_index_lso_counts_transactions_opened_later_in_the_same_append() -> None:
    state = TransactionState()
    append(state, data(0, B))
    aborted = append(state, marker(1, B, ControlType.ABORT), plain(2), data(3, A))
    assert aborted == [AbortedTxn(0, B, 0, 1, 3)]
    assert dict(state.ongoing) == {A: 3}


def test_a_producer_may_close_and_reopen_within_one_append() -> None:
    state = TransactionState()
    aborted = append(state, data(0, A), marker(1, A, ControlType.ABORT), data(2, A))
    assert aborted == [AbortedTxn(0, A, 0, 1, 2)]  # only another producer's txn counts
    assert dict(state.ongoing) == {A: 2}


def test_markers_without_an_open_transaction_and_empty_control_batches_change_nothing() -> None:
    state = TransactionState()
    assert append(state, marker(0, A, ControlType.ABORT)) == []
    append(state, data(1, A))
    emptied = build_empty_batch(
        base_offset=2,
        last_offset_delta=0,
        max_timestamp=1_000,
        producer_id=A,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )
    assert append(state, emptied) == []
    assert dict(state.ongoing) == {A: 1}
    assert state.first_unstable_offset(log_start_offset=0) == 1


def test_a_completed_transaction_is_unstable_until_the_high_watermark_passes_its_marker() -> None:
    state = TransactionState()
    append(state, data(5, A, count=3), marker(8, A, ControlType.COMMIT))
    assert state.last_stable_offset(high_watermark=8, log_start_offset=0) == 5
    state.on_high_watermark_updated(8)  # the marker at 8 is not below the HW yet
    assert state.first_unstable_offset(log_start_offset=0) == 5
    state.on_high_watermark_updated(9)
    assert state.first_unstable_offset(log_start_offset=0) is None
    assert state.last_stable_offset(high_watermark=9, log_start_offset=0) == 9


def test_the_log_start_offset_bounds_and_releases_transactions() -> None:
    state = TransactionState()
    append(state, data(0, A), marker(1, A, ControlType.ABORT), data(2, B))
    assert state.first_unstable_offset(log_start_offset=0) == 0  # A's, not yet replicated
    state.on_log_start_offset_incremented(2)
    assert state.first_unstable_offset(log_start_offset=2) == 2  # B's, open
    assert state.last_stable_offset(high_watermark=3, log_start_offset=3) == 3
