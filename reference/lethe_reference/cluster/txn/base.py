"""The transaction coordinator's plumbing: what it needs from the broker, its
partitions, loading them, and writing state records and markers.

Theory of operation
-------------------
:class:`CoordinatorBase` holds the :class:`~.metadata.TxnMetadata` of every
transactional id of the ``__transaction_state`` partitions it has loaded;
:mod:`.coordinator` adds the APIs on top. Everything outside is injected
(:class:`TxnIO`): the clock, the append to a ``__transaction_state`` partition,
the writing of markers, new producer ids, a partition's coordinator epoch. A
state change is written to the log before it is installed: an append error
leaves the old state and becomes the client's error, mapped as
``TransactionStateManager.appendTransactionToLog`` maps it.

Loading (``loadTransactionsForTxnTopicPartition``): the last record per id
wins, a tombstone removes it; a transaction found in PrepareCommit or
PrepareAbort gets its markers written and is completed, an Ongoing one stays
Ongoing until its timeout aborts it (a producer killed mid-transaction).

Expiry (``removeExpiredTransactionalIds``): an id in Empty, CompleteCommit or
CompleteAbort whose last update is ``transactional.id.expiration.ms`` old or
older (``last_update <= now - expiration``: the boundary expires) moves to
Dead and its tombstone (the key, a null value, timestamp now) is appended;
once written the id is forgotten, so a later InitProducerId starts afresh
(a new producer id, epoch 0). Dead is never installed: it is Kafka's pending
state between the append and its callback, which here are one call. Kafka
skips ids with a pending state; the coordinator is synchronous, so between
calls none is pending (the in-memory epoch fence lives only inside a call).
A failed append leaves every id of that partition as it was, for the next
pass. One batch per partition (catalog KIP534-TXC-6).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from lethe_formats.coordinator.transaction_log import (
    decode_transaction_key,
    decode_transaction_value,
    encode_transaction_key,
    encode_transaction_value,
)
from lethe_formats.protocol.error_codes import ErrorCode, known_code
from lethe_formats.records.builder import RecordSpec, build_batch

from lethe_reference.cluster.group.support import partition_for
from lethe_reference.cluster.txn.metadata import (
    NO_PRODUCER_ID,
    TopicPartition,
    TxnMetadata,
    from_value,
    prepare_dead,
    to_value,
    transit,
)
from lethe_reference.cluster.txn.state import TxnState

__all__ = ["CoordinatorBase", "TxnAppendError", "TxnConfig", "TxnIO"]

_log = logging.getLogger("lethe_reference.cluster.txn.coordinator")
_S = TxnState


class TxnAppendError(Exception):
    """Raised by :meth:`TxnIO.append`: the write failed with Kafka error ``code``."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message or f"append failed with error {code}")
        self.code = code


class TxnIO(Protocol):
    """What the coordinator needs from the broker."""

    def now_ms(self) -> int: ...

    def append(self, partition: int, batch: bytes) -> None: ...

    def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: frozenset[TopicPartition],
    ) -> None: ...

    def new_producer_id(self) -> int: ...

    def coordinator_epoch(self, partition: int) -> int: ...


@dataclass(frozen=True, slots=True)
class TxnConfig:
    """Broker settings the coordinator reads (Kafka 4.0 defaults)."""

    num_partitions: int = 50
    max_timeout_ms: int = 900_000
    #: ``transaction.version`` finalized on the cluster
    server_tv: int = 2
    #: ``transactional.id.expiration.ms`` (7 days)
    id_expiration_ms: int = 604_800_000


#: ``appendTransactionToLog``'s mapping of append errors to client errors.
_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


