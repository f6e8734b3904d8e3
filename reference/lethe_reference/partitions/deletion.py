"""Reducing a topic's partitions: the mode changes, the delayed check, the deletion.

Theory of operation
-------------------
KIP-694's controller workflow (``TopicPartitionDeletionManager``), on a single
node that is its own controller, so every step is applied where Kafka would
notify brokers::

    DeletePartitions(topic, count, delay)
        partitions count.. -> ReadOnly, reduction recorded (created now)     start_reduction
    every delete.topic.partition.interval.delay.ms                           check_due
        for a reduction whose created + delay has passed:
            partitions -> None (recorded first, so a crash retries)          delete_removed
            their logs deleted as a deleted topic's: the directory is
            renamed <topic>-<p>.<uuid>-delete, removed after
            log.segment.delete.delay.ms; the root checkpoints are rewritten
            without them
            committed offsets of the removed partitions deleted    delete_committed_offsets
            the topic's count becomes ``count``, the reduction is done

``ImmediateDelete`` or a delay of 0 runs :func:`delete_removed` inside the
request (catalog KIP694-API-5): the partitions answer ``None`` (-1) and are
gone from Metadata when the response leaves.

Committed offsets (catalog KIP694-DEL-5): Kafka deletes a deleted topic's
committed offsets (the coordinators' ``onPartitionsDeleted`` writes a tombstone
per offset); the same happens here for removed partitions, so a partition
created again later inherits no consumer position. The group coordinator does
the writing (``OffsetLogic.delete_partition_offsets``).

A deletion that raises (an ``OSError`` renaming a directory) leaves the
reduction pending with its partitions in None; the next check tries again
(KIP694-DEL-7). The check task runs only while ``delete.topic.partition.enable``
is true; a reduction saved before a restart with the feature switched off
stays pending, its partitions ReadOnly.

In an in-process cluster (a broker with a cluster member) the reduction is
shared with every broker and its deletion waits until every broker holding a
replica is up (:mod:`lethe_reference.cluster.reduction`); ``check_due`` counts
only the reductions that finished.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lethe_reference.cluster import reduction as cluster_reduction
from lethe_reference.cluster.membership import member_of
from lethe_reference.partitions.state import (
    ENABLE_CONFIG,
    INTERVAL_CONFIG,
    PartitionMode,
    Reduction,
)

if TYPE_CHECKING:
    from collections.abc import Collection

    from lethe_reference.broker import Broker
    from lethe_reference.metadata import TopicInfo

__all__ = [
    "CHECK_TASK",
    "check_due",
    "delete_committed_offsets",
    "delete_removed",
    "enabled",
    "mode_of",
    "start",
    "start_reduction",
]

_log = logging.getLogger(__name__)
#: The scheduler task of the delayed-deletion check (KIP: scheduleDelayDeletePartitionTask).
CHECK_TASK = "delete-topic-partitions"


def enabled(broker: Broker) -> bool:
    """``delete.topic.partition.enable``: DeletePartitions served and the check running."""
    return broker.config.get_bool(ENABLE_CONFIG)


def mode_of(broker: Broker, topic: str, partition: int) -> PartitionMode:
    """The partition's mode (ReadWrite for unknown topics and partitions)."""
    info = broker.metadata.get(topic)
    return PartitionMode.READ_WRITE if info is None else info.mode(partition)


def start(broker: Broker) -> None:
    """Broker startup hook: queue the periodic check when the feature is on."""
    if not enabled(broker):
        return
    period = broker.config.get_int(INTERVAL_CONFIG)
    broker.scheduler.schedule(CHECK_TASK, period, lambda: check_due(broker), period_ms=period)


def start_reduction(
    broker: Broker, topic: str, count: int, *, delay_ms: int, immediate: bool
) -> dict[int, PartitionMode]:
    """Shrink ``topic`` to ``count`` partitions (the caller validated it); returns
    each removed partition's mode after the request (the response's StatusCode)."""
    info = _info(broker, topic)
    removed = range(count, info.partitions)
    now = broker.clock.now_ms()
    if immediate or delay_ms == 0:
        broker.metadata.set_reduction(topic, Reduction(count, 0, now), {})
        member = member_of(broker)
        if member is not None:
            cluster_reduction.reduction_started(member, topic)
        delete_removed(broker, topic)
        return dict.fromkeys(removed, PartitionMode.NONE)
    modes = dict.fromkeys(removed, PartitionMode.READ_ONLY)
    broker.metadata.set_reduction(topic, Reduction(count, delay_ms, now), modes)
    member = member_of(broker)
    if member is not None:
        cluster_reduction.reduction_started(member, topic)
    _log.info(
        "topic %s: partitions %d-%d ReadOnly, deleted after %d ms",
        topic,
        count,
        info.partitions - 1,
        delay_ms,
    )
    return dict(modes)


def check_due(broker: Broker) -> int:
    """The periodic check: delete every reduction whose delay has passed; how many."""
    now = broker.clock.now_ms()
    done = 0
    for info in list(broker.metadata):
        if info.reduction is None or info.reduction.due_ms > now:
            continue
        try:
            if delete_removed(broker, info.name).reduction is None:
                done += 1
        except OSError as error:
            _log.warning("deleting removed partitions of %s failed, retrying: %s", info.name, error)
    return done


def delete_removed(broker: Broker, topic: str) -> TopicInfo:
    """Delete the partitions a pending reduction removes (module docstring); a
    cluster member hands it to :mod:`lethe_reference.cluster.reduction`."""
    member = member_of(broker)
    if member is not None:
        return cluster_reduction.delete_removed(member, topic)
    info = _info(broker, topic)
    reduction = info.reduction
    if reduction is None:
        raise ValueError(f"topic {topic!r} has no pending reduction")
    removed = list(range(reduction.count, info.partitions))
    broker.metadata.set_reduction(topic, reduction, dict.fromkeys(removed, PartitionMode.NONE))
    broker.delete_partition_logs(topic, removed)
    delete_committed_offsets(broker, [(topic, p) for p in removed])
    broker.metadata.set_partitions(topic, reduction.count)
    _log.info("topic %s reduced to %d partitions", topic, reduction.count)
    return broker.metadata.set_reduction(topic, None, {})


def delete_committed_offsets(broker: Broker, partitions: Collection[tuple[str, int]]) -> int:
    """Delete every group's committed offsets of ``partitions``; how many were deleted
    (none while the broker's group coordinator is not running: nothing is loaded)."""
    coordinator = broker.group_coordinator
    if coordinator is None or not partitions:
        return 0
    return coordinator.delete_partition_offsets(partitions)


def _info(broker: Broker, topic: str) -> TopicInfo:
    info = broker.metadata.get(topic)
    if info is None:
        raise ValueError(f"unknown topic {topic!r}")
    return info
