"""Transactions across restarts of a ``lethe broker`` process (kill -9 and clean).

Kafka 4.0's transaction coordinator rebuilds its state from ``__transaction_state``
when it becomes the partition's leader (``loadTransactionsForTxnTopicPartition``):
a transaction found Ongoing stays open until ``transaction.timeout.ms`` has passed
since it started, then the periodic check fences the producer (epoch + 1) and
aborts it with the server's transaction version 2 (epoch + 1 again), writing the
ABORT marker to its partitions and the aborted range to the ``.txnindex``. A
completed transaction keeps its producer id; the next InitProducerId bumps the
epoch. The broker is started with the CLI and spoken to over a socket; the only
waits are conditions with a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from lethe_formats.model import ControlType, RecordBatch
from lethe_formats.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from lethe_formats.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from lethe_formats.protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from lethe_formats.protocol.messages.describe_transactions import DescribeTransactionsRequest
from lethe_formats.protocol.messages.end_txn import EndTxnRequest
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
)
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from lethe_formats.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.control import decode_control_key
from lethe_formats.records.scan import read_log
from lethe_formats.storage.txn_index import read_txn_index

TOPIC, TID = "txr", "restart-tx"
DEADLINE_S = 60
OVERRIDES = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}


class TxnBroker(BrokerProcess):
    """The process, with a transactional producer's requests."""

    def wait_for_coordinator(self) -> None:
        request = FindCoordinatorRequest(key_type=KEY_TYPE_TRANSACTION, coordinator_keys=(TID,))
        deadline = time.monotonic() + DEADLINE_S
        while self.exchange(request, 4).coordinators[0].error_code != 0:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, "no transaction coordinator"

    def init(self, timeout_ms: int) -> tuple[int, int]:
        request = InitProducerIdRequest(transactional_id=TID, transaction_timeout_ms=timeout_ms)
        answer: Any = self.exchange(request, 4)
        assert answer.error_code == 0, answer
        return answer.producer_id, answer.producer_epoch

    def begin_and_produce(self, producer: tuple[int, int], sequence: int) -> None:
        add = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TID,
            v3_and_below_producer_id=producer[0],
            v3_and_below_producer_epoch=producer[1],
            v3_and_below_topics=(AddPartitionsToTxnTopic(TOPIC, (0,)),),
        )
        added: Any = self.exchange(add, 3)
        assert (
            added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
        )
        spec = RecordSpec(b"k", b"in-txn", timestamp=int(time.time() * 1000))
        batch = build_batch(
            [spec],
            base_offset=0,
            producer_id=producer[0],
            producer_epoch=producer[1],
            base_sequence=sequence,
            is_transactional=True,
        )
        data = (TopicProduceData(TOPIC, (PartitionProduceData(0, batch),)),)
        answer: Any = self.exchange(ProduceRequest(TID, -1, 30000, data), 9)
        assert answer.responses[0].partition_responses[0].error_code == 0

    def describe(self) -> Any:
        return self.exchange(DescribeTransactionsRequest((TID,)), 0).transaction_states[0]  # type: ignore[attr-defined]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[TxnBroker]:
    server = TxnBroker(tmp_path / "logs", OVERRIDES)
    server.start()
    created: Any = server.exchange(CreateTopicsRequest((CreatableTopic(TOPIC, 1, 1, (), ()),)), 7)
    assert created.topics[0].error_code == 0
    server.wait_for_coordinator()
    yield server
    if server.process is not None:
        server.crash()


def _batches(log_dir: Path) -> list[RecordBatch]:
    return [
        b
        for path in sorted((log_dir / f"{TOPIC}-0").glob("*.log"))
        for b in read_log(path.read_bytes())
        if isinstance(b, RecordBatch)
    ]


