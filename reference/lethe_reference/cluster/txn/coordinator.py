"""The transaction coordinator (Kafka 4.0's ``TransactionCoordinator``), sans-IO.

Theory of operation
-------------------
:class:`TransactionCoordinator` holds the :class:`~.metadata.TxnMetadata` of
every transactional id in the ``__transaction_state`` partitions it has loaded
and answers the transaction APIs. Everything outside it is injected
(:class:`TxnIO`): the clock, the append to a ``__transaction_state`` partition,
the writing of markers, new producer ids, a partition's coordinator epoch.
Calls are synchronous: a state change is written to the log before it is
installed (an append error leaves the old state and becomes the client's
error, mapped as ``TransactionStateManager.appendTransactionToLog`` maps it),
and EndTxn writes the markers and the Complete state before it answers.

Transaction versions (KIP-890). The client's version comes from the request
version (EndTxn v5+, AddPartitionsToTxn v4+: version 2; older: 0). With
version 2 every transaction end bumps the producer epoch (PrepareCommit /
PrepareAbort carry epoch + 1, and EndTxn returns it); with version 0 the epoch
moves only in InitProducerId and fencing. The coordinator's own aborts (a
timed-out transaction, a fence by InitProducerId) use the server's version
(``transaction.version`` finalized at 2 on a fresh Kafka 4.0 cluster): the
fence bumps the epoch, the version-2 abort bumps it once more.

The plumbing (injected I/O, loading, writing records and markers) is
:class:`~.base.CoordinatorBase`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.txn.base import CoordinatorBase, TxnAppendError, TxnConfig, TxnIO
from lethe_reference.cluster.txn.end_rules import EndResult, end_tv1, end_tv2
from lethe_reference.cluster.txn.metadata import (
    NO_EPOCH,
    NO_PRODUCER_ID,
    TopicPartition,
    TxnMetadata,
    epoch_exhausted,
    transit,
)
from lethe_reference.cluster.txn.state import IllegalTransitionError, TxnState

__all__ = [
    "DescribedTxn",
    "EndResult",
    "TransactionCoordinator",
    "TxnAppendError",
    "TxnConfig",
    "TxnIO",
]

_S = TxnState


@dataclass(frozen=True, slots=True)
class DescribedTxn:
    transactional_id: str
    error: ErrorCode
    metadata: TxnMetadata | None = None


class TransactionCoordinator(CoordinatorBase):
    """The transaction APIs over the loaded transactional ids."""

    # -- InitProducerId ----------------------------------------------------------------

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None = None
    ) -> EndResult:
        """``handleInitProducerId`` for a transactional id (``expected``: the
        producer's (id, epoch), v3+)."""
        if transactional_id == "":
            return EndResult(ErrorCode.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return EndResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        if not self.owns(transactional_id):
            return EndResult(ErrorCode.NOT_COORDINATOR)
        metadata = self.txns.get(transactional_id)
        if metadata is None:
            metadata = TxnMetadata(
                transactional_id,
                self.io.new_producer_id(),
                NO_EPOCH,
                timeout_ms,
                _S.EMPTY,
                self.io.now_ms(),
            )
            self.txns[transactional_id] = metadata
        if expected is not None and not _valid_producer(metadata, *expected):
            return EndResult(ErrorCode.PRODUCER_FENCED)
        if metadata.state.is_prepare:
            return EndResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        if metadata.state is _S.ONGOING:
            return self._fence_and_abort(metadata)
        if not metadata.state.is_complete_or_empty:
            raise IllegalTransitionError(f"{transactional_id} found in {metadata.state.kafka_name}")
        bumped = self._bumped(metadata, timeout_ms, expected)
        if isinstance(bumped, ErrorCode):
            return EndResult(bumped)
        error = self._write(bumped)
        if error is not ErrorCode.NONE:
            return EndResult(error)
        return EndResult(ErrorCode.NONE, bumped.producer_id, bumped.producer_epoch)

    def _bumped(
        self, metadata: TxnMetadata, timeout_ms: int, expected: tuple[int, int] | None
    ) -> TxnMetadata | ErrorCode:
        """``prepareIncrementProducerEpoch`` / ``prepareProducerIdRotation``."""
        now = self.io.now_ms()
        epoch, last = metadata.producer_epoch, metadata.last_producer_epoch
        common = {"timeout_ms": timeout_ms, "partitions": frozenset(), "start_ms": -1}
        if epoch_exhausted(epoch) and (expected is None or expected[1] == epoch):
            return transit(
                metadata, _S.EMPTY, now, producer_id=self.io.new_producer_id(), producer_epoch=0,
                last_producer_epoch=epoch if expected is not None else NO_EPOCH,
                previous_producer_id=metadata.producer_id, **common,
            )  # fmt: skip
        if expected is None:
            next_epoch, next_last = epoch + 1, NO_EPOCH
        elif epoch == NO_EPOCH or expected[1] == epoch:
            next_epoch, next_last = epoch + 1, epoch
        elif expected[1] == last:
            next_epoch, next_last = epoch, last  # a retry of a bump that was answered
        else:
            return ErrorCode.PRODUCER_FENCED
        return transit(
            metadata,
            _S.EMPTY,
            now,
            producer_epoch=next_epoch,
            last_producer_epoch=next_last,
            **common,
        )

    def _fence_and_abort(self, metadata: TxnMetadata) -> EndResult:
        """An Ongoing transaction met a new producer instance: fence the old
        epoch, abort; the new producer retries (CONCURRENT_TRANSACTIONS)."""
        fenced = self._fence(metadata)
        result = self._abort_fenced(fenced)
        if result.error is ErrorCode.NONE:
            return EndResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        return EndResult(result.error)

    def _abort_fenced(self, fenced: TxnMetadata) -> EndResult:
        """The coordinator's own abort of a fenced transaction (server's version)."""
        return self._end(
            fenced,
            fenced.producer_id,
            fenced.producer_epoch,
            False,
            client_tv=self.config.server_tv,
            from_client=False,
        )

    @staticmethod
    def _fence(metadata: TxnMetadata) -> TxnMetadata:
        """``prepareFenceProducerEpoch``: held in memory only, never written."""
        return dataclasses.replace(
            metadata, producer_epoch=metadata.producer_epoch + 1, fencing=True
        )

    # -- AddPartitionsToTxn / AddOffsetsToTxn ------------------------------------------

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
        client_tv: int = 0,
    ) -> ErrorCode:
        """``handleAddPartitionsToTransaction``: one error for all the partitions."""
        wanted = frozenset(partitions)
        if transactional_id == "":
            return ErrorCode.INVALID_REQUEST
        if not self.owns(transactional_id):
            return ErrorCode.NOT_COORDINATOR
        metadata = self.txns.get(transactional_id)
        error = _check_producer(metadata, producer_id, producer_epoch)
        if error is not None or metadata is None:
            return error or ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if metadata.state.is_prepare:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if metadata.state is _S.ONGOING and wanted <= metadata.partitions:
            return ErrorCode.NONE
        now = self.io.now_ms()
        start = now if metadata.state.is_complete_or_empty else metadata.start_ms
        ongoing = transit(
            metadata, _S.ONGOING, now, partitions=metadata.partitions | wanted, start_ms=start,
            client_tv=client_tv,
        )  # fmt: skip
        return self._write(ongoing)

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """``handleVerifyPartitionsInTransaction`` (AddPartitionsToTxn v4+ verify-only)."""
        wanted = list(partitions)
        if transactional_id == "":
            return dict.fromkeys(wanted, ErrorCode.INVALID_REQUEST)
        if not self.owns(transactional_id):
            return dict.fromkeys(wanted, ErrorCode.NOT_COORDINATOR)
        metadata = self.txns.get(transactional_id)
        error = _check_producer(metadata, producer_id, producer_epoch)
        if metadata is not None and error is None and metadata.state.is_prepare:
            error = ErrorCode.CONCURRENT_TRANSACTIONS
        if error is not None or metadata is None:
            return dict.fromkeys(wanted, error or ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        return {
            tp: ErrorCode.NONE if tp in metadata.partitions else ErrorCode.TRANSACTION_ABORTABLE
            for tp in wanted
        }

    # -- EndTxn ------------------------------------------------------------------------

    def end_txn(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        client_tv: int = 0,
    ) -> EndResult:
        """``handleEndTransaction`` from a client."""
        if transactional_id == "":
            return EndResult(ErrorCode.INVALID_REQUEST)
        if not self.owns(transactional_id):
            return EndResult(ErrorCode.NOT_COORDINATOR)
        metadata = self.txns.get(transactional_id)
        if metadata is None:
            return EndResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        return self._end(
            metadata, producer_id, producer_epoch, commit, client_tv=client_tv, from_client=True
        )

    def _end(
        self,
        metadata: TxnMetadata,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        *,
        client_tv: int,
        from_client: bool,
    ) -> EndResult:
        decided = (end_tv2 if client_tv >= 2 else end_tv1)(
            metadata, producer_id, producer_epoch, commit, from_client=from_client
        )
        if isinstance(decided, EndResult):
            return decided
        prepared, no_partition = decided
        fenced = prepared.fencing
        if fenced:  # the fenced epoch becomes the current one (Kafka sets it before preparing)
            prepared = dataclasses.replace(prepared, last_producer_epoch=NO_EPOCH)
        now = self.io.now_ms()
        next_id = NO_PRODUCER_ID
        if client_tv >= 2 and not fenced and epoch_exhausted(prepared.producer_epoch):
            next_id = self.io.new_producer_id()
        if client_tv >= 2:
            epoch, last = prepared.producer_epoch + 1, prepared.producer_epoch
        else:
            epoch, last = prepared.producer_epoch, prepared.last_producer_epoch
        target = _S.PREPARE_COMMIT if commit else _S.PREPARE_ABORT
        to_write = transit(
            prepared, target, now, producer_epoch=epoch, last_producer_epoch=last,
            next_producer_id=next_id, start_ms=now if no_partition else prepared.start_ms,
            client_tv=client_tv, fencing=False,
        )  # fmt: skip
        error = self._write(to_write)
        if error is not ErrorCode.NONE:
            return EndResult(error)
        error = self._complete(to_write)
        if error is not ErrorCode.NONE:
            return EndResult(error)
        if client_tv >= 2:
            return EndResult(ErrorCode.NONE, to_write.producer_id, to_write.producer_epoch)
        return EndResult(ErrorCode.NONE)

    # -- timeouts ----------------------------------------------------------------------

    def abort_timed_out(self) -> list[str]:
        """``abortTimedOutTransactions``: every Ongoing transaction past its
        ``transaction.timeout.ms`` is fenced and aborted. The ids aborted."""
        now = self.io.now_ms()
        aborted = []
        for metadata in list(self.txns.values()):
            if metadata.state is not _S.ONGOING or metadata.start_ms + metadata.timeout_ms >= now:
                continue
            if not self.owns(metadata.transactional_id):
                continue
            fenced = self._fence(metadata)
            result = self._abort_fenced(fenced)
            if result.error is ErrorCode.NONE:
                aborted.append(metadata.transactional_id)
        return aborted

    def next_timeout_ms(self) -> int | None:
        """When the earliest Ongoing transaction times out (None: none is open)."""
        deadlines = [
            m.start_ms + m.timeout_ms + 1 for m in self.txns.values() if m.state is _S.ONGOING
        ]
        return min(deadlines, default=None)

    # -- Describe / List ---------------------------------------------------------------

    def describe(self, transactional_id: str) -> DescribedTxn:
        if transactional_id == "":
            return DescribedTxn(transactional_id, ErrorCode.INVALID_REQUEST)
        if not self.owns(transactional_id):
            return DescribedTxn(transactional_id, ErrorCode.NOT_COORDINATOR)
        metadata = self.txns.get(transactional_id)
        if metadata is None or metadata.state is _S.DEAD or metadata.producer_epoch == NO_EPOCH:
            return DescribedTxn(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        return DescribedTxn(transactional_id, ErrorCode.NONE, metadata)

    def list_transactions(
        self, states: Iterable[str] = (), producer_ids: Iterable[int] = (), duration_ms: int = -1
    ) -> tuple[list[TxnMetadata], list[str]]:
        """``listTransactionStates``: (matching transactions, unknown state names)."""
        names = list(states)
        wanted = {s for s in (TxnState.from_kafka_name(n) for n in names) if s is not None}
        unknown = [n for n in names if TxnState.from_kafka_name(n) is None]
        ids = set(producer_ids)
        now = self.io.now_ms()
        ordered = sorted(self.txns.values(), key=self._list_order)
        listed = [
            m
            for m in ordered
            if m.state is not _S.DEAD
            and m.producer_epoch != NO_EPOCH
            and (not ids or m.producer_id in ids)
            and (not names or m.state in wanted)
            and not (duration_ms >= 0 and now - m.start_ms <= duration_ms)
        ]
        return listed, unknown

    def _list_order(self, metadata: TxnMetadata) -> tuple[int, str]:
        """Kafka lists partition by partition, ascending (catalog TXN-LIST-ORDER)."""
        return self.partition_for(metadata.transactional_id), metadata.transactional_id

    def snapshot(self) -> Mapping[str, TxnMetadata]:
        return dict(self.txns)


def _valid_producer(metadata: TxnMetadata, producer_id: int, epoch: int) -> bool:
    """``isValidProducerId`` of InitProducerId v3+."""
    return (
        metadata.producer_epoch == NO_EPOCH
        or producer_id == metadata.producer_id
        or (producer_id == metadata.previous_producer_id and epoch_exhausted(epoch))
    )


def _check_producer(
    metadata: TxnMetadata | None, producer_id: int, producer_epoch: int
) -> ErrorCode | None:
    if metadata is None or metadata.producer_id != producer_id:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if metadata.producer_epoch != producer_epoch:
        return ErrorCode.PRODUCER_FENCED
    return None
