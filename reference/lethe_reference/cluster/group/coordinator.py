"""The group coordinator (classic and KIP-848 consumer groups): one object, sans-IO.

Theory of operation
-------------------
:class:`GroupCoordinator` is the public face of the layers below it, each
adding one concern to the same state::

    CoordinatorRuntime  state, clock, timers, append, load/unload, Describe/List
      RebalanceLogic    join and sync phases, session and sync expiry
        MembershipLogic JoinGroup, SyncGroup, Heartbeat, LeaveGroup
          OffsetLogic   OffsetCommit, OffsetFetch
            DeletionLogic OffsetDelete, DeleteGroups
              CleanupLogic  the periodic expiration job (offsets, Empty groups)
                ConsumerGroupLogic  KIP-848 consumer groups (``consumer/``)
                  GroupCoordinator

Building one::

    coordinator = GroupCoordinator(clock, append, GroupConfig(...))
    for partition in range(50):           # or only the partitions this broker leads
        coordinator.load(partition, records_of(partition))

then hand it requests (``join_group``, ``sync_group``, ``heartbeat``,
``leave_group``, ``commit_offsets``, ``fetch_offsets``, ``delete_offsets``,
``delete_groups``, ``describe_group``,
``list_groups``) and call ``tick()`` whenever ``next_deadline_ms()`` has passed.
JoinGroup and SyncGroup may return a :class:`Pending`; its callbacks fire when
the reply is known. Nothing here touches a socket or a thread.
"""

from __future__ import annotations

from lethe_reference.cluster.group.consumer.logic import ConsumerGroupLogic

__all__ = ["GroupCoordinator"]


class GroupCoordinator(ConsumerGroupLogic):
    """Kafka 4.0's classic group coordinator (see the module docstring)."""
