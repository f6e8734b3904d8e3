"""Partition leadership of a single KRaft node across restarts: leader and leader epoch.

Theory of operation
-------------------
In KRaft Kafka a partition's leader and leader epoch live in the metadata log
(``PartitionRecord`` / ``PartitionChangeRecord``); every change of the leader
field, even to "no leader" (-1), raises the leader epoch by one
(``PartitionRegistration.merge``). A node that is its own controller
(``process.roles=broker,controller``) and the only replica of every partition
therefore moves each partition's epoch by **two** on every restart, which a real
Kafka 4.0.0 shows (leader-epoch-checkpoint ``0 0`` / ``2 40`` / ``4 80`` after a
clean restart, then a kill -9 and a quick restart):

================================  ==============================  ==========  ======
event                              controller code                 leader      epoch
================================  ==============================  ==========  ======
clean shutdown (SIGTERM)           ``handleBrokerInControlledShut  -1          +1
                                   down``: the broker leaves the
                                   ISR, no other leader is left
restart after a clean shutdown     ``registerBroker`` ->           -1          +0
                                   ``handleBrokerShutdown``: the
                                   leader is already -1, no change
restart after kill -9              ``registerBroker`` (new         -1          +1
                                   incarnation) ->
                                   ``handleBrokerShutdown``: the
                                   stale leader is removed
unfenced (caught up)               ``handleBrokerUnfenced``:       this node   +1
                                   leaderless partitions elect it
================================  ==============================  ==========  ======

(The ISR keeps the last replica: ``PartitionChangeBuilder`` never empties it
without ELR, so the node is re-elected at once when unfenced.) The broker then
becomes leader at the new epoch (``Partition.makeLeader``) and writes
``(epoch, log end offset)`` into ``leader-epoch-checkpoint`` at once, with or
without appends after it (``assignEpochStartOffset``); every batch it appends
carries the new epoch.

The reference broker keeps a :class:`Leadership` per partition in its topic
registry (:mod:`lethe_reference.metadata`, the stand-in for the metadata log),
so the epoch survives restarts; this module holds the values, their JSON form
and the transitions above. It imports nothing from the broker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "NO_LEADER",
    "Leadership",
    "leadership_from_json",
    "leadership_to_json",
]

#: ``LeaderConstants.NO_LEADER``: the partition has no leader.
NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Leadership:
    """A partition's leader (a node id, or :data:`NO_LEADER`) and leader epoch."""

    leader: int
    leader_epoch: int = 0

    def controlled_shutdown(self) -> Leadership:
        """The only replica left the ISR on a clean shutdown: no leader, epoch + 1."""
        if self.leader == NO_LEADER:
            return self
        return Leadership(NO_LEADER, self.leader_epoch + 1)

    def registered(self) -> Leadership:
        """A new incarnation registered: a leader still recorded (kill -9) is
        removed, which is an epoch bump; after a clean shutdown nothing changes."""
        return self.controlled_shutdown()

    def unfenced(self, node_id: int, floor_epoch: int | None = None) -> Leadership:
        """The node is unfenced and elected: epoch + 1 (above ``floor_epoch``, the
        latest epoch the log has seen, so a log dir whose registry entry was lost
        never goes back in epochs)."""
        base = self.leader_epoch if floor_epoch is None else max(self.leader_epoch, floor_epoch)
        return Leadership(node_id, base + 1)

    def restarted(self, node_id: int, floor_epoch: int | None = None) -> Leadership:
        """What a restart of the single node does to a partition (table above)."""
        return self.registered().unfenced(node_id, floor_epoch)


def leadership_to_json(states: Mapping[int, Leadership]) -> dict[str, list[int]]:
    """``{"partition": [leader, leader_epoch]}`` (JSON keys are strings)."""
    return {str(p): [s.leader, s.leader_epoch] for p, s in sorted(states.items())}


def leadership_from_json(data: object) -> dict[int, Leadership]:
    """Saved states; entries that do not read as ``partition: [leader, epoch]`` are dropped."""
    if not isinstance(data, Mapping):
        return {}
    out: dict[int, Leadership] = {}
    for key, value in data.items():
        if not (isinstance(key, str) and key.isdigit()) or not isinstance(value, list):
            continue
        if len(value) == 2 and all(isinstance(v, int) and v >= -1 for v in value):
            out[int(key)] = Leadership(value[0], max(0, value[1]))
    return out
