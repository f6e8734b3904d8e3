"""Transactions as a scenario writes them: a transactional producer's actions, each
judged on what the coordinator answered.

Theory of operation
-------------------
A scenario names its transactional producers by symbol (``"producer": "p"``);
each gets a transactional id of its own, made like a group's name
(``lethe-<scenario id>-<symbol>-<token>``), and its state
(:class:`~lethe_conformance.client.transactional.TransactionalProducer`) lives
in the run context for the whole scenario. The ops follow a client's calls
(the golden capture's ``case.json`` lists them so)::

    init_transactions           FindCoordinator(key type 1) until it answers, then
                                InitProducerId; ``capture`` keeps the producer id/epoch;
                                ``same_id_as`` makes a second producer instance of another
                                producer's transactional id (it fences the first)
    begin_transaction           nothing sent (the coordinator learns of a transaction
                                from its first addition)
    produce + "transaction"     AddPartitionsToTxn for a partition new to the
                                transaction, then each batch as a transactional batch
                                with the producer's id, epoch and next sequence
    send_offsets_to_transaction AddOffsetsToTxn (once per group and transaction), then
                                TxnOffsetCommit to the group's coordinator
    commit_transaction,         EndTxn (committed true / false)
    abort_transaction
    describe_transactions,      the admin client's views of the coordinator's state
    list_transactions
    write_txn_markers           WriteTxnMarkers, as the coordinator sends it to a leader:
                                a marker with a chosen coordinator epoch (the leader
                                fences an older one than it recorded)

Retries: Kafka's producer retries CONCURRENT_TRANSACTIONS (the coordinator is
still writing the previous transaction's markers) and a coordinator that is
not (yet) there (COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
NOT_COORDINATOR: it finds the coordinator again) with a short backoff
(``TransactionManager``, ``retryBackoffMs``); the ops do the same within
:data:`CONCURRENT_BOUND_S`, unless the step expects that error, and count
each retry in the report. This holds on a virtual clock too: the retries are
the client's, not the runner's (which retries nothing there).

Markers: Kafka answers EndTxn once the decision is logged and writes the
markers afterwards (``TransactionMarkerChannelManager``), so a read of the last
stable offset right after a commit may see the old one: scenarios ``wait`` for
it. Producer id and epoch differ between brokers; a batch expectation refers
to the captured ones (``{"ref": "pid"}``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lethe_formats.protocol.error_codes import ErrorCode, error_name
from lethe_formats.records.builder import RecordSpec

from lethe_conformance.client import calls, txn_calls
from lethe_conformance.client.transactional import TransactionalProducer
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import error_code, int64
from lethe_conformance.scenarios.ops.partitions import (
    collect,
    judge,
    judge_base_offsets,
    judge_committed,
    produced,
    requested,
)
from lethe_conformance.scenarios.ops.registry import op

__all__ = ["CONCURRENT_BOUND_S", "produce_in_transaction"]

#: How long an op keeps retrying CONCURRENT_TRANSACTIONS (wall clock).
CONCURRENT_BOUND_S = 20.0
_BACKOFF_S = 0.1
_KEY_TYPE_TRANSACTION = 1
#: What a transactional client retries: the coordinator busy with the previous
#: transaction's markers, or not (yet) there.
_RETRIED = frozenset(
    {
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.NOT_COORDINATOR,
    }
)


def producer_of(ctx: RunContext, symbol: str) -> TransactionalProducer:
    """The scenario's producer ``symbol`` (made on first use, with its own id)."""
    found = ctx.producers.get(symbol)
    if found is None:
        found = ctx.producers[symbol] = TransactionalProducer(ctx.group(symbol))
    return found


def _retrying(ctx: RunContext, send: Callable[[], int], expected: int) -> int:
    """``send()`` again while it answers CONCURRENT_TRANSACTIONS or a coordinator error
    (:data:`_RETRIED`) other than the expected one, bounded by :data:`CONCURRENT_BOUND_S`."""
    deadline = time.monotonic() + CONCURRENT_BOUND_S
    while True:
        code = send()
        if code not in _RETRIED or expected == code or time.monotonic() >= deadline:
            return code
        ctx.note_retry(error_name(code))
        time.sleep(_BACKOFF_S)


def _coordinator(ctx: RunContext, transactional_id: str) -> int:
    """FindCoordinator (key type 1): the error code (on Kafka it creates
    ``__transaction_state`` first, answering COORDINATOR_NOT_AVAILABLE meanwhile)."""
    found, _ = calls.find_coordinator(ctx.conn(), transactional_id, _KEY_TYPE_TRANSACTION)
    return found


