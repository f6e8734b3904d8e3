"""The in-process cluster controller: placement, elections, ISR changes, liveness.

Expected values follow Kafka's rules: striped placement without racks starts
partition p at broker p mod n; every leader change bumps the leader epoch by one;
a stopped broker leaves every ISR and a partition it led elects the next live
in-sync replica.
"""

from __future__ import annotations

import pytest
from lethe_reference.cluster.controller import ClusterController, PartitionState

TP = tuple[str, int]


class Recorder:
    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.changes: list[tuple[TP, PartitionState | None]] = []
        self.activated: list[TP] = []

    def partition_changed(
        self, tp: TP, old: PartitionState | None, new: PartitionState | None
    ) -> None:
        self.changes.append((tp, new))

    def activate(self, tp: TP) -> None:
        self.activated.append(tp)


def cluster(size: int = 3) -> tuple[ClusterController, list[Recorder]]:
    controller = ClusterController(tuple(range(1, size + 1)))
    members = [Recorder(n) for n in range(1, size + 1)]
    for member in members:
        controller.register(member)
    return controller, members


def test_replicas_are_striped_over_live_brokers_and_the_first_leads_at_epoch_zero() -> None:
    controller, _ = cluster()
    controller.assign("t", range(3), 3)
    assert controller.state(("t", 0)) == PartitionState((1, 2, 3), 1, 0, (1, 2, 3))
    assert controller.state(("t", 1)) == PartitionState((2, 3, 1), 2, 0, (2, 3, 1))
    assert controller.state(("t", 2)) == PartitionState((3, 1, 2), 3, 0, (3, 1, 2))


def test_every_member_applies_a_change_before_any_activates_it() -> None:
    controller, members = cluster()
    controller.assign("t", range(1), 2)
    for member in members:
        assert member.changes == [(("t", 0), controller.state(("t", 0)))]
        assert member.activated == [("t", 0)]


def test_moving_the_leader_bumps_the_leader_epoch_by_one() -> None:
    controller, _ = cluster()
    controller.assign("t", range(1), 3)
    moved = controller.move_leader(("t", 0), 3)
    assert (moved.leader, moved.leader_epoch, moved.isr) == (3, 1, (1, 2, 3))
    assert controller.move_leader(("t", 0), 2).leader_epoch == 2


def test_the_leader_must_be_an_assigned_live_replica() -> None:
    controller, _ = cluster()
    controller.assign("t", range(1), 2)
    with pytest.raises(ValueError, match="not a live replica"):
        controller.move_leader(("t", 0), 3)


def test_a_stopped_broker_leaves_every_isr_and_its_partitions_elect_the_next_in_sync_replica() -> (
    None
):
    controller, _ = cluster()
    controller.assign("t", range(2), 3)
    controller.broker_stopped(1)
    assert controller.state(("t", 0)) == PartitionState((1, 2, 3), 2, 1, (2, 3))
    assert controller.state(("t", 1)) == PartitionState((2, 3, 1), 2, 0, (2, 3))
    assert not controller.is_alive(1)


def test_the_isr_keeps_the_order_it_was_sent_in_and_must_hold_the_leader() -> None:
    """Kafka 4.0.0 printed ``Replicas: 2,3	Isr: 3,2`` after replica 2 rejoined the ISR
    (fixtures/golden/admin-tools/leadership-cluster, step describe-eta-rejoined): the
    leader appends a joining replica, and the controller keeps that order."""
    controller, _ = cluster()
    controller.assign("t", range(1), 3)
    assert controller.set_isr(("t", 0), (1, 3, 7)).isr == (1, 3)
    assert controller.set_isr(("t", 0), (1, 3, 2)).isr == (1, 3, 2)
    with pytest.raises(ValueError, match="must hold its leader"):
        controller.set_isr(("t", 0), (2, 3))
