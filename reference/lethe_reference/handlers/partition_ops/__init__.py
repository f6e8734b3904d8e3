"""The broker's data plane: what Kafka's ``ReplicaManager`` does for one partition.

Theory of operation
-------------------
The Produce, Fetch, ListOffsets and DeleteRecords handlers
(:mod:`lethe_reference.handlers.produce` and siblings) deal with requests:
versions, topics, ordering, whole-request errors. Everything they do to a
partition's log lives here, as plain functions over the
:class:`~lethe_reference.broker.Broker` and its
:class:`~lethe_reference.storage.log.PartitionLog` objects:

* :mod:`.common` - partition lookup (metadata, then hosted log), the leader
  epoch of a single broker, purgatory watch keys, storage error codes;
* :mod:`.append` - produce validation, the append (idempotent producers:
  :mod:`lethe_reference.storage.producer_state`) and the HW move;
* :mod:`.read` + :mod:`.fetch_session` - fetch reads with byte budgets, the
  delayed-fetch condition, KIP-227 fetch sessions;
* :mod:`.offsets` - ListOffsets lookups and their version rules;
* :mod:`.delete` - KIP-107 DeleteRecords, the low watermark and the delayed
  DeleteRecords operation.

State that Kafka keeps next to the log but storage does not (fetch sessions)
hangs off ``Broker.extensions`` under names starting with
``partition_ops.``. Every change to a partition's HW or log start offset is
followed by :func:`.common.complete_delayed`, so parked Fetch and DeleteRecords
requests watching ``(topic, partition)`` are re-checked.
"""

from lethe_reference.handlers.partition_ops.append import (
    PartitionAppend,
    append_to_partition,
    valid_acks,
    validate_produce_records,
)
from lethe_reference.handlers.partition_ops.common import (
    LEADER_EPOCH,
    complete_delayed,
    lookup,
    watch_key,
)
from lethe_reference.handlers.partition_ops.delete import (
    DelayedDeleteRecords,
    PartitionDelete,
    delete_records_on_partition,
    low_watermark,
)
from lethe_reference.handlers.partition_ops.offsets import list_offset
from lethe_reference.handlers.partition_ops.read import (
    PartitionRead,
    fetch_satisfied,
    read_partitions,
)

__all__ = [
    "LEADER_EPOCH",
    "DelayedDeleteRecords",
    "PartitionAppend",
    "PartitionDelete",
    "PartitionRead",
    "append_to_partition",
    "complete_delayed",
    "delete_records_on_partition",
    "fetch_satisfied",
    "list_offset",
    "lookup",
    "low_watermark",
    "read_partitions",
    "valid_acks",
    "validate_produce_records",
    "watch_key",
]
