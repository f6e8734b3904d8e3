"""Waits for the broker's own time-driven work on the wall clock: await_retention_pass,
await_broker_time.

Theory of operation
-------------------
On a virtual clock a scenario shows that retention *kept* a segment by moving
the clock past a retention interval and looking again. On the wall clock the
runner cannot tell when the broker's ``kafka-log-retention`` task ran, so it
makes the task leave a mark: the step's ``topic`` is a setup topic of the
scenario's own (one partition, ``cleanup.policy`` delete, a finite
``retention.ms``) that only this op writes to. Each round produces one record
timestamped 2020-01-01, long expired, and waits until the log start offset
has passed it: a retention pass deleted the (active) segment holding it,
as Kafka deletes an expired non-empty active segment after rolling it
(kafka-facts 5). Two rounds::

    round 1 deleted   a pass P1 ran after the step began (it may have looked at
                      the scenario's other logs just before the step began)
    round 2 deleted   a later pass P2 began after P1 had finished, so it looked
                      at every log in the state the step began with

Kafka's retention task checks every log of the broker in one pass on one
thread (``LogManager.cleanupLogs``), so after round 2 any segment that was
deletable when the step began is gone; whatever is still there was kept by a
whole pass. Each round waits at most ``timeout_ms`` with the ``wait`` op's
polling (INCONCLUSIVE on the wall clock when it runs out).

``await_broker_time`` waits until the *broker's* clock reached a value (a delete
horizon, say), read the way ``produce``'s ``capture`` reads it: the
LogAppendTime of a record appended to the step's ``topic`` (a setup topic with
``message.timestamp.type`` LogAppendTime). The runner's own clock is never
used, so a broker on another machine with a skewed clock is judged by its own
time. The last time read is captured under ``capture`` when given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lethe_formats.protocol.error_codes import ErrorCode, error_name

from lethe_conformance.client import calls
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.ops.control import poll_until
from lethe_conformance.scenarios.ops.messages import produce_payloads
from lethe_conformance.scenarios.ops.registry import op

__all__ = ["EXPIRED_TIMESTAMP", "ROUNDS"]

_BROKER_TIME_POLL_MS = 500

#: 2020-01-01T00:00:00Z: expired under any retention.ms a marker topic sets
EXPIRED_TIMESTAMP = "1577836800000"
ROUNDS = 2
_EARLIEST = -2


@op("await_retention_pass")
def await_retention_pass(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    topic = ctx.topic(data["topic"])
    for round_number in range(ROUNDS):
        where = f"{path} (round {round_number + 1})"
        offset = _append_expired(ctx, topic, where)
        if isinstance(offset, Mismatch):
            return [offset]
        _await_start(ctx, data, topic, offset + 1, where)
    return []


def _await_start(
    ctx: RunContext, data: Mapping[str, Any], topic: str, wanted: int, where: str
) -> None:
    """Poll (as ``wait`` does) until the marker topic's log start offset reached ``wanted``."""
    poll_until(
        ctx,
        lambda: _start_passed(ctx, topic, wanted, where),
        data["timeout_ms"],
        data.get("poll_ms"),
        where,
    )


def _append_expired(ctx: RunContext, topic: str, where: str) -> int | Mismatch:
    """Produce the expired marker record; its offset, or the refusal as a mismatch."""
    batch = {"records": [{"key": "pass", "value": "pass", "timestamp": EXPIRED_TIMESTAMP}]}
    (payload,) = produce_payloads({"batches": [batch]})
    response = calls.produce(ctx.conn(), topic, 0, payload)
    answer = response.responses[0].partition_responses[0]
    if answer.error_code != ErrorCode.NONE:
        what = f"{where} produce to {ctx.symbol(topic)}"
        return Mismatch(what, "NONE", error_name(answer.error_code))
    return int(answer.base_offset)


def _start_passed(ctx: RunContext, topic: str, wanted: int, where: str) -> list[Mismatch]:
    """No mismatch once the marker topic's log start offset (EARLIEST) reached ``wanted``."""
    answer = calls.list_offsets(ctx.conn(), [(topic, 0, _EARLIEST)])
    found = answer.topics[0].partitions[0]
    if found.error_code == ErrorCode.NONE and found.offset >= wanted:
        return []
    return [
        Mismatch(
            f"{where} log start offset of {ctx.symbol(topic)}",
            f"at least {wanted}",
            f"{found.offset} ({error_name(found.error_code)})",
        )
    ]


@op("await_broker_time")
def await_broker_time(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    topic = ctx.topic(data["topic"])
    wanted = ctx.value(data["at_least"])

    def reached() -> list[Mismatch]:
        batch = {"records": [{"key": "time", "value": "time", "timestamp": "0"}]}
        (payload,) = produce_payloads({"batches": [batch]})
        answer = calls.produce(ctx.conn(), topic, 0, payload).responses[0].partition_responses[0]
        now = answer.log_append_time_ms
        if answer.error_code != ErrorCode.NONE or now < 0:
            what = f"{path} LogAppendTime of {ctx.symbol(topic)}"
            return [
                Mismatch(what, "a LogAppendTime topic", f"{now} ({error_name(answer.error_code)})")
            ]
        if "capture" in data:
            ctx.capture(data["capture"], now)
        if now >= wanted:
            return []
        return [Mismatch(f"{path} broker time", f"at least {wanted}", str(now))]

    poll_until(ctx, reached, data["timeout_ms"], data.get("poll_ms", _BROKER_TIME_POLL_MS), path)
    return []
