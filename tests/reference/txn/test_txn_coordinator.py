"""The transaction coordinator as plain objects: states, epochs, errors, records.

Expected values are Kafka 4.0's: the golden ``__transaction_state-24`` (a
librdkafka 2.16 producer, transaction version 0: the epoch stays 0 through
commit, abort, commit; Empty has null partitions and start -1, Complete an
empty array and the transaction's start time) and the rules of
``TransactionCoordinator`` / ``TransactionMetadata``.
"""

from __future__ import annotations

import pytest
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_reference.cluster.txn.coordinator import TransactionCoordinator, TxnConfig
from lethe_reference.cluster.txn.state import IllegalTransitionError, TxnState, check_transition
from txn_support import FakeIO, loaded_coordinator

TID = "golden-txn-writer"
TP = ("golden-txn", 0)
E = ErrorCode


def _partition(c: TransactionCoordinator) -> int:
    return c.partition_for(TID)


def test_partition_is_javas_hash_of_the_id() -> None:
    assert TransactionCoordinator(FakeIO()).partition_for(TID) == 24  # golden case


def test_state_table_refuses_what_kafka_refuses() -> None:
    check_transition(TxnState.ONGOING, TxnState.PREPARE_COMMIT)
    with pytest.raises(IllegalTransitionError):
        check_transition(TxnState.EMPTY, TxnState.PREPARE_COMMIT)
    with pytest.raises(IllegalTransitionError):
        check_transition(TxnState.PREPARE_COMMIT, TxnState.COMPLETE_ABORT)
    assert TxnState.PREPARE_EPOCH_FENCE.kafka_name == "PrepareEpochFence"


def test_tv0_commit_abort_commit_writes_the_golden_sequence() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    assert c.init_producer_id(TID, 60000).producer_epoch == 0
    for commit in (True, False, True):
        io.now += 10
        assert c.add_partitions(TID, 0, 0, [TP]) is E.NONE
        io.now += 10
        assert c.end_txn(TID, 0, 0, commit).error is E.NONE
    states = [s for s, _ in io.values(_partition(c))]
    assert states == [
        "Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "Ongoing",
        "PrepareAbort", "CompleteAbort", "Ongoing", "PrepareCommit", "CompleteCommit",
    ]  # fmt: skip
    values = [v for _, v in io.values(_partition(c))]
    assert {v.producer_epoch for v in values} == {0}
    assert (
        values[0].transaction_partitions is None and values[0].transaction_start_timestamp_ms == -1
    )
    assert values[3].transaction_partitions == ()
    assert values[3].transaction_start_timestamp_ms == values[1].transaction_start_timestamp_ms
    assert {v.client_transaction_version for v in values} == {0}
    assert [(m.commit, m.producer_epoch, m.partitions) for m in io.markers] == [
        (True, 0, frozenset({TP})), (False, 0, frozenset({TP})), (True, 0, frozenset({TP})),
    ]  # fmt: skip


def test_tv2_bumps_the_epoch_at_every_end() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    assert c.add_partitions(TID, 0, 0, [TP], client_tv=2) is E.NONE
    result = c.end_txn(TID, 0, 0, True, client_tv=2)
    assert (result.error, result.producer_id, result.producer_epoch) == (E.NONE, 0, 1)
    assert io.markers[-1].producer_epoch == 1  # markers carry the bumped epoch
    prepare = io.values(_partition(c))[-2][1]
    assert (prepare.producer_epoch, prepare.client_transaction_version) == (1, 2)
    # a retry with the old epoch answers NONE with the current id and epoch
    retry = c.end_txn(TID, 0, 0, True, client_tv=2)
    assert (retry.error, retry.producer_epoch) == (E.NONE, 1)
    # the next transaction uses epoch 1; the old epoch is fenced
    assert c.add_partitions(TID, 0, 0, [TP], client_tv=2) is E.PRODUCER_FENCED
    assert c.add_partitions(TID, 0, 1, [TP], client_tv=2) is E.NONE


def test_tv2_abort_without_a_transaction_bumps_the_epoch() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    result = c.end_txn(TID, 0, 0, False, client_tv=2)
    assert (result.error, result.producer_epoch) == (E.NONE, 1)
    assert c.end_txn(TID, 0, 1, True, client_tv=2).error is E.INVALID_TXN_STATE


