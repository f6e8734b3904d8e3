"""KIP-694 partition reductions in an in-process cluster: modes shared, deletion held.

Theory of operation
-------------------
On a single broker (:mod:`lethe_reference.partitions.deletion`) the broker is
its own controller: the removed partitions go ReadOnly, and when the delay
has passed they go None and are deleted within the same check. In a cluster
the controller's decisions reach every broker (a metadata delta), and the
replicas live on several brokers, so::

    DeletePartitions on any broker                                 reduction_started
        the reduction and the ReadOnly modes are copied to every live
        broker's registry: Metadata, Produce and DeletePartitions answer
        alike wherever they are sent
    the delay passed (some broker's check)                         delete_removed
        every live broker records the removed partitions as None
        a replica of them on a broker that is down?  -> hold: nothing is
            deleted, the partitions stay readable (the leader's log is kept)
            and refuse Produce (POLICY_VIOLATION, catalog KIP694-MODE-2)
        otherwise: the controller drops the partitions (fetchers stop,
            leaders step down), every broker deletes its replica logs and
            the group coordinator the committed offsets, and every registry
            shrinks to ``count`` partitions with the reduction done
    a broker starts again                                          broker_started
        it learns the pending reductions it missed, and held deletions
        resume (every replica may now be online)

Holding the whole deletion while one replica is offline is what Kafka's
``TopicDeletionManager`` does with a topic deletion (a topic with a replica on
a dead broker is ineligible for deletion until the broker comes back); it is
what makes the None mode last "until replica deletion ends" (catalog decision
of KIP694-MODE-5) for an observable time.

A broker started alone has no cluster member and never reaches this module.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lethe_reference.partitions.state import PartitionMode

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.cluster.membership import Member
    from lethe_reference.metadata import TopicInfo

__all__ = ["broker_started", "delete_removed", "offline_holders", "reduction_started"]

_log = logging.getLogger(__name__)


def live_brokers(member: Member) -> list[Broker]:
    """Every running broker of the cluster, ``member``'s own included."""
    found = [member.peer(n) for n in member.controller.node_ids]
    return [b for b in found if b is not None and member.controller.is_alive(b.node_id)]


def _copy(source: TopicInfo, brokers: list[Broker]) -> None:
    """Give every broker's registry ``source``'s reduction and modes."""
    for broker in brokers:
        info = broker.metadata.get(source.name)
        if info is not None and (info.reduction, info.modes) != (source.reduction, source.modes):
            broker.metadata.set_reduction(source.name, source.reduction, source.modes)


def reduction_started(member: Member, topic: str) -> None:
    """A reduction was recorded on ``member``'s broker: every live broker learns it."""
    info = member.broker.metadata.get(topic)
    if info is not None:
        _copy(info, live_brokers(member))


def offline_holders(member: Member, topic: str, partitions: range) -> set[int]:
    """Brokers that are down and hold a replica of one of ``partitions``."""
    controller = member.controller
    holders: set[int] = set()
    for partition in partitions:
        state = controller.state((topic, partition))
        if state is not None:
            holders.update(state.replicas)
    return {n for n in holders if not controller.is_alive(n)}


def delete_removed(member: Member, topic: str) -> TopicInfo:
    """The due reduction of ``topic``: None everywhere, then deletion unless held
    (module docstring); returns ``member``'s registry entry afterwards."""
    info = member.broker.metadata.get(topic)
    reduction = None if info is None else info.reduction
    if info is None or reduction is None:
        raise ValueError(f"topic {topic!r} has no pending reduction")
    removed = range(reduction.count, info.partitions)
    brokers = live_brokers(member)
    for broker in brokers:
        broker.metadata.set_reduction(topic, reduction, dict.fromkeys(removed, PartitionMode.NONE))
    offline = offline_holders(member, topic, removed)
    if offline:
        _log.info(
            "topic %s: deleting partitions %d-%d held, replicas offline on %s",
            topic,
            reduction.count,
            info.partitions - 1,
            sorted(offline),
        )
        return _entry(member.broker, topic)
    _delete_everywhere(member, brokers, topic, list(removed), reduction.count)
    return _entry(member.broker, topic)


def _entry(broker: Broker, topic: str) -> TopicInfo:
    info = broker.metadata.get(topic)
    if info is None:
        raise ValueError(f"unknown topic {topic!r}")
    return info


def _delete_everywhere(
    member: Member, brokers: list[Broker], topic: str, removed: list[int], count: int
) -> None:
    from lethe_reference.partitions.deletion import delete_committed_offsets  # noqa: PLC0415

    member.controller.remove_partitions(topic, removed)
    for broker in brokers:
        broker.delete_partition_logs(
            topic, [p for p in removed if broker.log(topic, p) is not None]
        )
        delete_committed_offsets(broker, [(topic, p) for p in removed])
        if topic in broker.metadata:
            broker.metadata.set_partitions(topic, count)
            broker.metadata.set_reduction(topic, None, {})
    _log.info("topic %s reduced to %d partitions on every replica", topic, count)


def broker_started(member: Member) -> None:
    """``member``'s broker (re)joined: it learns the pending reductions it missed, and
    deletions held for an offline replica (partitions already None) resume."""
    others = [b for b in live_brokers(member) if b is not member.broker]
    held: set[str] = set()
    for other in others:
        for info in list(other.metadata):
            if info.reduction is None:
                continue
            _copy(info, [member.broker])
            if PartitionMode.NONE in info.modes.values():
                held.add(info.name)
    for topic in sorted(held):
        try:
            delete_removed(member, topic)
        except OSError as error:  # the next check retries (catalog KIP694-DEL-7)
            _log.warning("deleting removed partitions of %s failed, retrying: %s", topic, error)