class CoordinatorBase:
    """Loaded transactional ids, partitions, writes (module docstring)."""

    def __init__(self, io: TxnIO, config: TxnConfig | None = None) -> None:
        self.io = io
        self.config = config or TxnConfig()
        self.txns: dict[str, TxnMetadata] = {}
        #: loaded partition -> its coordinator epoch
        self.loaded: dict[int, int] = {}

    # -- partitions --------------------------------------------------------------------

    def partition_for(self, transactional_id: str) -> int:
        """``TransactionStateManager.partitionFor``: the Java hash of the id."""
        return partition_for(transactional_id, self.config.num_partitions)

    def owns(self, transactional_id: str) -> bool:
        return self.partition_for(transactional_id) in self.loaded

    def load(self, partition: int, records: Iterable[tuple[bytes | None, bytes | None]]) -> None:
        """Become coordinator of ``partition`` from its records (log order)."""
        self.unload(partition)
        found: dict[str, TxnMetadata | None] = {}
        for key, value in records:
            transactional_id = decode_transaction_key(key).transactional_id
            if transactional_id is None:
                continue  # a key version Kafka does not know: skipped
            decoded = decode_transaction_value(value)
            found[transactional_id] = (
                None if decoded is None else from_value(transactional_id, decoded)
            )
        self.loaded[partition] = self.io.coordinator_epoch(partition)
        for transactional_id, metadata in found.items():
            if metadata is not None:
                self.txns[transactional_id] = metadata
        for metadata in list(self.txns.values()):
            if (
                self.partition_for(metadata.transactional_id) == partition
                and metadata.state.is_prepare
            ):
                self._complete(metadata)

    def unload(self, partition: int) -> None:
        self.loaded.pop(partition, None)
        for transactional_id in [t for t in self.txns if self.partition_for(t) == partition]:
            del self.txns[transactional_id]

    # -- writes ------------------------------------------------------------------------

    def _write(self, metadata: TxnMetadata) -> ErrorCode:
        """Append ``metadata``'s record; install it when written. NONE or the error."""
        transactional_id = metadata.transactional_id
        record = RecordSpec(
            key=encode_transaction_key(transactional_id),
            value=encode_transaction_value(to_value(metadata)),
            timestamp=self.io.now_ms(),
        )
        try:
            self.io.append(
                self.partition_for(transactional_id), build_batch([record], base_offset=0)
            )
        except TxnAppendError as error:
            _log.warning("writing the state of %s failed: %s", transactional_id, error)
            code = known_code(error.code) or ErrorCode.UNKNOWN_SERVER_ERROR
            return _APPEND_ERRORS.get(code, code)
        self.txns[transactional_id] = metadata
        return ErrorCode.NONE

    # -- expiry ------------------------------------------------------------------------

    def expire_transactional_ids(self) -> list[str]:
        """Tombstone and forget the expired ids of the loaded partitions (module
        docstring); the ids removed."""
        now = self.io.now_ms()
        cutoff = now - self.config.id_expiration_ms
        expiring: dict[int, list[TxnMetadata]] = {}
        for metadata in self.txns.values():
            partition = self.partition_for(metadata.transactional_id)
            if (
                partition in self.loaded
                and metadata.state.is_complete_or_empty
                and not metadata.fencing
                and metadata.last_update_ms <= cutoff
            ):
                expiring.setdefault(partition, []).append(metadata)
        removed: list[str] = []
        for partition, found in sorted(expiring.items()):
            found.sort(key=lambda m: m.transactional_id)
            dead = [prepare_dead(metadata) for metadata in found]
            tombstones = [
                RecordSpec(
                    key=encode_transaction_key(m.transactional_id), value=None, timestamp=now
                )
                for m in dead
            ]
            try:
                self.io.append(partition, build_batch(tombstones, base_offset=0))
            except TxnAppendError as error:
                _log.warning(
                    "expiring %d ids of partition %d failed: %s", len(dead), partition, error
                )
                continue
            for metadata in dead:
                del self.txns[metadata.transactional_id]
                removed.append(metadata.transactional_id)
        return removed

    def _complete(self, prepared: TxnMetadata) -> ErrorCode:
        """Markers for a PrepareCommit/PrepareAbort, then its Complete state."""
        commit = prepared.state is _S.PREPARE_COMMIT
        coordinator_epoch = self.loaded.get(self.partition_for(prepared.transactional_id), 0)
        self.io.write_markers(
            prepared.producer_id,
            prepared.producer_epoch,
            commit,
            coordinator_epoch,
            prepared.partitions,
        )
        rotate = prepared.client_tv >= 2 and prepared.next_producer_id != NO_PRODUCER_ID
        done = transit(
            prepared,
            _S.COMPLETE_COMMIT if commit else _S.COMPLETE_ABORT,
            self.io.now_ms(),
            partitions=frozenset(),
            producer_id=prepared.next_producer_id if rotate else prepared.producer_id,
            producer_epoch=0 if rotate else prepared.producer_epoch,
            previous_producer_id=prepared.producer_id if rotate else prepared.previous_producer_id,
            next_producer_id=NO_PRODUCER_ID,
        )
        return self._write(done)
