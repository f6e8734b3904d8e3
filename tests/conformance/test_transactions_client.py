"""The kit's transactional client: its batches against Kafka's golden files, its requests
against Kafka's message rules, its routing, and the capability that gates its scenarios.

The golden transactions case (``fixtures/golden/transactions``) holds the segment
files a real Kafka 4.0.0 wrote for librdkafka's transactional producer; a producer
state replaying the same client actions must produce the same batches, byte for byte
but the two fields the broker sets (base offset, partition leader epoch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lethe_conformance.client import txn_calls
from lethe_conformance.client.batches import fixture_entries, visible_records
from lethe_conformance.client.routing import ClusterView, merge, needs, split, transaction_of
from lethe_conformance.client.transactional import TV1_MAX_VERSIONS, TransactionalProducer
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import run_scenario
from lethe_conformance.scenarios.loader import load_scenario
from lethe_conformance.scenarios.ops.transactions import _retrying
from lethe_conformance.targets.base import (
    ALL_CAPABILITIES,
    DISCOVERED_CAPABILITIES,
    Capabilities,
)
from lethe_conformance.targets.profiles import PROTOCOL_CAPABILITIES
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from lethe_formats.protocol.messages.end_txn import EndTxnRequest
from lethe_formats.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.list_transactions import (
    ListedTransaction,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from lethe_formats.protocol.messages.offset_commit import OffsetCommitRequest
from lethe_formats.protocol.messages.produce import ProduceRequest
from lethe_formats.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from lethe_formats.protocol.schema import Struct
from lethe_formats.records.builder import RecordSpec

GOLDEN = fixtures_root() / "golden" / "transactions" / "pass0" / "golden-txn-0"
_BROKER_SET = slice(0, 16)  # base offset, length, partition leader epoch


def _records(*rows: tuple[str, str, int]) -> list[RecordSpec]:
    return [RecordSpec(k.encode(), v.encode(), (), t) for k, v, t in rows]


def test_transactional_batches_are_golden_pass0s_byte_for_byte() -> None:
    """case.json's three transactions: producer 0 epoch 0, sequences 0, 2, 3, 5."""
    golden = fixture_entries(GOLDEN)
    producer = TransactionalProducer("golden-txn-writer")
    producer.initialized(0, 0)
    t1, t2 = 1795289371802, 1795289373273
    transactions = [
        (1, _records(("txn1-a", "debit 10", t1), ("txn1-b", "credit 10", t1))),
        (3, _records(("txn1-c", "fee 1", 1795289372449))),
        (5, _records(("txn2-a", "debit 99", t2), ("txn2-b", "credit 99", t2))),
        (8, _records(
            ("txn1-a", "debit 11", 1795289374405), ("txn1-b", "credit 11", 1795289374405),
            ("txn1-c", "fee 2", 1795289374405), ("txn3-d", "memo", 1795289374405),
        )),
    ]  # fmt: skip
    for entry_index, records in transactions:
        built = producer.batch("golden-txn", 0, records)
        want = golden[entry_index]
        assert len(built) == len(want)
        assert built[8:12] == want[8:12]  # batch length
        assert built[16:] == want[16:]  # magic, crc and everything the crc covers
        assert built[:8] == bytes(8)  # base offset 0, as every producer sends it
        producer.sent("golden-txn", 0, len(records))
    assert producer.sequences == {("golden-txn", 0): 9}


def test_a_new_epoch_restarts_sequences_and_forgets_the_transaction() -> None:
    producer = TransactionalProducer("t")
    producer.initialized(7, 0)
    producer.added([("a", 0)])
    producer.sent("a", 0, 3)
    assert producer.missing_partitions([("a", 0), ("a", 1), ("a", 1)]) == [("a", 1)]
    producer.initialized(7, 1)
    assert (producer.sequences, producer.partitions, producer.producer_epoch) == ({}, [], 1)


class _Recorder:
    """A connection that records what would be sent (version negotiated up to ``top``)."""

    def __init__(self, top: int = 12) -> None:
        self.top = top
        self.sent: list[tuple[Struct, int | None]] = []

    def version_for(self, api_key: int) -> int:
        return self.top

    def call(self, body: Struct, response: type, *, version: int | None = None) -> Any:
        self.sent.append((body, version))
        return None


