"""EndTxn's checks: what a transaction end prepares, or what it answers at once.

Theory of operation
-------------------
Kafka 4.0 has two rule sets (``TransactionCoordinator.endTransactionWithTV1``
and ``endTransaction``), chosen by the client's transaction version. Both
return either the metadata to prepare (and whether no partition was added: an
abort of an empty transaction, version 2 only) or the immediate answer.

Version 2's table for the states without an open transaction (PF
PRODUCER_FENCED, ITS INVALID_TXN_STATE, EB epoch bump; "retry" is a request
with the epoch just below the current one, from before the bump)::

                    Abort            Commit
                    retry  current   retry  current
    Empty           PF     EB        PF     ITS
    CompleteAbort   NONE   EB        ITS    ITS
    CompleteCommit  ITS    EB        NONE   ITS

Version 1 allows no retry: CompleteCommit accepts only a commit and
CompleteAbort only an abort (answering NONE), Empty neither.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.txn.metadata import NO_EPOCH, NO_PRODUCER_ID, TxnMetadata
from lethe_reference.cluster.txn.state import IllegalTransitionError, TxnState

__all__ = ["EndResult", "end_tv1", "end_tv2"]

_S = TxnState
#: the epoch a version-2 producer reaches just before its id is rotated
_LAST_EPOCH = 32766


@dataclass(frozen=True, slots=True)
class EndResult:
    """An EndTxn (or InitProducerId) answer: the error and, on success, id and epoch."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_EPOCH


_Decision = EndResult | tuple[TxnMetadata, bool]


def _invalid_state() -> EndResult:
    return EndResult(ErrorCode.INVALID_TXN_STATE)


def end_tv1(
    metadata: TxnMetadata, producer_id: int, epoch: int, commit: bool, *, from_client: bool
) -> _Decision:
    """``endTransactionWithTV1``'s checks: what to prepare, or the answer."""
    if metadata.producer_id != producer_id:
        return EndResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if (from_client and epoch != metadata.producer_epoch) or epoch < metadata.producer_epoch:
        return EndResult(ErrorCode.PRODUCER_FENCED)
    state = metadata.state
    if state is _S.ONGOING:
        return metadata, False
    if state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
        same = commit == (state is _S.COMPLETE_COMMIT)
        return EndResult(ErrorCode.NONE) if same else _invalid_state()
    if state.is_prepare:
        same = commit == (state is _S.PREPARE_COMMIT)
        return EndResult(ErrorCode.CONCURRENT_TRANSACTIONS) if same else _invalid_state()
    if state is _S.EMPTY:
        return _invalid_state()
    raise IllegalTransitionError(f"{metadata.transactional_id} found in {state.kafka_name}")


def end_tv2(
    metadata: TxnMetadata, producer_id: int, epoch: int, commit: bool, *, from_client: bool
) -> _Decision:
    """The version-2 table of ``endTransaction`` (retries of a bumped epoch answer NONE)."""
    current = metadata.producer_epoch
    fence = metadata.fencing
    overflow = (
        not fence
        and metadata.previous_producer_id == producer_id
        and epoch == _LAST_EPOCH
        and current == 0
    )
    retry = not fence and current == epoch + 1
    state = metadata.state
    if fence:
        valid = (not from_client or epoch == current) and epoch >= current
    elif state in (_S.ONGOING, _S.EMPTY):
        valid = epoch == current
    elif state.is_prepare:
        valid = retry
    else:
        valid = retry or overflow or epoch == current
    if metadata.producer_id != producer_id and not overflow:
        return EndResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if not valid:
        return EndResult(ErrorCode.PRODUCER_FENCED)
    is_retry = retry or overflow
    if state is _S.ONGOING:
        return metadata, False
    if state is _S.COMPLETE_COMMIT:
        if commit:
            return _retried(metadata) if is_retry else _invalid_state()
        return _invalid_state() if is_retry else (metadata, True)
    if state is _S.COMPLETE_ABORT:
        if not commit:
            return _retried(metadata) if is_retry else (metadata, True)
        return _invalid_state()
    if state.is_prepare:
        same = commit == (state is _S.PREPARE_COMMIT)
        return EndResult(ErrorCode.CONCURRENT_TRANSACTIONS) if same else _invalid_state()
    if state is _S.EMPTY:
        return (metadata, True) if not commit else _invalid_state()
    raise IllegalTransitionError(f"{metadata.transactional_id} found in {state.kafka_name}")


def _retried(metadata: TxnMetadata) -> EndResult:
    return EndResult(ErrorCode.NONE, metadata.producer_id, metadata.producer_epoch)
