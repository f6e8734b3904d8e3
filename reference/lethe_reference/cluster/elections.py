"""An operator's leader election (ElectLeaders, KIP-460) over a partition's state, as rules.

Theory of operation
-------------------
Kafka's controller answers ElectLeaders per partition
(``ReplicationControlManager.electLeader`` over ``PartitionChangeBuilder``); the
answer depends only on the partition's record (replicas, leader, ISR) and which
brokers are alive (registered and unfenced). "Eligible" below means alive and in
the ISR.

PREFERRED
    the leader is already ``replicas[0]``: ELECTION_NOT_NEEDED (84). Otherwise an
    eligible ``replicas[0]`` leads; else an eligible current leader stays and the
    answer is PREFERRED_LEADER_NOT_AVAILABLE (80) (nothing changed); else the
    first other eligible replica leads; else the partition has no leader (-1).
UNCLEAN
    the partition has a leader: ELECTION_NOT_NEEDED (84). Otherwise an eligible
    replica leads (a clean election); else the first alive replica leads and the
    ISR becomes just it (unclean: records only the old ISR had are lost); else
    ELIGIBLE_LEADERS_NOT_AVAILABLE (83).

A change of leader raises the leader epoch by one. Eligible leader replicas
(KIP-966) are off in Kafka 4.0 unless the ``eligible.leader.replicas.version``
feature is finalized, which lethe never does, so they play no part.

:func:`elect` returns the partition's new state (or None when nothing changes)
and the error code; the controller applies the state. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode

if TYPE_CHECKING:
    from lethe_reference.cluster.controller import PartitionState

__all__ = ["PREFERRED", "UNCLEAN", "Election", "elect"]

#: ``ElectionType`` values (the request's ``election_type``).
PREFERRED = 0
UNCLEAN = 1
NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Election:
    """The outcome for one partition: its new state (None: unchanged) and the error."""

    state: PartitionState | None
    error: ErrorCode


def _clean_candidate(
    state: PartitionState, order: tuple[int, ...], alive: Callable[[int], bool]
) -> int | None:
    return next((n for n in order if n in state.isr and alive(n)), None)


def _moved(state: PartitionState, leader: int, *, unclean: bool = False) -> PartitionState:
    isr = (leader,) if unclean else state.isr
    return replace(state, leader=leader, leader_epoch=state.leader_epoch + 1, isr=isr)


def _preferred(state: PartitionState, alive: Callable[[int], bool]) -> Election:
    if state.leader == state.replicas[0]:
        return Election(None, ErrorCode.ELECTION_NOT_NEEDED)
    if _clean_candidate(state, state.replicas[:1], alive) is not None:
        return Election(_moved(state, state.replicas[0]), ErrorCode.NONE)
    if state.leader != NO_LEADER and _clean_candidate(state, (state.leader,), alive) is not None:
        return Election(None, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)
    other = _clean_candidate(state, state.replicas[1:], alive)
    if other is not None:
        return Election(_moved(state, other), ErrorCode.NONE)
    if state.leader == NO_LEADER:
        return Election(None, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)
    return Election(_moved(state, NO_LEADER), ErrorCode.NONE)


def _unclean(state: PartitionState, alive: Callable[[int], bool]) -> Election:
    if state.leader != NO_LEADER:
        return Election(None, ErrorCode.ELECTION_NOT_NEEDED)
    clean = _clean_candidate(state, state.replicas, alive)
    if clean is not None:
        return Election(_moved(state, clean), ErrorCode.NONE)
    live = next((n for n in state.replicas if alive(n)), None)
    if live is not None:
        return Election(_moved(state, live, unclean=True), ErrorCode.NONE)
    return Election(None, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)


def elect(state: PartitionState, election_type: int, alive: Callable[[int], bool]) -> Election:
    """What an election of ``election_type`` does to ``state`` (module docstring)."""
    if election_type == PREFERRED:
        return _preferred(state, alive)
    return _unclean(state, alive)