@op("init_transactions")
def init_transactions(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    if "same_id_as" in data and data["producer"] not in ctx.producers:
        # a second producer instance of the same transactional id: the one that fences
        shared = producer_of(ctx, data["same_id_as"]).transactional_id
        ctx.producers[data["producer"]] = TransactionalProducer(shared)
    producer = producer_of(ctx, data["producer"])
    if "transaction_timeout_ms" in data:
        producer.transaction_timeout_ms = data["transaction_timeout_ms"]
    exp = Expectations()
    expect = data.get("expect", {})
    wanted = error_code(expect.get("error", "NONE"))
    answer: list[Any] = []

    def send() -> int:
        """FindCoordinator until it names one, then InitProducerId; a coordinator that is
        not (yet) there starts over, as Kafka's producer does (``TransactionManager``)."""
        found = _coordinator(ctx, producer.transactional_id)
        if found != ErrorCode.NONE:
            return found
        answer[:] = [txn_calls.init_producer_id(ctx.conn(), producer, version=data.get("version"))]
        return int(answer[0].error_code)

    code = _retrying(ctx, send, wanted)
    if not exp.error(f"{path}.expect.error", wanted, code):
        return exp.mismatches  # the error alone: a retriable one is retried by the runner
    if code == ErrorCode.NONE:
        producer.initialized(answer[0].producer_id, answer[0].producer_epoch)
        captures = data.get("capture", {})
        if "producer_id" in captures:
            ctx.capture(captures["producer_id"], producer.producer_id)
        if "producer_epoch" in captures:
            ctx.capture(captures["producer_epoch"], producer.producer_epoch)
    if "producer_epoch" in expect:
        got = answer[0].producer_epoch
        ctx.judge_int(exp, f"{path}.expect.producer_epoch", expect["producer_epoch"], got)
    return exp.mismatches


@op("begin_transaction")
def begin_transaction(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    producer_of(ctx, data["producer"]).begin()
    return []


def produce_in_transaction(
    ctx: RunContext,
    data: Mapping[str, Any],
    path: str,
    batches: Sequence[tuple[Sequence[RecordSpec], Any]],
) -> list[Mismatch]:
    """``produce`` with ``transaction``: add the partition to the transaction when it is
    new to it (unless ``add_partitions`` is false: a producer that skipped the addition,
    which the broker must refuse), then send each batch as the producer's next
    transactional batch."""
    producer = producer_of(ctx, data["transaction"])
    topic, partition = ctx.topic(data["topic"]), data["partition"]
    expect = data.get("expect", {})
    exp = Expectations()
    wanted = error_code(expect.get("error", "NONE"))
    missing = producer.missing_partitions([(topic, partition)])
    if missing and data.get("add_partitions", True):
        add_wanted = error_code(expect.get("add_partitions_error", "NONE"))
        results: list[tuple[str, int, int]] = []

        def send() -> int:
            answer = txn_calls.add_partitions_to_txn(ctx.conn(), producer, missing)
            results[:] = txn_calls.add_partitions_results(answer)
            codes = {code for _, _, code in results} or {int(answer.error_code)}
            return codes.pop() if len(codes) == 1 else max(codes)

        code = _retrying(ctx, send, add_wanted)
        exp.error(f"{path}.expect.add_partitions_error", add_wanted, code)
        if code != ErrorCode.NONE or add_wanted != ErrorCode.NONE:
            return exp.mismatches
        producer.added(missing)
    offsets: list[int] = []
    for index, (records, codec) in enumerate(batches):
        payload = producer.batch(topic, partition, records, compression=codec)
        response = txn_calls.transactional_produce(
            ctx.conn(),
            producer,
            topic,
            partition,
            payload,
            acks=data.get("acks", -1),
            version=data.get("version"),
        )
        answer = produced(exp, path, index, wanted, response)
        if answer is None:
            continue
        if answer.error_code == ErrorCode.NONE:
            producer.sent(topic, partition, len(records))
        offsets.append(answer.base_offset)
    judge_base_offsets(exp, path, expect, offsets)
    return exp.mismatches


@op("send_offsets_to_transaction")
def send_offsets_to_transaction(
    ctx: RunContext, data: Mapping[str, Any], path: str
) -> list[Mismatch]:
    producer = producer_of(ctx, data["producer"])
    group = ctx.group(data["group"])
    expect = data.get("expect", {})
    exp = Expectations()
    if group not in producer.groups:
        add_wanted = error_code(expect.get("add_offsets_error", "NONE"))

        def send() -> int:
            return int(txn_calls.add_offsets_to_txn(ctx.conn(), producer, group).error_code)

        code = _retrying(ctx, send, add_wanted)
        exp.error(f"{path}.expect.add_offsets_error", add_wanted, code)
        if code != ErrorCode.NONE or add_wanted != ErrorCode.NONE:
            return exp.mismatches
        producer.groups.append(group)
    rows = [(ctx.topic(p["topic"]), p["partition"], int64(p["offset"])) for p in data["partitions"]]
    response = txn_calls.txn_offset_commit(
        ctx.conn(), producer, group, rows, version=data.get("version")
    )
    return judge_committed(ctx, exp, path, response, data)


def _end(ctx: RunContext, data: Mapping[str, Any], path: str, *, commit: bool) -> list[Mismatch]:
    producer = producer_of(ctx, data["producer"])
    wanted = error_code(data.get("expect", {}).get("error", "NONE"))

    def send() -> int:
        answer = txn_calls.end_txn(ctx.conn(), producer, commit=commit, version=data.get("version"))
        return int(answer.error_code)

    code = _retrying(ctx, send, wanted)
    if code == ErrorCode.NONE:
        producer.end()
    exp = Expectations()
    exp.error(f"{path}.expect.error", wanted, code)
    return exp.mismatches


@op("commit_transaction")
def commit_transaction(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    return _end(ctx, data, path, commit=True)


@op("abort_transaction")
def abort_transaction(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    return _end(ctx, data, path, commit=False)


@op("describe_transactions")
def describe_transactions(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    """DescribeTransactions of the named producers' ids: each answered once; ``expect
    .transactions[]`` compares ``error``, ``state``, ``producer_epoch``,
    ``timeout_ms`` and ``topics`` (``[{topic, partitions}]``, in any order) per producer."""
    ids = {producer_of(ctx, s).transactional_id: s for s in data["producers"]}
    response = txn_calls.describe_transactions(ctx.conn(), list(ids), version=data.get("version"))
    exp = Expectations()
    states: dict[str, Any] = {}
    for state in response.transaction_states:
        if state.transactional_id in states:
            exp.equal(f"{path} ({ids.get(state.transactional_id)})", "one state", "two")
        states[state.transactional_id] = state
    for index, want in enumerate(data.get("expect", {}).get("transactions", ())):
        where = f"{path}.expect.transactions[{index}]"
        got = states.get(producer_of(ctx, want["producer"]).transactional_id)
        if got is None:
            exp.missing(where, f"a state for producer {want['producer']}")
            continue
        _judge_state(ctx, exp, where, want, got)
    return exp.mismatches


def _judge_state(ctx: RunContext, exp: Expectations, where: str, want: Any, got: Any) -> None:
    if "error" in want:
        exp.error(f"{where}.error", error_code(want["error"]), got.error_code)
    if "state" in want:
        exp.equal(f"{where}.state", want["state"], got.transaction_state)
    if "producer_epoch" in want:
        ctx.judge_int(exp, f"{where}.producer_epoch", want["producer_epoch"], got.producer_epoch)
    if "producer_id" in want:
        ctx.judge_int(exp, f"{where}.producer_id", want["producer_id"], got.producer_id)
    if "timeout_ms" in want:
        exp.equal(f"{where}.timeout_ms", want["timeout_ms"], got.transaction_timeout_ms)
    if "topics" in want:
        wanted = sorted((ctx.topic(t["topic"]), p) for t in want["topics"] for p in t["partitions"])
        found = sorted((t.topic, p) for t in got.topics for p in t.partitions)
        exp.equal(f"{where}.topics", wanted, found)


@op("list_transactions")
def list_transactions(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    """ListTransactions (``states`` filter): among the scenario's own producers, exactly
    those of ``expect.transactions`` are listed, each with its ``state`` (other
    transactions on a shared broker are not judged)."""
    response = txn_calls.list_transactions(
        ctx.conn(), states=data.get("states", ()), version=data.get("version")
    )
    exp = Expectations()
    expect = data.get("expect", {})
    exp.error(f"{path}.expect.error", error_code(expect.get("error", "NONE")), response.error_code)
    ours = {p.transactional_id: s for s, p in ctx.producers.items()}
    listed = {
        ours[t.transactional_id]: t.transaction_state
        for t in response.transaction_states
        if t.transactional_id in ours
    }
    if "transactions" in expect:
        wanted = {t["producer"]: t.get("state") for t in expect["transactions"]}
        exp.equal(f"{path}.expect.transactions (producers)", sorted(wanted), sorted(listed))
        for symbol, state in wanted.items():
            if state is not None and symbol in listed:
                exp.equal(f"{path}.expect.transactions ({symbol}).state", state, listed[symbol])
    return exp.mismatches


@op("write_txn_markers")
def write_txn_markers(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    """One COMMIT/ABORT marker for the producer on ``partitions``, with the step's
    coordinator epoch: a coordinator's request, which Kafka serves to any client allowed
    CLUSTER_ACTION, so a scenario can show the leader's coordinator-epoch fence."""
    producer = producer_of(ctx, data["producer"])
    asked = requested(ctx, data["partitions"])
    marker = (
        producer.producer_id,
        data.get("producer_epoch", producer.producer_epoch),
        data.get("committed", True),
        ctx.value(data["coordinator_epoch"]),
    )
    response = txn_calls.write_txn_markers(ctx.conn(), marker, asked)
    exp = Expectations()
    rows = (
        (t.name, p.partition_index, {"error": p.error_code})
        for m in response.markers
        for t in m.topics
        for p in t.partitions
    )
    results = collect(exp, path, rows)
    return judge(ctx, exp, path, asked, results, data.get("expect", {}))