def test_end_errors_tv1() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    assert c.end_txn(TID, 0, 0, True).error is E.INVALID_TXN_STATE  # Empty
    assert c.end_txn(TID, 5, 0, True).error is E.INVALID_PRODUCER_ID_MAPPING
    assert c.end_txn("other", 0, 0, True).error in (
        E.NOT_COORDINATOR,
        E.INVALID_PRODUCER_ID_MAPPING,
    )
    c.add_partitions(TID, 0, 0, [TP])
    assert c.end_txn(TID, 0, 1, True).error is E.PRODUCER_FENCED
    assert c.end_txn(TID, 0, 0, False).error is E.NONE
    assert c.end_txn(TID, 0, 0, False).error is E.NONE  # CompleteAbort + abort: a retry
    assert c.end_txn(TID, 0, 0, True).error is E.INVALID_TXN_STATE


def test_init_fences_an_ongoing_transaction_and_aborts_it() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    c.add_partitions(TID, 0, 0, [TP])
    assert c.init_producer_id(TID, 60000).error is E.CONCURRENT_TRANSACTIONS
    # the fence (epoch 1) and the server's version-2 abort (epoch 2)
    assert io.markers[-1].commit is False and io.markers[-1].producer_epoch == 2
    assert [s for s, _ in io.values(_partition(c))][-2:] == ["PrepareAbort", "CompleteAbort"]
    again = c.init_producer_id(TID, 60000)
    assert (again.error, again.producer_id, again.producer_epoch) == (E.NONE, 0, 3)
    assert c.add_partitions(TID, 0, 0, [TP]) is E.PRODUCER_FENCED
    assert c.end_txn(TID, 0, 0, True).error is E.PRODUCER_FENCED


def test_init_with_expected_epoch() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    assert c.init_producer_id(TID, 60000, (0, 0)).producer_epoch == 1
    assert c.init_producer_id(TID, 60000, (0, 0)).producer_epoch == 1  # retry: last epoch
    assert c.init_producer_id(TID, 60000, (7, 1)).error is E.PRODUCER_FENCED
    assert c.init_producer_id(TID, 60000, (0, 9)).error is E.PRODUCER_FENCED


def test_init_checks_id_and_timeout() -> None:
    c = loaded_coordinator(FakeIO(), TID, TxnConfig(max_timeout_ms=1000))
    assert c.init_producer_id(TID, 1001).error is E.INVALID_TRANSACTION_TIMEOUT
    assert c.init_producer_id(TID, 0).error is E.INVALID_TRANSACTION_TIMEOUT
    assert c.init_producer_id("", 100).error is E.INVALID_REQUEST
    assert TransactionCoordinator(FakeIO()).init_producer_id(TID, 100).error is E.NOT_COORDINATOR


def test_add_partitions_errors() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    assert c.add_partitions(TID, 0, 0, [TP]) is E.INVALID_PRODUCER_ID_MAPPING  # unknown id
    c.init_producer_id(TID, 60000)
    assert c.add_partitions(TID, 1, 0, [TP]) is E.INVALID_PRODUCER_ID_MAPPING
    assert c.add_partitions(TID, 0, 3, [TP]) is E.PRODUCER_FENCED
    assert c.add_partitions(TID, 0, 0, [TP]) is E.NONE
    written = len(io.records(_partition(c)))
    assert c.add_partitions(TID, 0, 0, [TP]) is E.NONE
    assert len(io.records(_partition(c))) == written  # already in: nothing written
    io.fail_with = int(E.NOT_LEADER_OR_FOLLOWER)
    assert c.add_partitions(TID, 0, 0, [("t", 9)]) is E.NOT_COORDINATOR
    assert ("t", 9) not in c.txns[TID].partitions