def test_a_transaction_version_1_client_caps_produce_end_txn_and_add_partitions() -> None:
    """Kafka's ProduceRequest.Builder (useTransactionV1Version: at most v11), EndTxn
    below v5 and AddPartitionsToTxn in its client form (v3 and below)."""
    conn: Any = _Recorder()
    producer = TransactionalProducer("tx")
    producer.initialized(4, 2)
    txn_calls.transactional_produce(conn, producer, "t", 0, b"")
    txn_calls.end_txn(conn, producer, commit=True)
    txn_calls.add_partitions_to_txn(conn, producer, [("t", 1), ("u", 0), ("t", 0)])
    (produce, v_produce), (end, v_end), (add, v_add) = conn.sent
    assert (v_produce, v_end, v_add) == (11, 4, 3)
    assert TV1_MAX_VERSIONS == {
        ApiKey.ADD_PARTITIONS_TO_TXN: 3,
        ApiKey.PRODUCE: 11,
        ApiKey.END_TXN: 4,
    }
    assert isinstance(produce, ProduceRequest) and produce.transactional_id == "tx"
    assert isinstance(end, EndTxnRequest)
    assert (end.producer_id, end.producer_epoch, end.committed) == (4, 2, True)
    assert isinstance(add, AddPartitionsToTxnRequest)
    assert [(t.name, t.partitions) for t in add.v3_and_below_topics] == [("t", (1, 0)), ("u", (0,))]
    # an explicit version wins (a scenario probing another one)
    txn_calls.end_txn(conn, producer, commit=False, version=5)
    assert conn.sent[-1][1] == 5


def test_add_partitions_v3_encodes_the_client_form() -> None:
    """v3 is flexible (compact strings and arrays, tagged fields) and carries the
    ``V3AndBelow*`` fields; it decodes back to the same request."""
    body = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=5,
        v3_and_below_producer_epoch=1,
        v3_and_below_topics=(),
    )
    raw = encode(body, 3)
    # compact string "tx" (length+1 = 3), int64 5, int16 1, empty compact array, no tags
    assert raw == b"\x03tx" + (5).to_bytes(8, "big") + b"\x00\x01" + b"\x01" + b"\x00"
    assert decode(AddPartitionsToTxnRequest, 3, raw) == body


def _coordinator(key: str, node: int) -> FindCoordinatorResponse:
    found = Coordinator(key, node, "127.0.0.1", 9000 + node, ErrorCode.NONE, None)
    return FindCoordinatorResponse(coordinators=(found,))


def test_transaction_requests_go_to_the_transaction_coordinator() -> None:
    view = ClusterView()
    for node in (1, 2, 3):
        view.brokers[node] = ("127.0.0.1", 9000 + node)
    end = EndTxnRequest(transactional_id="x", producer_id=1, producer_epoch=0, committed=True)
    assert needs(end, view).transactional_id == "x"
    view.learn_coordinator("x", _coordinator("x", 2), transaction=True)
    view.learn_coordinator("x", _coordinator("x", 3))  # a group of the same name
    assert needs(end, view).transactional_id is None
    assert split(end, view) == [(2, end)]
    assert split(OffsetCommitRequest(group_id="x", topics=()), view)[0][0] == 3
    commit = TxnOffsetCommitRequest(
        transactional_id="x", group_id="x", producer_id=1, producer_epoch=0, topics=()
    )
    assert split(commit, view)[0][0] == 3  # to the group's coordinator, as Kafka's producer
    view.forget_transaction("x")
    assert split(end, view) == [(None, end)]


def test_an_idempotent_init_producer_id_goes_anywhere() -> None:
    idempotent = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=-1)
    assert transaction_of(idempotent) is None
    assert needs(idempotent, ClusterView()).transactional_id is None
    add = AddPartitionsToTxnRequest(v3_and_below_transactional_id="y")
    assert transaction_of(add) == "y"


