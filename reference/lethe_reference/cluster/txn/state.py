"""Transaction states and the transitions Kafka 4.0 allows between them.

Theory of operation
-------------------
A transactional id's coordinator-side life is a state machine (Kafka's
``TransactionState``); the id is the byte ``__transaction_state`` stores::

    Empty(0) --AddPartitions--> Ongoing(1)
    Ongoing --EndTxn commit--> PrepareCommit(2) --markers--> CompleteCommit(4)
    Ongoing --EndTxn abort---> PrepareAbort(3)  --markers--> CompleteAbort(5)
    Ongoing --InitProducerId / timeout--> PrepareEpochFence(7) --> PrepareAbort
    Empty / CompleteCommit / CompleteAbort --expiry--> Dead(6)

:data:`VALID_PREVIOUS` is the table of ``validPreviousStates``: a transition
from a state not listed for the target is a coordinator bug
(:class:`IllegalTransitionError`), never a client error; client errors are decided
before a transition is prepared.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["VALID_PREVIOUS", "IllegalTransitionError", "TxnState", "check_transition"]


class TxnState(IntEnum):
    """The state ids of ``TransactionState``; :attr:`kafka_name` is Kafka's spelling."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def from_kafka_name(cls, name: str) -> TxnState | None:
        """The state Kafka calls ``name`` (exact spelling), or None."""
        return next((s for s in cls if s.kafka_name == name), None)

    @property
    def is_prepare(self) -> bool:
        return self in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

    @property
    def is_complete_or_empty(self) -> bool:
        return self in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


_E, _O, _PC, _PA = TxnState.EMPTY, TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT
_CC, _CA, _F = TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT, TxnState.PREPARE_EPOCH_FENCE

#: target state -> the states it may be entered from (``validPreviousStates``).
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    _E: frozenset({_E, _CC, _CA}),
    _O: frozenset({_O, _E, _CC, _CA}),
    _PC: frozenset({_O}),
    _PA: frozenset({_O, _F, _E, _CC, _CA}),
    _CC: frozenset({_PC}),
    _CA: frozenset({_PA}),
    TxnState.DEAD: frozenset({_E, _CA, _CC}),
    _F: frozenset({_O}),
}


class IllegalTransitionError(RuntimeError):
    """A transition the table forbids: a coordinator bug (Kafka's IllegalStateException)."""


def check_transition(current: TxnState, target: TxnState) -> None:
    """Raise :class:`IllegalTransitionError` unless ``current -> target`` is allowed."""
    if current not in VALID_PREVIOUS[target]:
        raise IllegalTransitionError(f"{current.kafka_name} -> {target.kafka_name} is not allowed")
