"""Ops on a cluster target (capability ``cluster-control``): act on brokers, hold requests.

Brokers are named by role (``leader``, ``follower-1``, ``follower-2``; see
:mod:`lethe_conformance.targets.cluster`), resolved once after setup by
:func:`resolve_roles`::

    pause_fetching   {replica, topic, partition}   the replica stops fetching, stays alive
    resume_fetching  {replica, topic, partition}
    move_leader      {topic, partition, to}         elect another replica (epoch + 1)
    stop_broker      {replica}                      clean shutdown of one broker
    start_broker     {replica}

A request the broker is expected to *hold* (a DeleteRecords waiting for the
low watermark) cannot be sent by a step that waits for its answer: on a
virtual clock nothing would ever release it. So::

    send_delete_records  {name, partitions, timeout_ms, broker}   send, do not wait
    expect_pending       {name}                                   still no answer
    await_response       {name, expect}                           the answer, judged
                                                                  as delete_records

``send_delete_records`` sends on a connection of its own from a worker thread
and returns once the broker holds the request (or answered it), so the steps
after it act on a broker that surely has it. It learns that from
:meth:`~lethe_conformance.targets.cluster.ClusterTarget.held_requests` where the
target offers a view of its purgatory (the embedded cluster: exact). A broker
seen only from outside (a launched Kafka) shows it on the wire instead: the
broker processed the request once every requested partition's log start offset
(ListOffsets EARLIEST from that broker) reached the requested offset (for -1,
the partition's LATEST), since Kafka moves the leader's log start offset before
it parks the answer; a held request must therefore move the log start offset.
``expect_pending`` then sees no answer on the request's own connection within
a short window. ``await_response`` waits for the answer as long as the
request's ``timeout_ms`` allows, plus a margin.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from lethe_formats.protocol.messages.delete_records import DeleteRecordsResponse

from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import int64
from lethe_conformance.scenarios.ops.partitions import collect, judge, requested
from lethe_conformance.scenarios.ops.registry import op
from lethe_conformance.targets.base import CapabilityMissingError, ControlError
from lethe_conformance.targets.cluster import CLUSTER_CONTROL, ROLES, ClusterTarget

__all__ = ["close_pending", "resolve_roles"]

#: Wall-clock bounds: the held request must show up, a pending one must stay silent,
#: an answer may come this long after the request's own timeout_ms.
_ARRIVAL_S = 10.0
_SILENCE_S = 0.2
_POLL_S = 0.005
_EVIDENCE_POLL_S = 0.05
_ANSWER_MARGIN_S = 10.0


@dataclass
class _Pending:
    future: Future[DeleteRecordsResponse]
    conn: KafkaConnection
    pool: ThreadPoolExecutor
    asked: list[Any]
    timeout_ms: int

    def close(self) -> None:
        self.conn.close()
        self.pool.shutdown(wait=False)


def _cluster(ctx: RunContext) -> ClusterTarget:
    if CLUSTER_CONTROL not in ctx.target.capabilities.names():
        raise CapabilityMissingError(ctx.target.name, CLUSTER_CONTROL)
    return cast(ClusterTarget, ctx.target)


def resolve_roles(ctx: RunContext) -> dict[str, int]:
    """Role -> broker id from Metadata of the first topic's partition 0 (after setup)."""
    topic = ctx.topic(ctx.scenario.topics[0].symbol)
    answer = calls.metadata(ctx.conn(), [topic])
    partitions = [p for t in answer.topics if t.name == topic for p in t.partitions]
    first = next(p for p in partitions if p.partition_index == 0)
    followers = [n for n in first.replica_nodes if n != first.leader_id]
    return dict(zip(ROLES, [first.leader_id, *followers], strict=False))


