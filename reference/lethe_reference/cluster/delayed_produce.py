"""Produce with ``acks=-1`` on a replicated partition: wait for the ISR (``DelayedProduce``).

Theory of operation
-------------------
Kafka answers an ``acks=-1`` Produce only when every partition it appended to
has its high watermark at the append's end (``requiredOffset`` = last offset
+ 1), i.e. every in-sync replica has the records; until then the request is
parked in the Produce purgatory for ``timeoutMs``
(``ReplicaManager.delayedProduceRequestRequired`` / ``DelayedProduce``):

* a partition whose HW reached its required offset is done (NONE; Kafka
  would answer NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR had shrunk below
  ``min.insync.replicas``, which the reference cluster does not check);
* a partition this broker no longer leads: NOT_LEADER_OR_FOLLOWER (6);
* at the deadline the partitions still waiting answer REQUEST_TIMED_OUT (7),
  keeping their base offset.

The HW moves when a follower's fetch reports a higher LEO or the ISR
shrinks; both re-check the partition's watch key
(:func:`~lethe_reference.handlers.partition_ops.common.complete_delayed`).
A single broker never waits: its HW is the LEO right after the append, so
:func:`maybe_delay` returns the response as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.membership import member_of
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.handlers.partition_ops.append import PartitionAppend

__all__ = ["DelayedProduce", "maybe_delay"]

R = TypeVar("R")
TopicPartition = tuple[str, int]
Statuses = dict[TopicPartition, "PartitionAppend"]


class DelayedProduce(Deferred[R]):
    """An ``acks=-1`` Produce waiting for the ISR (module docstring)."""

    def __init__(
        self,
        broker: Broker,
        statuses: Statuses,
        required: dict[TopicPartition, int],
        build: Callable[[Statuses], R],
    ) -> None:
        super().__init__()
        self.broker = broker
        self.statuses = dict(statuses)
        self.required = dict(required)
        self.build = build

    def try_complete(self) -> R | None:
        member = member_of(self.broker)
        for tp in sorted(self.required):
            log = self.broker.log(*tp)
            if member is None or log is None or not member.is_leader(tp):
                self.statuses[tp] = replace(
                    self.statuses[tp], error=ErrorCode.NOT_LEADER_OR_FOLLOWER
                )
                del self.required[tp]
            elif log.high_watermark >= self.required[tp]:
                del self.required[tp]
        return None if self.required else self.build(self.statuses)

    def on_expire(self) -> R:
        timed_out = {
            tp: replace(s, error=ErrorCode.REQUEST_TIMED_OUT) if tp in self.required else s
            for tp, s in self.statuses.items()
        }
        return self.build(timed_out)


def maybe_delay(
    broker: Broker,
    acks: int,
    timeout_ms: int,
    statuses: Statuses,
    build: Callable[[Statuses], R],
) -> R | Deferred[R]:
    """The response now, or a parked :class:`DelayedProduce` (cluster, ``acks=-1``)."""
    if acks != -1 or member_of(broker) is None:
        return build(statuses)
    required: dict[TopicPartition, int] = {}
    for tp, status in statuses.items():
        log = broker.log(*tp)
        if status.appended and log is not None:
            required[tp] = log.log_end_offset
    if not required:
        return build(statuses)
    delayed = DelayedProduce(broker, statuses, required, build)
    deadline = broker.clock.now_ms() + timeout_ms
    if broker.purgatories.produce.watch(delayed, list(required), deadline):
        return delayed.result()
    return delayed
