"""The classic group's life cycle as a transition table.

Theory of operation
-------------------
A classic group is in one of five states (Kafka's ``ClassicGroupState``)::

    Empty --rebalance--> PreparingRebalance --join-complete--> CompletingRebalance
      ^                    |   ^      ^                            |       |
      |  join-complete-    |   |      +---------rebalance----------+       |
      +------empty---------+   |                              assignment-stored
                               +---------rebalance---- Stable <-----------+
    any state --unload--> Dead

* **Empty**: no members (a new group, a group whose members all left, or a
  "simple" group that only stores offsets committed without membership).
* **PreparingRebalance**: members are (re)joining; JoinGroup requests wait.
* **CompletingRebalance**: the join phase ended, the new generation exists,
  members were answered and must send SyncGroup; the leader's assignment is
  awaited.
* **Stable**: the leader's assignment was stored; heartbeats keep members in.
* **Dead**: the partition holding the group was unloaded (or the group deleted).

:data:`TRANSITIONS` maps ``(state, event)`` to the next state. It is the only
place that moves a group, through :func:`next_state`; a pair missing from the
table raises :class:`IllegalTransitionError`. The coordinator checks requests
before it fires events, so that error means a bug in the coordinator, never a
client mistake, and it is allowed to crash (h11's "our bug" side).
Kafka's own table (``ClassicGroupState.validPreviousStates``) admits exactly
these moves. :func:`mermaid` renders the table for the docs.
"""

from __future__ import annotations

import enum

__all__ = [
    "TRANSITIONS",
    "GroupEvent",
    "GroupState",
    "IllegalTransitionError",
    "mermaid",
    "next_state",
]


class GroupState(enum.Enum):
    """Kafka's state names, as DescribeGroups and ListGroups report them."""

    #: no members
    EMPTY = "Empty"
    #: members are joining; JoinGroup responses are held back
    PREPARING_REBALANCE = "PreparingRebalance"
    #: joined; waiting for the leader's SyncGroup
    COMPLETING_REBALANCE = "CompletingRebalance"
    #: assignment stored and handed out
    STABLE = "Stable"
    #: unloaded or deleted; requests are told to find the coordinator again
    DEAD = "Dead"


class GroupEvent(enum.Enum):
    """What can happen to a group."""

    #: a member joined, left, failed or changed its metadata
    REBALANCE = "rebalance"
    #: the join phase ended with at least one member: a new generation
    JOIN_COMPLETE = "join-complete"
    #: the join phase ended with no member left: a new, empty generation
    JOIN_COMPLETE_EMPTY = "join-complete-empty"
    #: the leader's assignment was written to __consumer_offsets
    ASSIGNMENT_STORED = "assignment-stored"
    #: the __consumer_offsets partition holding the group was unloaded
    UNLOAD = "unload"


class IllegalTransitionError(RuntimeError):
    """An event fired in a state that has no transition for it (a coordinator bug)."""

    def __init__(self, state: GroupState, event: GroupEvent) -> None:
        super().__init__(f"no transition from {state.value} on {event.value}")
        self.state = state
        self.event = event


_S = GroupState
_E = GroupEvent

#: (state, event) -> next state; nothing else moves a group.
TRANSITIONS: dict[tuple[GroupState, GroupEvent], GroupState] = {
    (_S.EMPTY, _E.REBALANCE): _S.PREPARING_REBALANCE,
    (_S.STABLE, _E.REBALANCE): _S.PREPARING_REBALANCE,
    (_S.COMPLETING_REBALANCE, _E.REBALANCE): _S.PREPARING_REBALANCE,
    (_S.PREPARING_REBALANCE, _E.JOIN_COMPLETE): _S.COMPLETING_REBALANCE,
    (_S.PREPARING_REBALANCE, _E.JOIN_COMPLETE_EMPTY): _S.EMPTY,
    (_S.COMPLETING_REBALANCE, _E.ASSIGNMENT_STORED): _S.STABLE,
    **{(state, _E.UNLOAD): _S.DEAD for state in GroupState},
}


def next_state(state: GroupState, event: GroupEvent) -> GroupState:
    """The state after ``event``; :class:`IllegalTransitionError` if there is none."""
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise IllegalTransitionError(state, event) from None


def can_fire(state: GroupState, event: GroupEvent) -> bool:
    """Whether ``event`` has a transition from ``state``."""
    return (state, event) in TRANSITIONS


def mermaid() -> str:
    """The table as a Mermaid state diagram (generated, so docs cannot drift)."""
    lines = ["stateDiagram-v2", f"    [*] --> {_S.EMPTY.value}"]
    for (state, event), target in TRANSITIONS.items():
        lines.append(f"    {state.value} --> {target.value}: {event.value}")
    return "\n".join(lines)
