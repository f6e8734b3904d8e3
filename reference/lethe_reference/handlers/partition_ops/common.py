"""Shared pieces of the data plane: partition lookup, watch keys, epochs, error codes.

Theory of operation
-------------------
Kafka's ``ReplicaManager`` finds a partition in two steps, and the four data
APIs keep both, because they answer differently:

1. ``metadataCache.contains(tp)``: is the topic known and the partition number
   below its count? If not, KafkaApis answers UNKNOWN_TOPIC_OR_PARTITION (3)
   itself, before the replica manager sees the partition.
2. ``getPartitionOrException``: is the partition hosted here? On one broker that
   is "does the log manager have a log for it"; a topic in the registry whose
   log is missing (a half-created topic) also gives 3. A member of an
   in-process cluster that hosts the partition but does not lead it answers
   NOT_LEADER_OR_FOLLOWER (6) (:mod:`lethe_reference.cluster.membership`).
   A partition whose log directory went offline (``HostedPartition.Offline``,
   here an injected ``log-dir-offline``: :mod:`lethe_reference.injected_failures`)
   answers KAFKA_STORAGE_ERROR (56), before any leadership check.

:func:`lookup` does both and returns the :class:`~lethe_reference.storage.log.PartitionLog`
or the error code.

**Watch keys.** Delayed operations are parked in the broker's purgatories
under :func:`watch_key` (``TopicPartitionOperationKey``): the tuple
``(topic, partition)``. Whoever changes a partition's HW or log start offset
calls :func:`complete_delayed` so waiting Fetch and DeleteRecords requests are
re-checked (Kafka's ``tryCompleteDelayedRequests``). A broker that stops leading
a partition re-checks only its waiting Fetch and Produce requests
(:func:`complete_delayed_not_leader`, Kafka's
``completeDelayedOperationsWhenNotPartitionLeader``): Kafka 4.0 leaves a waiting
DeleteRecords alone there, so it is answered at its deadline, REQUEST_TIMED_OUT
with the low watermark of its arrival (catalog KIP107-PUR-6).

**Leader epoch.** A new partition is led at epoch :data:`LEADER_EPOCH` (0);
every restart of a single KRaft node raises it by two, as Kafka's controller
does (:mod:`lethe_reference.leadership`), and a cluster's controller raises it
on every leader change. :func:`check_leader_epoch`
is ``Partition.checkCurrentLeaderEpoch``: a client that sends an epoch (anything
but -1) older than the leader's gets FENCED_LEADER_EPOCH (74), a newer one
UNKNOWN_LEADER_EPOCH (75).

**Errors.** Storage raises :class:`~lethe_reference.storage.errors.LogError`
subclasses that carry Kafka's code; :func:`error_code_of` reads it, so this
module holds no table of its own (the one table is
:class:`~lethe_formats.protocol.error_codes.ErrorCode`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode, known_code

from lethe_reference.cluster.membership import leader_error
from lethe_reference.injected_failures import is_offline
from lethe_reference.metadata import INTERNAL_TOPICS
from lethe_reference.storage.errors import LogError

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.storage.log import PartitionLog

__all__ = [
    "LEADER_EPOCH",
    "NO_EPOCH",
    "check_leader_epoch",
    "complete_delayed",
    "complete_delayed_not_leader",
    "error_code_of",
    "is_internal",
    "lookup",
    "partition_exists",
    "watch_key",
]

#: The epoch this single broker leads every partition at.
LEADER_EPOCH = 0
#: ``current_leader_epoch`` / ``last_fetched_epoch`` when the client sends none.
NO_EPOCH = -1


def watch_key(topic: str, partition: int) -> Hashable:
    """The purgatory key of a partition (``TopicPartitionOperationKey``)."""
    return (topic, partition)


def is_internal(topic: str) -> bool:
    """``Topic.isInternal``: ``__consumer_offsets`` and ``__transaction_state``."""
    return topic in INTERNAL_TOPICS


def partition_exists(broker: Broker, topic: str, partition: int) -> bool:
    """``metadataCache.contains(tp)``."""
    info = broker.metadata.get(topic)
    return info is not None and 0 <= partition < info.partitions


def lookup(
    broker: Broker, topic: str, partition: int, *, leader_only: bool = True
) -> PartitionLog | ErrorCode:
    """The partition's log, or UNKNOWN_TOPIC_OR_PARTITION (both steps above); with
    ``leader_only`` False a cluster follower's log too (a consumer's Fetch v11+)."""
    if not partition_exists(broker, topic, partition):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    log = broker.log(topic, partition)
    if log is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if is_offline(broker, topic, partition):
        return ErrorCode.KAFKA_STORAGE_ERROR
    not_leader = leader_error(broker, topic, partition) if leader_only else None
    return log if not_leader is None else not_leader


def check_leader_epoch(current_leader_epoch: int, leader_epoch: int) -> ErrorCode:
    """``Partition.checkCurrentLeaderEpoch`` against the partition's ``leader_epoch``
    (:data:`LEADER_EPOCH` on a single broker; a cluster's from its controller)."""
    if current_leader_epoch == NO_EPOCH:
        return ErrorCode.NONE
    if current_leader_epoch < leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if current_leader_epoch > leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE


def error_code_of(error: LogError) -> ErrorCode:
    """The wire code of a storage error (``Errors.forException``)."""
    code = known_code(error.error_code)
    return ErrorCode.UNKNOWN_SERVER_ERROR if code is None else code


def complete_delayed(broker: Broker, topic: str, partition: int) -> None:
    """Re-check the delayed Fetch, Produce and DeleteRecords requests watching the partition."""
    key = watch_key(topic, partition)
    broker.purgatories.fetch.check(key)
    broker.purgatories.produce.check(key)
    broker.purgatories.delete_records.check(key)


def complete_delayed_not_leader(broker: Broker, topic: str, partition: int) -> None:
    """Re-check the delayed Fetch and Produce requests of a partition this broker no
    longer leads; a waiting DeleteRecords is left to its deadline, as in Kafka 4.0."""
    key = watch_key(topic, partition)
    broker.purgatories.fetch.check(key)
    broker.purgatories.produce.check(key)
