"""ListOffsets for one partition (``ReplicaManager.fetchOffset``, ``fetchOffsetForTimestamp``).

Theory of operation
-------------------
Per partition, in Kafka's order (kafka-facts 2.1):

1. a partition named twice in the request: INVALID_REQUEST (42) (the handler
   finds duplicates, :func:`duplicate_partitions`);
2. a negative timestamp that is not special, or a special one the request
   version is too old for (:data:`TIMESTAMP_MIN_VERSION`): UNSUPPORTED_VERSION (35);
3. the partition must exist here (UNKNOWN_TOPIC_OR_PARTITION, 3) and the
   client's ``current_leader_epoch`` match (74/75);
4. the lookup itself is storage's :func:`~lethe_reference.storage.log_reads.offset_for_timestamp`:
   -1 gives the HW (read_committed: the last stable offset; replicas: the LEO),
   -2/-4 the log start offset, -3 the first record with the largest timestamp
   (not clamped to the log start offset: golden p2 answers 26 with log start 30),
   -5 offset -1, a timestamp >= 0 the first record at or after it.

Errors and "nothing found" answer timestamp -1, offset -1 and leader epoch -1;
a found offset carries the batch's leader epoch from v4 on. The ``replica_id``
decides the isolation: a consumer (-1) uses the request's isolation level;
anyone else (a follower, or -2 "debugging") reads up to the LEO.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.list_offsets import ListOffsetsPartitionResponse

from lethe_reference.cluster.membership import leader_epoch
from lethe_reference.handlers.partition_ops.common import (
    check_leader_epoch,
    error_code_of,
    lookup,
)
from lethe_reference.storage.errors import LogError
from lethe_reference.storage.log_reads import IsolationLevel, offset_for_timestamp

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "CONSUMER_REPLICA_ID",
    "TIMESTAMP_MIN_VERSION",
    "duplicate_partitions",
    "list_offset",
    "timestamp_unsupported",
]

CONSUMER_REPLICA_ID = -1
#: ``ReplicaManager.timestampMinSupportedVersion``.
TIMESTAMP_MIN_VERSION = {-1: 1, -2: 1, -3: 7, -4: 8, -5: 9}


def timestamp_unsupported(timestamp: int, version: int) -> bool:
    """``isListOffsetsTimestampUnsupported``."""
    if timestamp >= 0:
        return False
    minimum = TIMESTAMP_MIN_VERSION.get(timestamp)
    return minimum is None or version < minimum


def duplicate_partitions(keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
    """Partitions named more than once (``ListOffsetsRequest.duplicatePartitions``)."""
    seen: set[tuple[str, int]] = set()
    duplicates: set[tuple[str, int]] = set()
    for key in keys:
        (duplicates if key in seen else seen).add(key)
    return duplicates


def _error(partition: int, code: ErrorCode) -> ListOffsetsPartitionResponse:
    return ListOffsetsPartitionResponse(partition_index=partition, error_code=code)


def list_offset(
    broker: Broker,
    topic: str,
    partition: int,
    *,
    timestamp: int,
    current_leader_epoch: int,
    replica_id: int,
    isolation_level: int,
    version: int,
) -> ListOffsetsPartitionResponse:
    """Steps 2-4 of the module docstring for one partition."""
    if timestamp_unsupported(timestamp, version):
        return _error(partition, ErrorCode.UNSUPPORTED_VERSION)
    found = lookup(broker, topic, partition)
    if isinstance(found, ErrorCode):
        return _error(partition, found)
    epoch = leader_epoch(broker, topic, partition)
    epoch_error = check_leader_epoch(current_leader_epoch, epoch)
    if epoch_error is not ErrorCode.NONE:
        return _error(partition, epoch_error)
    isolation = None
    if replica_id == CONSUMER_REPLICA_ID:
        isolation = (
            IsolationLevel.READ_COMMITTED
            if isolation_level == 1
            else IsolationLevel.READ_UNCOMMITTED
        )
    try:
        result = offset_for_timestamp(found, timestamp, isolation=isolation, leader_epoch=epoch)
    except LogError as error:
        return _error(partition, error_code_of(error))
    except OSError:
        return _error(partition, ErrorCode.KAFKA_STORAGE_ERROR)
    if result is None:
        return _error(partition, ErrorCode.NONE)
    epoch = result.leader_epoch if result.leader_epoch is not None and version >= 4 else -1
    return ListOffsetsPartitionResponse(
        partition_index=partition,
        error_code=ErrorCode.NONE,
        timestamp=result.timestamp,
        offset=result.offset,
        leader_epoch=epoch,
    )