class _NoTransactions:
    """A broker that offers kip534 but not the transaction APIs."""

    name = "no-transactions"
    capabilities = Capabilities(clock="wall", log_dir=Path("/nonexistent"), own_log_dir=True)

    def profiles(self) -> frozenset[str]:
        return frozenset({"kip534"})

    def protocol_capabilities(self) -> frozenset[str]:
        return frozenset()

    def connect(self) -> Any:
        raise AssertionError("a scenario the target cannot run sends nothing")


def test_transactions_is_discovered_not_declared() -> None:
    assert {"transactions"} == DISCOVERED_CAPABILITIES
    assert not DISCOVERED_CAPABILITIES & ALL_CAPABILITIES
    assert PROTOCOL_CAPABILITIES["transactions"] == (24, 25, 26, 28)


def test_transaction_scenarios_are_not_applicable_without_the_apis() -> None:
    path = fixtures_root() / "scenarios" / "kip534" / "kip534-golden-transactions-replayed.json"
    result = run_scenario(_NoTransactions(), load_scenario(path))  # type: ignore[arg-type]
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "lacks transactions (provided by a target advertising AddPartitionsToTxn" in (
        result.detail
    )
    assert result.steps == ()


def test_read_committed_hides_the_aborted_transactions_the_fetch_lists() -> None:
    """Golden pass0 fetched whole: txn2 (producer 0, offsets 6-7) is aborted, its ABORT
    marker at 9; read_committed sees the rest of the data records, read_uncommitted all."""
    blob = b"".join(fixture_entries(GOLDEN))
    everything = [r.offset for r in visible_records(blob, 0)]
    assert everything == [0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 13, 15, 16]
    committed = [r.offset for r in visible_records(blob, 0, [(0, 6)])]
    assert committed == [0, 1, 2, 3, 4, 8, 10, 11, 12, 13, 15, 16]
    # an aborted transaction of another producer hides nothing of producer 0
    assert [r.offset for r in visible_records(blob, 0, [(9, 6)])] == everything
    # no list (read_committed with nothing aborted): nothing hidden
    assert [r.offset for r in visible_records(blob, 0, [])] == everything


def test_list_transactions_asks_every_broker_and_merges() -> None:
    """Each broker lists only its coordinator partitions' transactions (Kafka's admin
    client asks them all)."""
    view = ClusterView()
    body = ListTransactionsRequest(state_filters=(), producer_id_filters=())
    assert needs(body, view).brokers
    view.brokers[1] = ("127.0.0.1", 9001)
    assert split(body, view) == [(None, body)]  # one broker: the bootstrap connection
    for node in (3, 2):
        view.brokers[node] = ("127.0.0.1", 9000 + node)
    assert split(body, view) == [(1, body), (2, body), (3, body)]
    listed = [
        ListTransactionsResponse(transaction_states=(ListedTransaction("a", 1, "Ongoing"),)),
        ListTransactionsResponse(transaction_states=()),
        ListTransactionsResponse(
            error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
            transaction_states=(ListedTransaction("b", 2, "CompleteAbort"),),
        ),
    ]
    merged = merge(body, listed)
    assert isinstance(merged, ListTransactionsResponse)
    assert [t.transactional_id for t in merged.transaction_states] == ["a", "b"]
    assert merged.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


class _Retries:
    def __init__(self) -> None:
        self.noted: list[str] = []

    def note_retry(self, error: str) -> None:
        self.noted.append(error)


def test_the_ops_retry_what_kafkas_producer_retries_unless_expected() -> None:
    """CONCURRENT_TRANSACTIONS and a coordinator not (yet) there are sent again (and
    counted); an expected one, or any other error, is the answer."""
    answers = iter([ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NOT_COORDINATOR, ErrorCode.NONE])
    ctx: Any = _Retries()
    assert _retrying(ctx, lambda: next(answers), ErrorCode.NONE) == ErrorCode.NONE
    assert ctx.noted == ["CONCURRENT_TRANSACTIONS", "NOT_COORDINATOR"]
    expected = ErrorCode.CONCURRENT_TRANSACTIONS
    assert _retrying(ctx, lambda: expected, expected) == expected
    fenced = ErrorCode.PRODUCER_FENCED
    assert _retrying(ctx, lambda: fenced, ErrorCode.NONE) == fenced
    assert len(ctx.noted) == 2
