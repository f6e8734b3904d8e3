"""Committed offsets of removed partitions, deleted from the group coordinator.

Kafka deletes a deleted topic's committed offsets (the coordinators'
``onPartitionsDeleted`` writes a tombstone per offset); catalog KIP694-DEL-5
asks the same for partitions KIP-694 removes, so a partition created again
later does not inherit a consumer position into data that no longer exists.
The coordinator does the work
(:meth:`~lethe_reference.cluster.group.offsets.OffsetLogic.delete_partition_offsets`);
this is the broker-side call. A broker whose coordinator is not running has
nothing loaded to delete.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["delete_committed_offsets"]


def delete_committed_offsets(broker: Broker, partitions: Collection[tuple[str, int]]) -> int:
    """Delete every group's committed offsets of ``partitions``; how many were deleted."""
    coordinator = broker.group_coordinator
    if coordinator is None or not partitions:
        return 0
    return coordinator.delete_partition_offsets(partitions)
