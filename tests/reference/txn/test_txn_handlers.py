"""The transaction APIs through the broker's handlers, against Kafka 4.0's record.

* The golden transactions case (fixtures/golden/transactions: librdkafka's
  transactional producer and a plain one against Kafka 4.0.0) replayed step by
  step: the same offsets for every data batch and marker, COMMIT at 5 and 14,
  ABORT at 9, the ``.txnindex`` entry (producer 0, 6, 9, LSO 10), the same
  ``__transaction_state`` states, and what a read_committed consumer returned.
* ``kafka-transactions.sh``'s three actions (fixtures/golden/admin-tools/
  kafka-transactions, a real Kafka 4.0.0 run): ListTransactions,
  DescribeTransactions and DescribeProducers give the rows Kafka's tool printed
  (all columns but the wall-clock ones).
* Errors as Kafka 4.0: a transactional batch to a partition never added
  (INVALID_TXN_STATE, "Partition was not added to the transaction"),
  PRODUCER_FENCED / INVALID_PRODUCER_EPOCH by version, INVALID_TXN_STATE,
  TRANSACTIONAL_ID_NOT_FOUND, and with the ACL authorizer
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import json
from pathlib import Path

from lethe_formats.coordinator.transaction_log import TRANSACTION_STATES, decode_transaction_value
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from lethe_formats.protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersRequestTopic,
)
from lethe_formats.protocol.messages.describe_transactions import DescribeTransactionsRequest
from lethe_formats.protocol.messages.find_coordinator import FindCoordinatorRequest
from lethe_formats.protocol.messages.list_transactions import ListTransactionsRequest
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
from lethe_formats.records.scan import read_log
from lethe_formats.storage.txn_index import read_txn_index
from lethe_reference.broker import Broker
from lethe_reference.metadata import TRANSACTION_STATE
from txn_handlers_support import Txn, call, new_broker

GOLDEN = fixtures_root() / "golden" / "transactions"
TOOLS = fixtures_root() / "golden" / "admin-tools" / "kafka-transactions" / "outputs.json"


def _plain(broker: Broker, tp: tuple[str, int], value: bytes) -> int:
    batch = build_batch([RecordSpec(b"k", value, (), broker.clock.now_ms())], base_offset=0)
    request = ProduceRequest(
        acks=-1,
        timeout_ms=30000,
        topic_data=(TopicProduceData(tp[0], (PartitionProduceData(tp[1], batch),)),),
    )
    answer = call(broker, ApiKey.PRODUCE, 9, request).responses[0].partition_responses[0]
    assert answer.error_code == 0
    return int(answer.base_offset)


def _batches(broker: Broker, topic: str, partition: int) -> list[RecordBatch]:
    folder = broker.log_dir / f"{topic}-{partition}"
    out = []
    for path in sorted(folder.glob("*.log")):
        out.extend(b for b in read_log(path.read_bytes()) if isinstance(b, RecordBatch))
    return out


def _states(broker: Broker, partition: int) -> list[str]:
    states = []
    for batch in _batches(broker, TRANSACTION_STATE, partition):
        for record in batch.records:
            value = decode_transaction_value(record.value)
            assert value is not None
            states.append(TRANSACTION_STATES[value.transaction_status])
    return states


def test_golden_transactions_case_replayed(tmp_path: Path) -> None:
    case = json.loads((GOLDEN / "case.json").read_text())
    broker = new_broker(tmp_path)
    topic = case["topics"][0]["name"]
    broker.create_topic(topic, 1)
    tp = (topic, 0)
    txn = Txn(broker, case["transactional_id"])
    assert txn.find().error_code == 15  # the topic is being created
    assert txn.init().error_code == 0 and (txn.producer_id, txn.epoch) == (0, 0)
    assert txn.find().error_code == 0
    offsets: list[int] = []
    added = False  # the partition is in the current transaction (librdkafka adds it once)
    for step in case["steps"]:
        op = step["op"]
        if op == "produce" and "transactional.id" in step["client_config"]:
            if not added:
                assert txn.add(tp) == {tp: 0}
                added = True
            answer = txn.produce(tp, *(r["value"].encode() for r in step["records"]))
            assert answer.error_code == 0
            offsets.append(int(answer.base_offset))
        elif op == "produce":
            for record in step["records"]:
                offsets.append(_plain(broker, tp, record["value"].encode()))
        elif op == "begin_transaction":
            added = False
        elif op in ("commit_transaction", "abort_transaction"):
            assert txn.end(op == "commit_transaction").error_code == 0
        elif op == "capture":
            break
    reported = [
        r["offset"]
        for s in case["steps"]
        if s["op"] == "produce" and s["records"]
        for r in s.get("delivery_reports", [])[:1]
    ]
    assert offsets == reported[: len(offsets)]
    markers = [b.header.base_offset for b in _batches(broker, topic, 0) if b.header.is_control]
    assert markers == [5, 9, 14]
    log = broker.log(topic, 0)
    assert log is not None and log.last_stable_offset == log.high_watermark == 17
    entries = [
        e
        for p in (tmp_path / f"{topic}-0").glob("*.txnindex")
        for e in read_txn_index(p.read_bytes())
    ]
    assert [
        (e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in entries
    ] == [(0, 6, 9, 10)]
    assert _states(broker, 24) == [
        "Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "Ongoing",
        "PrepareAbort", "CompleteAbort", "Ongoing", "PrepareCommit", "CompleteCommit",
    ]  # fmt: skip


def _tool_rows(step: str) -> list[list[str]]:
    printed = json.loads(TOOLS.read_text())[step]["stdout"]
    return [line.split() for line in printed.splitlines()[1:] if line.strip()]


def _recipe(tmp_path: Path) -> tuple[Broker, Txn]:
    """record.py's actions: kt-committed commits, kt-aborted aborts, kt-open stays open."""
    broker = new_broker(tmp_path)
    broker.create_topic("kt-topic", 1)
    tp = ("kt-topic", 0)
    for tid, commit in (("kt-committed", True), ("kt-aborted", False)):
        txn = Txn(broker, tid)
        txn.init()
        txn.add(tp)
        txn.produce(tp, b"v")
        assert txn.end(commit).error_code == 0
    opened = Txn(broker, "kt-open", timeout_ms=120000)
    opened.init()
    opened.add(tp)
    opened.produce(tp, b"o1", b"o2")
    return broker, opened


