"""Partition reassignment (KIP-455) as rules over a partition's state: start, finish, revert.

Theory of operation
-------------------
Kafka's controller moves a partition to a target replica list in stages
(``ReplicationControlManager.changePartitionReassignment``, ``PartitionReassignmentReplicas``,
``PartitionChangeBuilder.completeReassignmentIfNeeded``)::

    start     replicas = target + (current not in target)     (one list, target first)
              adding   = target not in current
              removing = current not in target
    wait      the new replicas fetch from the leader until they join the ISR
    finish    once every adding replica is in the ISR (with nothing to add: once the ISR
              holds a replica that is not being removed):
              replicas = target, ISR = ISR without removing; a leader being removed
              gives way to the first target replica alive and in the ISR
    cancel    (replicas null in the request) back to current without adding, ISR without
              adding, a leader being added gives way the same way

A reassignment that only reorders the replicas, or only removes some, finishes at
once. The leader epoch goes up whenever the leader changes and whenever the replica
list loses a member (``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``), so a
removed replica's fetches are fenced. Target lists are checked as
``validateManualPartitionAssignment`` checks them (not empty, registered brokers, no
broker twice: INVALID_REPLICA_ASSIGNMENT with Kafka's messages).

The controller keeps a :class:`Reassignment` per moving partition and calls
:func:`finished` after every ISR change. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.broker_errors import KafkaError, error_for_code
from lethe_formats.protocol.error_codes import ErrorCode

if TYPE_CHECKING:
    from lethe_reference.cluster.controller import PartitionState

__all__ = ["Reassignment", "cancelled", "check_target", "finished", "started"]

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Reassignment:
    """A reassignment in progress: the replicas being added and those being removed."""

    adding: tuple[int, ...]
    removing: tuple[int, ...]


def _invalid(message: str) -> KafkaError:
    return error_for_code(ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)


def check_target(target: Sequence[int], registered: Collection[int]) -> None:
    """``validateManualPartitionAssignment``: raise INVALID_REPLICA_ASSIGNMENT (39)."""
    if not target:
        raise _invalid("The manual partition assignment includes an empty replica list.")
    previous = None
    for broker in sorted(target):
        if broker not in registered:
            raise _invalid(
                f"The manual partition assignment includes broker {broker}, but no such "
                "broker is registered."
            )
        if broker == previous:
            raise _invalid(
                f"The manual partition assignment includes the broker {broker} more than once."
            )
        previous = broker


def _with_replicas(
    state: PartitionState,
    replicas: tuple[int, ...],
    isr: tuple[int, ...],
    alive: Callable[[int], bool],
) -> PartitionState:
    """``state`` on ``replicas`` and ``isr``, re-electing a leader that left them and
    bumping the epoch when the leader changed or a replica left."""
    leader = state.leader
    if leader not in replicas or leader not in isr:
        leader = next((n for n in replicas if n in isr and alive(n)), NO_LEADER)
    shrunk = not set(state.replicas) <= set(replicas)
    epoch = state.leader_epoch + 1 if (leader != state.leader or shrunk) else state.leader_epoch
    return replace(state, replicas=replicas, leader=leader, leader_epoch=epoch, isr=isr)


def started(
    state: PartitionState, target: Sequence[int], alive: Callable[[int], bool]
) -> tuple[PartitionState, Reassignment | None]:
    """The state once a reassignment to ``target`` began (finished at once when it can)."""
    removing = tuple(n for n in state.replicas if n not in target)
    adding = tuple(n for n in target if n not in state.replicas)
    merged = (*target, *removing)
    moving = replace(state, replicas=merged)
    reassignment = Reassignment(adding, removing)
    done = finished(moving, reassignment, alive)
    return (done, None) if done is not None else (moving, reassignment)


def finished(
    state: PartitionState, reassignment: Reassignment, alive: Callable[[int], bool]
) -> PartitionState | None:
    """The final state when the ISR allows finishing, else None."""
    if reassignment.adding:
        if not all(n in state.isr for n in reassignment.adding):
            return None
    elif not any(n not in reassignment.removing for n in state.isr):
        return None
    target = tuple(n for n in state.replicas if n not in reassignment.removing)
    isr = tuple(n for n in state.isr if n not in reassignment.removing)
    return _with_replicas(state, target, isr, alive)


def cancelled(
    state: PartitionState, reassignment: Reassignment, alive: Callable[[int], bool]
) -> PartitionState:
    """Back to the replicas before the reassignment (``PartitionReassignmentRevert``)."""
    replicas = tuple(n for n in state.replicas if n not in reassignment.adding)
    isr = tuple(n for n in state.isr if n not in reassignment.adding)
    return _with_replicas(state, replicas, isr, alive)