def test_verify_only() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    c.add_partitions(TID, 0, 0, [TP])
    result = c.verify_partitions(TID, 0, 0, [TP, ("x", 1)])
    assert result == {TP: E.NONE, ("x", 1): E.TRANSACTION_ABORTABLE}
    assert c.verify_partitions(TID, 0, 1, [TP]) == {TP: E.PRODUCER_FENCED}
    assert c.verify_partitions(TID, 4, 0, [TP]) == {TP: E.INVALID_PRODUCER_ID_MAPPING}
    assert "x" not in {t for t, _ in c.txns[TID].partitions}


def test_timeout_aborts_with_a_fenced_epoch() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 1000)
    c.add_partitions(TID, 0, 0, [TP])
    io.now += 1000
    assert c.abort_timed_out() == []  # start + timeout is not yet passed
    assert c.next_timeout_ms() == io.now + 1
    io.now += 1
    assert c.abort_timed_out() == [TID]
    assert c.txns[TID].state is TxnState.COMPLETE_ABORT
    assert io.markers[-1].commit is False
    assert c.end_txn(TID, 0, 0, True).error is E.PRODUCER_FENCED
    assert c.next_timeout_ms() is None


def test_reload_completes_prepared_and_keeps_ongoing() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    c.init_producer_id(TID, 60000)
    c.add_partitions(TID, 0, 0, [TP])
    records = io.records(_partition(c))
    # a coordinator that died after PrepareCommit was written: replay it
    from dataclasses import replace

    from lethe_formats.coordinator.transaction_log import encode_transaction_value
    from lethe_reference.cluster.txn.metadata import to_value, transit

    prepared = transit(c.txns[TID], TxnState.PREPARE_COMMIT, io.now)
    key = records[-1][0]
    with_prepare = [*records, (key, encode_transaction_value(to_value(prepared)))]
    io2 = FakeIO(now=io.now + 5, epoch=3)
    fresh = TransactionCoordinator(io2)
    fresh.load(_partition(fresh), with_prepare)
    assert fresh.txns[TID].state is TxnState.COMPLETE_COMMIT
    assert [(m.commit, m.coordinator_epoch, m.partitions) for m in io2.markers] == [
        (True, 3, frozenset({TP}))
    ]
    io3 = FakeIO(now=io.now + 5)
    ongoing = TransactionCoordinator(io3)
    ongoing.load(_partition(ongoing), records)
    assert ongoing.txns[TID].state is TxnState.ONGOING and io3.markers == []
    assert replace(ongoing.txns[TID]) == c.txns[TID]


def test_describe_and_list() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID)
    assert c.describe(TID).error is E.TRANSACTIONAL_ID_NOT_FOUND
    c.init_producer_id(TID, 60000)
    c.add_partitions(TID, 0, 0, [TP])
    described = c.describe(TID)
    assert described.error is E.NONE and described.metadata is not None
    assert described.metadata.state.kafka_name == "Ongoing"
    listed, unknown = c.list_transactions(["Ongoing", "Bogus"])
    assert [m.transactional_id for m in listed] == [TID] and unknown == ["Bogus"]
    assert c.list_transactions(["Empty"])[0] == []
    assert c.list_transactions(producer_ids=[5])[0] == []
    io.now += 100
    assert c.list_transactions(duration_ms=100)[0] == []
    assert len(c.list_transactions(duration_ms=99)[0]) == 1


def test_exhausted_epoch_rotates_the_producer_id() -> None:
    """``isEpochExhausted`` (epoch >= Short.MAX_VALUE - 1): InitProducerId hands out a new
    producer id at epoch 0 and remembers the old one (prepareProducerIdRotation)."""
    from lethe_formats.coordinator.transaction_log import (
        encode_transaction_key,
        encode_transaction_value,
    )
    from lethe_reference.cluster.txn.metadata import TxnMetadata, to_value

    io = FakeIO(next_id=5)
    c = TransactionCoordinator(io)
    worn = TxnMetadata(TID, 3, 32766, 60000, TxnState.COMPLETE_COMMIT, io.now)
    c.load(_partition(c), [(encode_transaction_key(TID), encode_transaction_value(to_value(worn)))])
    rotated = c.init_producer_id(TID, 60000)
    assert (rotated.error, rotated.producer_id, rotated.producer_epoch) == (E.NONE, 5, 0)
    assert c.txns[TID].previous_producer_id == 3
