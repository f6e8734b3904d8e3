"""Transactional-id expiry as Kafka 4.0's ``removeExpiredTransactionalIds``, sans-IO.

Kafka's rules (``TransactionStateManager.shouldExpire`` / ``maybeAppendExpiration``,
``TransactionMetadata.prepareDead``): only Empty, CompleteCommit and
CompleteAbort expire (``isExpirationAllowed``), when ``txnLastUpdateTimestamp
<= now - transactional.id.expiration.ms``; the tombstone is the id's key as
``TransactionLog.keyToBytes`` writes it (key version 0, then the id as an int16
length and its UTF-8 bytes: ``TransactionLogKey`` is version 0, not flexible)
with a null value and the pass's time as timestamp, appended uncompressed by
the coordinator (no producer id); once written the id is forgotten, and a
later InitProducerId gets a new producer id at epoch 0.
"""

from __future__ import annotations

import dataclasses

import pytest
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.scan import read_log
from lethe_reference.cluster.txn.coordinator import TransactionCoordinator, TxnConfig
from lethe_reference.cluster.txn.state import TxnState
from txn_support import FakeIO, loaded_coordinator

TID = "expiring-id"
TP = ("expiring-topic", 0)
EXPIRY = 10_000
E = ErrorCode
CONFIG = TxnConfig(id_expiration_ms=EXPIRY)


def _key(transactional_id: str) -> bytes:
    raw = transactional_id.encode()
    return b"\x00\x00" + len(raw).to_bytes(2, "big") + raw


def _batches(io: FakeIO, partition: int) -> list[RecordBatch]:
    out = []
    for raw in io.batches.get(partition, []):
        out.extend(b for b in read_log(raw) if isinstance(b, RecordBatch))
    return out


def _in_state(c: TransactionCoordinator, io: FakeIO, state: TxnState) -> None:
    """Drive ``TID`` to ``state`` (one of those a client reaches and leaves there)."""
    assert c.init_producer_id(TID, 60000).error is E.NONE
    if state is TxnState.EMPTY:
        return
    assert c.add_partitions(TID, 0, 0, [TP]) is E.NONE
    if state is not TxnState.ONGOING:
        assert c.end_txn(TID, 0, 0, state is TxnState.COMPLETE_COMMIT).error is E.NONE


def test_the_boundary_is_last_update_plus_the_expiration() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.EMPTY)
    written = len(io.batches[c.partition_for(TID)])
    last_update = c.txns[TID].last_update_ms
    io.now = last_update + EXPIRY - 1
    assert c.expire_transactional_ids() == []
    assert len(io.batches[c.partition_for(TID)]) == written  # nothing appended
    io.now = last_update + EXPIRY
    assert c.expire_transactional_ids() == [TID]
    assert TID not in c.txns
    assert len(io.batches[c.partition_for(TID)]) == written + 1


@pytest.mark.parametrize(
    "state", [TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT]
)
def test_empty_and_complete_states_expire(state: TxnState) -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, state)
    assert c.txns[TID].state is state
    io.now += EXPIRY
    assert c.expire_transactional_ids() == [TID]
    assert c.describe(TID).error is E.TRANSACTIONAL_ID_NOT_FOUND


@pytest.mark.parametrize(
    "state",
    [
        TxnState.ONGOING,
        TxnState.PREPARE_COMMIT,
        TxnState.PREPARE_ABORT,
        TxnState.PREPARE_EPOCH_FENCE,
    ],
)
def test_open_and_prepared_states_never_expire(state: TxnState) -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.ONGOING)
    # a prepared state stays only when its completion could not be written
    c.txns[TID] = dataclasses.replace(c.txns[TID], state=state)
    written = len(io.batches[c.partition_for(TID)])
    io.now += 100 * EXPIRY
    assert c.expire_transactional_ids() == []
    assert c.txns[TID].state is state
    assert len(io.batches[c.partition_for(TID)]) == written


def test_the_tombstone_is_the_key_with_a_null_value_one_batch_per_partition() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, TxnConfig(num_partitions=1, id_expiration_ms=EXPIRY))
    for tid in ("zz-last", TID, "a-first"):
        assert c.init_producer_id(tid, 60000).error is E.NONE
    io.now += EXPIRY
    before = len(io.batches[0])
    assert sorted(c.expire_transactional_ids()) == sorted(["zz-last", TID, "a-first"])
    assert len(io.batches[0]) == before + 1
    batch = _batches(io, 0)[-1]
    header = batch.header
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert not header.is_transactional and not header.is_control
    assert header.attributes & 0x07 == 0  # uncompressed, as TransactionLog.EnforcedCompression
    assert [(r.key, r.value, header.base_timestamp + r.timestamp_delta) for r in batch.records] == [
        (_key("a-first"), None, io.now),
        (_key(TID), None, io.now),
        (_key("zz-last"), None, io.now),
    ]
    assert _key(TID) == b"\x00\x00\x00\x0bexpiring-id"


def test_reload_after_the_tombstone_forgets_the_id_and_init_starts_afresh() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.COMPLETE_COMMIT)
    old_id = c.txns[TID].producer_id
    io.now += EXPIRY
    assert c.expire_transactional_ids() == [TID]
    partition = c.partition_for(TID)
    reloaded = TransactionCoordinator(io, CONFIG)
    reloaded.load(partition, io.records(partition))
    assert TID not in reloaded.txns
    assert reloaded.describe(TID).error is E.TRANSACTIONAL_ID_NOT_FOUND
    assert reloaded.list_transactions()[0] == []
    fresh = reloaded.init_producer_id(TID, 60000)
    assert (fresh.error, fresh.producer_epoch) == (E.NONE, 0)
    assert fresh.producer_id not in (old_id, -1)


def test_init_after_expiry_in_the_same_coordinator_gets_a_new_producer_id() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.COMPLETE_ABORT)
    assert c.init_producer_id(TID, 60000).producer_epoch == 1  # the same id, bumped
    io.now += EXPIRY
    assert c.expire_transactional_ids() == [TID]
    fresh = c.init_producer_id(TID, 60000)
    assert (fresh.error, fresh.producer_id, fresh.producer_epoch) == (E.NONE, 1, 0)


def test_a_failed_tombstone_append_keeps_the_id_for_the_next_pass() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.EMPTY)
    kept = c.txns[TID]
    io.now += EXPIRY
    io.fail_with = int(E.NOT_LEADER_OR_FOLLOWER)
    assert c.expire_transactional_ids() == []
    assert c.txns[TID] == kept
    io.fail_with = None
    assert c.expire_transactional_ids() == [TID]


def test_a_recent_update_postpones_the_expiry() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.EMPTY)
    io.now += EXPIRY - 1
    assert c.add_partitions(TID, 0, 0, [TP]) is E.NONE
    assert c.end_txn(TID, 0, 0, True).error is E.NONE  # CompleteCommit, updated now
    io.now += 1
    assert c.expire_transactional_ids() == []
    io.now += EXPIRY - 1
    assert c.expire_transactional_ids() == [TID]


def test_ids_of_partitions_not_loaded_are_left_alone() -> None:
    io = FakeIO()
    c = loaded_coordinator(io, TID, CONFIG)
    _in_state(c, io, TxnState.EMPTY)
    c.loaded.pop(c.partition_for(TID))  # e.g. a partition being unloaded
    io.now += EXPIRY
    assert c.expire_transactional_ids() == []
    assert TID in c.txns
