"""Where consumed retention's committed offsets come from: the broker's group coordinator.

Theory of operation
-------------------
:mod:`.consumed` is a pure rule fed one :class:`MinCommittedOffsets` per
retention pass. :func:`committed_offsets_of` builds it from a broker, reading
only what the coordinator has *committed* (its ``offsets`` table, what
OffsetFetch answers from; catalog KIP68-MCO-4). The coordinator writes an
offset there only after its ``__consumer_offsets`` append succeeded, and
removes it when the group's partition is unloaded, so a pending or failed
commit never counts. Every group counts, with members or without (simple
groups that commit outside membership, KIP68-MCO-1); a group in state Dead
counts as having nothing, as OffsetFetch answers for it.

The answer is *incomplete* (no partition gets consumed retention this pass,
KIP68-MCO-3) when some ``__consumer_offsets`` partition the coordinator should
serve is not loaded, e.g. because its records failed to replay: a group
stored there might hold back the minimum. A broker with no coordinator, or no
``__consumer_offsets`` yet, has no committed offsets at all (KIP68-MCO-2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from lethe_reference.metadata import CONSUMER_OFFSETS
from lethe_reference.retention.consumed import NO_COMMITTED_OFFSETS, MinCommittedOffsets

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.cluster.group import GroupCoordinator

__all__ = ["committed_offsets_of"]

TopicPartition = tuple[str, int]
_DEAD = "Dead"


def committed_offsets_of(broker: Broker) -> MinCommittedOffsets:
    """The min committed offset of every partition, from ``broker``'s coordinator."""
    coordinator = broker.group_coordinator
    if coordinator is None:
        return NO_COMMITTED_OFFSETS
    info = broker.metadata.get(CONSUMER_OFFSETS)
    partitions = 0 if info is None else info.partitions
    served = min(partitions, coordinator.config.offsets_topic_num_partitions)
    complete = set(range(served)) <= coordinator.loaded
    return MinCommittedOffsets.of_groups(_committed(coordinator), complete=complete)


def _committed(coordinator: GroupCoordinator) -> Iterator[Mapping[TopicPartition, int]]:
    for group_id, stored in coordinator.offsets.items():
        group = coordinator.groups.get(group_id)
        if group is not None and group.state.value == _DEAD:
            continue
        yield {tp: value.offset for tp, value in stored.items()}
