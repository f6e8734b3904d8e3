"""Transactional Produce: the partition must be part of the producer's transaction.

Theory of operation
-------------------
With ``transaction.partition.verification.enable`` (true by default in Kafka
4.0), a leader that receives a transactional batch from a producer with no
open transaction on the partition asks the transaction coordinator first
(``ReplicaManager.appendRecords`` -> ``AddPartitionsToTxnManager``):

* Produce below v12 (a transaction version 1 client): AddPartitionsToTxn v4+
  ``verify_only``; a partition the client never added answers
  TRANSACTION_ABORTABLE, which clients up to Produce v10 get as INVALID_TXN_STATE
  with the message "Partition was not added to the transaction" and v11 clients,
  which know it, as it is, without a message
  (``AddPartitionsToTxnManager.produceRequestVersionToTransactionSupportedOperation``:
  ``defaultError`` up to v10, ``genericErrorSupported`` at v11);
* Produce v12+ (transaction version 2, KIP-890): the leader adds the partition
  to the transaction itself (AddPartitionsToTxn v5, not verify-only).

Error translation (``AddPartitionsToTxnManager`` and ``ReplicaManager``):
PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH; the coordinator being unreachable,
loading, moved or (below v12) CONCURRENT_TRANSACTIONS -> NOT_ENOUGH_REPLICAS,
"Unable to verify the partition has been added to the transaction. Underlying
error: <ERROR>". The coordinator of this process is reached directly (the
same broker, or a broker of the same in-process cluster).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from lethe_formats.model import TRANSACTIONAL_BIT
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.txn_runtime import coordinator_of
from lethe_reference.handlers.partition_ops.append import PartitionAppend

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.storage.log import PartitionLog

__all__ = ["in_transaction", "verification_refusal"]

#: Produce versions from which the leader adds the partition (transaction version 2).
ADD_PARTITION_PRODUCE_VERSION = 12
#: The first Produce version whose clients get TRANSACTION_ABORTABLE as it is.
ABORTABLE_PRODUCE_VERSION = 11
_NOT_ADDED = "Partition was not added to the transaction"
_UNVERIFIED = (
    "Unable to verify the partition has been added to the transaction. Underlying error: {}"
)
_RETRY = frozenset(
    {
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)


def _transactional_producer(records: bytes) -> tuple[int, int] | None:
    """(producer id, epoch) of a transactional first batch, else None."""
    if len(records) < 53 or records[16] != 2:
        return None
    (attributes,) = struct.unpack_from(">h", records, 21)
    producer_id, epoch = struct.unpack_from(">qh", records, 43)
    if not attributes & TRANSACTIONAL_BIT or producer_id < 0:
        return None
    return producer_id, epoch


def verification_refusal(
    broker: Broker,
    produce_version: int,
    transactional_id: str | None,
    target: tuple[tuple[str, int], PartitionLog],
    records: bytes,
) -> PartitionAppend | None:
    """Why the batch for ``target`` (partition, its log) may not be appended (module
    docstring), or None."""
    tp, log = target
    producer = _transactional_producer(records)
    if producer is None or transactional_id is None:
        return None
    if not broker.config.get_bool("transaction.partition.verification.enable"):
        return None
    entry = log.producer_state.table.get(producer[0])
    if entry is not None and entry.current_txn_first_offset is not None:
        return None  # already open here: nothing to verify
    adds = produce_version >= ADD_PARTITION_PRODUCE_VERSION
    code = in_transaction(broker, transactional_id, producer, tp, adds=adds)
    return _translated(code, adds=adds, abortable=produce_version >= ABORTABLE_PRODUCE_VERSION)


def in_transaction(
    broker: Broker,
    transactional_id: str,
    producer: tuple[int, int],
    tp: tuple[str, int],
    *,
    adds: bool,
) -> ErrorCode:
    """The coordinator's answer: is ``tp`` in the producer's transaction (or, with
    ``adds``, added to it now)?"""
    coordinator = coordinator_of(broker, transactional_id)
    if coordinator is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if adds:
        return coordinator.add_partitions(transactional_id, *producer, [tp], client_tv=2)
    return coordinator.verify_partitions(transactional_id, *producer, [tp])[tp]


def _translated(code: ErrorCode, *, adds: bool, abortable: bool) -> PartitionAppend | None:
    if code is ErrorCode.NONE:
        return None
    if code is ErrorCode.PRODUCER_FENCED:
        return PartitionAppend(ErrorCode.INVALID_PRODUCER_EPOCH)
    if code is ErrorCode.TRANSACTION_ABORTABLE and not abortable:
        code = ErrorCode.INVALID_TXN_STATE
    if code is ErrorCode.INVALID_TXN_STATE:
        return PartitionAppend(code, error_message=_NOT_ADDED)
    if code in _RETRY or (code is ErrorCode.CONCURRENT_TRANSACTIONS and not adds):
        return PartitionAppend(
            ErrorCode.NOT_ENOUGH_REPLICAS, error_message=_UNVERIFIED.format(code.name)
        )
    return PartitionAppend(code)