def test_kill_9_mid_transaction_then_the_timeout_aborts_it(broker: TxnBroker) -> None:
    producer = broker.init(timeout_ms=1500)
    assert producer == (0, 0)
    broker.begin_and_produce(producer, 0)
    assert broker.describe().transaction_state == "Ongoing"
    broker.crash()
    broker.start()
    deadline = time.monotonic() + DEADLINE_S
    while (state := broker.describe()).transaction_state != "CompleteAbort":
        assert state.transaction_state == "Ongoing", state  # reloaded as it was
        assert time.monotonic() < deadline, "the timed-out transaction was never aborted"
    assert (state.producer_id, state.producer_epoch) == (0, 2)  # fence + version-2 abort
    broker.stop()
    batches = _batches(broker.log_dir)
    assert [(b.header.base_offset, b.header.is_control) for b in batches] == [(0, False), (1, True)]
    marker = batches[1]
    assert decode_control_key(marker.records[0].key)[1] is ControlType.ABORT
    assert (marker.header.producer_id, marker.header.producer_epoch) == (0, 2)
    entries = [
        e
        for path in (broker.log_dir / f"{TOPIC}-0").glob("*.txnindex")
        for e in read_txn_index(path.read_bytes())
    ]
    assert [
        (e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in entries
    ] == [(0, 0, 1, 2)]


def test_a_committed_transaction_survives_a_clean_restart(broker: TxnBroker) -> None:
    producer = broker.init(timeout_ms=60000)
    broker.begin_and_produce(producer, 0)
    end: Any = broker.exchange(EndTxnRequest(TID, *producer, True), 3)
    assert end.error_code == 0
    broker.stop()
    broker.start()
    broker.wait_for_coordinator()
    state = broker.describe()
    assert (state.transaction_state, state.producer_id, state.producer_epoch) == (
        "CompleteCommit",
        0,
        0,
    )
    assert broker.init(timeout_ms=60000) == (0, 1)  # same id, next epoch
    broker.stop()
    markers = [b for b in _batches(broker.log_dir) if b.header.is_control]
    assert [decode_control_key(m.records[0].key)[1] for m in markers] == [ControlType.COMMIT]


def test_offsets_of_an_open_transaction_survive_kill_9_and_commit(broker: TxnBroker) -> None:
    """TxnOffsetCommit's records of a transaction still open at the crash stay
    pending after the reload and become the group's offsets when it commits."""
    group = "restart-group"
    find = FindCoordinatorRequest(key_type=0, coordinator_keys=(group,))
    deadline = time.monotonic() + DEADLINE_S
    while broker.exchange(find, 4).coordinators[0].error_code != 0:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "no group coordinator"
    producer = broker.init(timeout_ms=60000)
    broker.begin_and_produce(producer, 0)
    added: Any = broker.exchange(AddOffsetsToTxnRequest(TID, *producer, group), 3)
    assert added.error_code == 0
    partition = TxnOffsetCommitRequestPartition(0, 1, -1, None)
    commit = TxnOffsetCommitRequest(
        TID, group, *producer, topics=(TxnOffsetCommitRequestTopic(TOPIC, (partition,)),)
    )
    answer: Any = broker.exchange(commit, 3)
    assert answer.topics[0].partitions[0].error_code == 0
    broker.crash()
    broker.start()
    broker.wait_for_coordinator()
    while broker.exchange(find, 4).coordinators[0].error_code != 0:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "no group coordinator after the restart"
    fetch = OffsetFetchRequest(
        groups=(OffsetFetchRequestGroup(group, topics=(OffsetFetchRequestTopic(TOPIC, (0,)),)),),
        require_stable=True,
    )
    pending: Any = broker.exchange(fetch, 8)
    assert pending.groups[0].topics[0].partitions[0].error_code == 88  # UNSTABLE_OFFSET_COMMIT
    end: Any = broker.exchange(EndTxnRequest(TID, *producer, True), 3)
    assert end.error_code == 0
    fetched: Any = broker.exchange(fetch, 8)
    found = fetched.groups[0].topics[0].partitions[0]
    assert (found.error_code, found.committed_offset) == (0, 1)
