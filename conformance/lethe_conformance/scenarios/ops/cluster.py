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
and returns once the broker holds the request (or answered it), which it
learns from :meth:`~lethe_conformance.targets.cluster.ClusterTarget.held_requests`,
so the steps after it act on a broker that surely has it.
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

#: Wall-clock bounds: the held request must show up, a pending one must stay silent.
_ARRIVAL_S = 10.0
_SILENCE_S = 0.2
_POLL_S = 0.005


@dataclass
class _Pending:
    future: Future[DeleteRecordsResponse]
    conn: KafkaConnection
    pool: ThreadPoolExecutor
    asked: list[Any]

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
    held_before = target.held_requests(node)
    conn = target.connect_to(node)
    pool = ThreadPoolExecutor(1, thread_name_prefix="lethe-held-request")
    future = pool.submit(
        calls.delete_records,
        conn,
        rows,
        timeout_ms=data.get("timeout_ms", 30_000),
        version=data.get("version"),
    )
    asked = requested(ctx, data["partitions"])
    ctx.pending[data["name"]] = _Pending(future, conn, pool, list(asked))
    deadline = time.monotonic() + _ARRIVAL_S
    while not future.done() and target.held_requests(node) <= held_before:
        if time.monotonic() > deadline:
            raise ControlError(f"{path}: broker {node} neither held nor answered the request")
        time.sleep(_POLL_S)
    return []


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
    try:
        response = pending.future.result(timeout=_ARRIVAL_S)
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