def test_list_describe_and_describe_producers_give_the_tools_rows(tmp_path: Path) -> None:
    broker, _ = _recipe(tmp_path)
    listed = call(broker, ApiKey.LIST_TRANSACTIONS, 1, ListTransactionsRequest())
    rows = [
        [t.transactional_id, "1", str(t.producer_id), t.transaction_state]
        for t in listed.transaction_states
    ]
    assert rows == _tool_rows("list")
    for step, tid in (
        ("describe-open", "kt-open"),
        ("describe-committed", "kt-committed"),
        ("describe-aborted", "kt-aborted"),
    ):
        (state,) = call(
            broker, ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest((tid,))
        ).transaction_states
        parts = ",".join(f"{t.topic}-{p}" for t in state.topics for p in t.partitions)
        ours = [
            "1",
            state.transactional_id,
            str(state.producer_id),
            str(state.producer_epoch),
            state.transaction_state,
            str(state.transaction_timeout_ms),
        ]
        (theirs,) = _tool_rows(step)
        assert ours == theirs[:6]
        assert ([parts] if parts else []) == theirs[8:]
    (unknown,) = call(
        broker, ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest(("kt-nobody",))
    ).transaction_states
    assert unknown.error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND: the tool's "could not be found"
    request = DescribeProducersRequest((DescribeProducersRequestTopic("kt-topic", (0,)),))
    response = call(broker, ApiKey.DESCRIBE_PRODUCERS, 0, request)
    producers = response.topics[0].partitions[0].active_producers
    ours_rows = [
        [str(p.producer_id), str(p.producer_epoch), str(p.coordinator_epoch), str(p.last_sequence),
         "None" if p.current_txn_start_offset < 0 else str(p.current_txn_start_offset)]
        for p in producers
    ]  # fmt: skip
    assert ours_rows == [r[:4] + r[5:] for r in _tool_rows("describe-producers")]


def test_transactional_batch_to_a_partition_not_added(tmp_path: Path) -> None:
    broker, opened = _recipe(tmp_path)
    broker.create_topic("other", 1)
    answer = opened.produce(("other", 0), b"x")
    assert (answer.error_code, answer.error_message) == (
        48,  # INVALID_TXN_STATE
        "Partition was not added to the transaction",
    )
    # Produce v11 clients know TRANSACTION_ABORTABLE and get it as it is, without a message
    # (AddPartitionsToTxnManager: genericErrorSupported; ReplicaManager: no custom message);
    # a real Kafka 4.0.0 answered 120 to Produce v11 in the same situation.
    answer = opened.produce(("other", 0), b"x", version=11)
    assert (answer.error_code, answer.error_message) == (120, None)
    assert opened.add(("other", 0)) == {("other", 0): 0}
    assert opened.produce(("other", 0), b"x").error_code == 0


def test_fenced_and_invalid_state_errors(tmp_path: Path) -> None:
    broker, opened = _recipe(tmp_path)
    zombie = Txn(broker, "kt-open")
    zombie.producer_id, zombie.epoch = opened.producer_id, opened.epoch
    fresh = Txn(broker, "kt-open")
    assert fresh.init().error_code == 51  # CONCURRENT_TRANSACTIONS: the open one is aborted
    assert fresh.init().error_code == 0 and fresh.epoch == opened.epoch + 3
    assert zombie.end(True, version=2).error_code == 90  # PRODUCER_FENCED
    assert zombie.end(True, version=1).error_code == 47  # INVALID_PRODUCER_EPOCH before v2
    assert zombie.add(("kt-topic", 0), version=1) == {("kt-topic", 0): 47}
    assert fresh.end(True).error_code == 48  # INVALID_TXN_STATE: nothing is open
    assert zombie.produce(("kt-topic", 0), b"late").error_code == 47