@op("pause_fetching")
def pause_fetching(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = _cluster(ctx)
    target.pause_fetching(ctx.node(data["replica"]), ctx.topic(data["topic"]), data["partition"])
    return []


@op("resume_fetching")
def resume_fetching(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = _cluster(ctx)
    target.resume_fetching(ctx.node(data["replica"]), ctx.topic(data["topic"]), data["partition"])
    return []


@op("move_leader")
def move_leader(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    _cluster(ctx).move_leader(ctx.topic(data["topic"]), data["partition"], ctx.node(data["to"]))
    return []


@op("stop_broker")
def stop_broker(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = _cluster(ctx)
    ctx.drop_connection()
    target.stop_broker(ctx.node(data["replica"]))
    return []


@op("start_broker")
def start_broker(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    _cluster(ctx).start_broker(ctx.node(data["replica"]))
    return []


@op("send_delete_records")
def send_delete_records(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = _cluster(ctx)
    node = ctx.node(data.get("broker", "leader"))
    rows = [(ctx.topic(p["topic"]), p["partition"], int64(p["offset"])) for p in data["partitions"]]
    try:
        held_before: int | None = target.held_requests(node)
    except CapabilityMissingError:  # no purgatory view: the wire shows the arrival
        held_before = None
    timeout_ms = data.get("timeout_ms", 30_000)
    conn = target.connect_to(node)
    pool = ThreadPoolExecutor(1, thread_name_prefix="lethe-held-request")
    future = pool.submit(
        calls.delete_records, conn, rows, timeout_ms=timeout_ms, version=data.get("version")
    )
    asked = requested(ctx, data["partitions"])
    ctx.pending[data["name"]] = _Pending(future, conn, pool, list(asked), timeout_ms)
    if held_before is None:
        _await_log_start(ctx, node, rows, future, path)
        return []
    deadline = time.monotonic() + _ARRIVAL_S
    while not future.done() and target.held_requests(node) <= held_before:
        if time.monotonic() > deadline:
            raise ControlError(f"{path}: broker {node} neither held nor answered the request")
        time.sleep(_POLL_S)
    return []


def _await_log_start(
    ctx: RunContext,
    node: int,
    rows: list[tuple[str, int, int]],
    future: Future[DeleteRecordsResponse],
    path: str,
) -> None:
    """Until the request is answered or broker ``node``'s log start offset of every
    requested partition reached its offset (-1: LATEST), within :data:`_ARRIVAL_S`."""
    deadline = time.monotonic() + _ARRIVAL_S
    conn = ctx.conn_to(node)
    while not future.done():
        earliest = _offsets(conn, rows, -2)
        latest = _offsets(conn, rows, -1)
        if all(
            earliest.get((t, p), -1) >= (latest.get((t, p), -1) if o == -1 else o)
            for t, p, o in rows
        ):
            return
        if time.monotonic() > deadline:
            raise ControlError(
                f"{path}: broker {node} neither answered the request nor moved the log start "
                f"offset to it (EARLIEST {earliest})"
            )
        time.sleep(_EVIDENCE_POLL_S)


def _offsets(
    conn: KafkaConnection, rows: list[tuple[str, int, int]], timestamp: int
) -> dict[tuple[str, int], int]:
    """ListOffsets ``timestamp`` (-2 EARLIEST, -1 LATEST) of the rows' partitions; an
    error leaves a partition out."""
    answer = calls.list_offsets(conn, [(t, p, timestamp) for t, p, _ in rows])
    return {
        (t.name, p.partition_index): p.offset
        for t in answer.topics
        for p in t.partitions
        if p.error_code == 0
    }


def _pending(ctx: RunContext, name: str) -> _Pending:
    found = ctx.pending.get(name)
    if not isinstance(found, _Pending):
        raise ControlError(f"no request named {name!r} was sent")
    return found


@op("expect_pending")
def expect_pending(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    pending = _pending(ctx, data["name"])
    time.sleep(_SILENCE_S)  # an answer the broker sent is on the loopback by now
    exp = Expectations()
    if pending.future.done():
        exp.equal(f"{path}.name", "no answer yet", "answered")
    return exp.mismatches


@op("await_response")
def await_response(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    pending = ctx.pending.pop(data["name"], None)
    if not isinstance(pending, _Pending):
        raise ControlError(f"no request named {data['name']!r} was sent")
    bound = _ARRIVAL_S if ctx.virtual_clock else pending.timeout_ms / 1000 + _ANSWER_MARGIN_S
    try:
        response = pending.future.result(timeout=bound)
    finally:
        pending.close()
    exp = Expectations()
    results = collect(
        exp,
        path,
        (
            (t.name, p.partition_index, {"error": p.error_code, "low_watermark": p.low_watermark})
            for t in response.topics
            for p in t.partitions
        ),
    )
    return judge(ctx, exp, path, pending.asked, results, data.get("expect", {}))


def close_pending(ctx: RunContext) -> None:
    """Close what unanswered sends hold (scenario cleanup)."""
    for pending in ctx.pending.values():
        if isinstance(pending, _Pending):
            pending.close()
    ctx.pending.clear()
