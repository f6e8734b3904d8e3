"""One transactional id's coordinator state, and its ``__transaction_state`` record.

Theory of operation
-------------------
:class:`TxnMetadata` is Kafka's ``TransactionMetadata`` as plain data. A
change is computed as a new value (:func:`transit`: a copy with the table of
:mod:`.state` checked), written to the log, and only then installed, which is
Kafka's prepare/complete pair without the lock: the coordinator is driven by
one thread, so nothing runs between preparing and completing.

The record (``TransactionLog.valueToBytes``): value version 1, the partitions
grouped by topic (null in Empty), the previous/next producer ids not written
(their defaults), the client transaction version (0 for a transaction version
1 client, 2 for a KIP-890 one).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from lethe_formats.coordinator.transaction_log import TransactionLogValue, TransactionPartitions

from lethe_reference.cluster.txn.state import TxnState, check_transition

__all__ = [
    "NO_EPOCH",
    "NO_PRODUCER_ID",
    "TopicPartition",
    "TxnMetadata",
    "epoch_exhausted",
    "from_value",
    "prepare_dead",
    "to_value",
    "transit",
]

TopicPartition = tuple[str, int]
NO_PRODUCER_ID = -1
NO_EPOCH = -1
_MAX_EPOCH = 32767


def epoch_exhausted(epoch: int) -> bool:
    """``TransactionMetadata.isEpochExhausted``: no epoch left to bump to."""
    return epoch >= _MAX_EPOCH - 1


@dataclass(frozen=True, slots=True)
class TxnMetadata:
    """A transactional id's state as the coordinator holds it."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    last_update_ms: int
    partitions: frozenset[TopicPartition] = frozenset()
    start_ms: int = -1
    last_producer_epoch: int = NO_EPOCH
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    client_tv: int = 0
    #: an epoch fence is prepared but not written (Kafka's pendingState PrepareEpochFence)
    fencing: bool = field(default=False, compare=False)


def transit(current: TxnMetadata, state: TxnState, now_ms: int, **changes: Any) -> TxnMetadata:
    """``prepareTransitionTo``: ``current`` moved to ``state`` at ``now_ms``."""
    check_transition(current.state, state)
    return dataclasses.replace(current, state=state, last_update_ms=now_ms, **changes)


def prepare_dead(current: TxnMetadata) -> TxnMetadata:
    """``prepareDead``: the id expires; everything kept but the partitions (none
    in the states that expire), the last update time included."""
    return transit(current, TxnState.DEAD, current.last_update_ms, partitions=frozenset())


def _grouped(partitions: frozenset[TopicPartition]) -> tuple[TransactionPartitions, ...]:
    topics: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        topics.setdefault(topic, []).append(partition)
    return tuple(TransactionPartitions(t, tuple(ps)) for t, ps in topics.items())


def to_value(metadata: TxnMetadata) -> TransactionLogValue:
    """The record value Kafka 4.0 writes for ``metadata``."""
    empty = metadata.state is TxnState.EMPTY
    return TransactionLogValue(
        producer_id=metadata.producer_id,
        producer_epoch=metadata.producer_epoch,
        transaction_timeout_ms=metadata.timeout_ms,
        transaction_status=int(metadata.state),
        transaction_partitions=None if empty else _grouped(metadata.partitions),
        transaction_last_update_timestamp_ms=metadata.last_update_ms,
        transaction_start_timestamp_ms=metadata.start_ms,
        client_transaction_version=metadata.client_tv,
    )


def from_value(transactional_id: str, value: TransactionLogValue) -> TxnMetadata:
    """``readTxnRecordValue``: the state a loaded record describes."""
    partitions = frozenset(
        (entry.topic, partition)
        for entry in value.transaction_partitions or ()
        for partition in entry.partition_ids
    )
    return TxnMetadata(
        transactional_id=transactional_id,
        producer_id=value.producer_id,
        producer_epoch=value.producer_epoch,
        timeout_ms=value.transaction_timeout_ms,
        state=TxnState(value.transaction_status),
        last_update_ms=value.transaction_last_update_timestamp_ms,
        partitions=partitions,
        start_ms=value.transaction_start_timestamp_ms,
        previous_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        client_tv=value.client_transaction_version,
    )