def test_acl_authorizer_refuses_transactional_ids(tmp_path: Path) -> None:
    broker = new_broker(
        tmp_path,
        {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
        },
    )
    txn = Txn(broker, "secret")
    assert txn.init().error_code == 53  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    txn.producer_id, txn.epoch = 0, 0
    assert txn.end(True).error_code == 53
    assert txn.add(("t", 0)) == {("t", 0): 53}
    (state,) = call(
        broker, ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest(("secret",))
    ).transaction_states
    assert state.error_code == 53


def _offset_commit(
    broker: Broker, txn: Txn, group: str, tp: tuple[str, int], offset: int
) -> TxnOffsetCommitRequest:
    """The group's coordinator is found first (creating __consumer_offsets), as a client
    does; then the TxnOffsetCommit request of ``txn`` for ``tp``."""
    find = FindCoordinatorRequest(key_type=0, coordinator_keys=(group,))
    codes = [call(broker, ApiKey.FIND_COORDINATOR, 4, find).coordinators[0].error_code]
    codes.append(call(broker, ApiKey.FIND_COORDINATOR, 4, find).coordinators[0].error_code)
    assert codes == [15, 0]  # the offsets topic is created by the first lookup
    partition = TxnOffsetCommitRequestPartition(tp[1], offset, -1, None)
    topics = (TxnOffsetCommitRequestTopic(tp[0], (partition,)),)
    return TxnOffsetCommitRequest(txn.id, group, txn.producer_id, txn.epoch, topics=topics)


def _fetched(broker: Broker, group: str, *, stable: bool) -> list[tuple[int, int, int]]:
    """(partition, offset, error) of OffsetFetch v8 for partition 0 of "tv2"."""
    topics = (OffsetFetchRequestTopic("tv2", (0,)),)
    request = OffsetFetchRequest(
        groups=(OffsetFetchRequestGroup(group, topics=topics),), require_stable=stable
    )
    answer = call(broker, ApiKey.OFFSET_FETCH, 8, request)
    return [
        (p.partition_index, p.committed_offset, p.error_code)
        for p in answer.groups[0].topics[0].partitions
    ]


def test_transaction_version_2_client(tmp_path: Path) -> None:
    """KIP-890 part 2 (finalized transaction.version 2): Produce v12 adds the
    partition, TxnOffsetCommit v5 adds the group, EndTxn v5 returns epoch + 1."""
    broker = new_broker(tmp_path)
    broker.create_topic("tv2", 1)
    txn = Txn(broker, "tv2-tx")
    txn.init()
    answer = txn.produce(("tv2", 0), b"a", version=12)  # no AddPartitionsToTxn
    assert answer.error_code == 0
    (state,) = call(
        broker, ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest(("tv2-tx",))
    ).transaction_states
    assert (state.transaction_state, [(t.topic, t.partitions) for t in state.topics]) == (
        "Ongoing",
        [("tv2", (0,))],
    )
    commit = _offset_commit(broker, txn, "tv2-group", ("tv2", 0), 1)
    committed = call(broker, ApiKey.TXN_OFFSET_COMMIT, 5, commit)
    assert committed.topics[0].partitions[0].error_code == 0
    assert _fetched(broker, "tv2-group", stable=True) == [(0, -1, 88)]  # UNSTABLE_OFFSET_COMMIT
    assert _fetched(broker, "tv2-group", stable=False) == [(0, -1, 0)]  # not visible yet
    ended = txn.end(True, version=5)
    assert (ended.error_code, ended.producer_id, ended.producer_epoch) == (0, 0, 1)
    markers = [b for b in _batches(broker, "tv2", 0) if b.header.is_control]
    assert [(m.header.base_offset, m.header.producer_epoch) for m in markers] == [(1, 1)]
    assert _fetched(broker, "tv2-group", stable=True) == [(0, 1, 0)]


def test_txn_offset_commit_v4_needs_add_offsets(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    broker.create_topic("tv1", 1)
    txn = Txn(broker, "tv1-tx")
    txn.init()
    txn.add(("tv1", 0))
    commit = _offset_commit(broker, txn, "tv1-group", ("tv1", 0), 1)
    # AddPartitionsToTxnManager.txnOffsetCommitRequestVersionToTransactionSupportedOperation:
    # up to v3 the coordinator's TRANSACTION_ABORTABLE reaches the client as
    # INVALID_TXN_STATE, v4 clients get it as it is.
    refused = call(broker, ApiKey.TXN_OFFSET_COMMIT, 3, commit)
    assert refused.topics[0].partitions[0].error_code == 48  # INVALID_TXN_STATE
    refused = call(broker, ApiKey.TXN_OFFSET_COMMIT, 4, commit)
    assert refused.topics[0].partitions[0].error_code == 120  # TRANSACTION_ABORTABLE
    added = call(
        broker, ApiKey.ADD_OFFSETS_TO_TXN, 3,
        AddOffsetsToTxnRequest("tv1-tx", txn.producer_id, txn.epoch, "tv1-group"),
    )  # fmt: skip
    assert added.error_code == 0
    assert call(broker, ApiKey.TXN_OFFSET_COMMIT, 4, commit).topics[0].partitions[0].error_code == 0
