"""Environmental failures a test injects into a running broker (not faults of the broker).

Theory of operation
-------------------
Some of Kafka's error paths only run when the *environment* fails: a disk
throws ``IOException``, or something unexpected goes wrong deep inside the
broker. A test that owns the broker process (the embedded broker, capability
``inject-failure`` of the conformance kit) arms such a failure here; the broker
code then takes exactly the path Kafka takes. Unlike :mod:`lethe_reference.faults`
(deliberate *wrong* behaviour, for proving the suite detects it), nothing here
makes the broker wrong: it answers as Kafka answers when its world breaks.

State lives in ``broker.extensions`` (so it is sans-IO and dies with the broker:
a restart starts with no injected failure, as a replaced disk would). Kinds::

    log-dir-offline   the partitions named sit in a log directory that failed:
                      Kafka's LogDirFailureChannel marked it offline after an
                      IOException, and ReplicaManager made those partitions
                      HostedPartition.Offline. Every lookup of them
                      (getPartitionOrException: Produce, Fetch, ListOffsets,
                      DeleteRecords) answers KAFKA_STORAGE_ERROR (56) from then on.
                      The broker keeps serving: Kafka halts only once *every*
                      log dir failed, and the model is a broker whose other
                      partitions live in a dir that is still healthy.
    delete-error      the next log start offset move of that partition by a
                      DeleteRecords raises an unexpected error (one shot);
                      Kafka's deleteRecordsOnLocalLog catches any Throwable per
                      partition and answers it through Errors.forException:
                      UNKNOWN_SERVER_ERROR (-1) for that partition only.
    offsets-unreadable  the ``__consumer_offsets`` partitions named cannot be read:
                      the group coordinator gives them up (their groups become
                      unavailable) and cannot load them again while the failure
                      lasts, as when replaying their records fails. Consumed
                      retention (KIP-68) then sees incomplete committed offsets
                      and skips every partition in each pass (catalog KIP68-MCO-3).
    replica-deletion-error  the next deletion of the partitions' replica logs
                      by a KIP-694 reduction fails once, as an IOException
                      renaming the directory would (an ``OSError``, raised before
                      anything is touched). The reduction stays pending with the
                      partitions in None and the next check retries (catalog
                      KIP694-DEL-7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lethe_reference.metadata import CONSUMER_OFFSETS

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "DELETE_ERROR",
    "KINDS",
    "LOG_DIR_OFFLINE",
    "OFFSETS_UNREADABLE",
    "REPLICA_DELETION_ERROR",
    "InjectedError",
    "InjectedFailures",
    "inject",
    "injected",
    "is_offline",
    "is_unreadable",
    "raise_if_delete_error",
    "raise_if_replica_deletion_error",
]

LOG_DIR_OFFLINE = "log-dir-offline"
DELETE_ERROR = "delete-error"
OFFSETS_UNREADABLE = "offsets-unreadable"
REPLICA_DELETION_ERROR = "replica-deletion-error"
KINDS = frozenset({LOG_DIR_OFFLINE, DELETE_ERROR, OFFSETS_UNREADABLE, REPLICA_DELETION_ERROR})
_EXTENSION = "lethe.injected-failures"

TopicPartition = tuple[str, int]


class InjectedError(RuntimeError):
    """The unexpected failure a ``delete-error`` injection raises (not a LogError)."""


@dataclass(slots=True)
class InjectedFailures:
    """The failures armed on one broker."""

    offline: set[TopicPartition] = field(default_factory=set)
    delete_errors: set[TopicPartition] = field(default_factory=set)
    unreadable: set[TopicPartition] = field(default_factory=set)
    replica_deletion_errors: set[TopicPartition] = field(default_factory=set)


def injected(broker: Broker) -> InjectedFailures:
    """The broker's armed failures (created empty on first use)."""
    failures = broker.extensions.get(_EXTENSION)
    if not isinstance(failures, InjectedFailures):
        failures = broker.extensions[_EXTENSION] = InjectedFailures()
    return failures


def inject(broker: Broker, kind: str, topic: str, partitions: list[int]) -> None:
    """Arm ``kind`` on ``topic``'s ``partitions``; an unknown kind is a ValueError."""
    failures = injected(broker)
    targets = {(topic, p) for p in partitions}
    if kind == LOG_DIR_OFFLINE:
        failures.offline |= targets
    elif kind == DELETE_ERROR:
        failures.delete_errors |= targets
    elif kind == OFFSETS_UNREADABLE:
        failures.unreadable |= targets
        coordinator = broker.group_coordinator
        if coordinator is not None and topic == CONSUMER_OFFSETS:
            for partition in partitions:
                coordinator.unload(partition)
    elif kind == REPLICA_DELETION_ERROR:
        failures.replica_deletion_errors |= targets
    else:
        raise ValueError(f"unknown injected failure kind {kind!r} (known: {sorted(KINDS)})")


def is_offline(broker: Broker, topic: str, partition: int) -> bool:
    """Whether the partition sits in a log dir that was taken offline."""
    failures = broker.extensions.get(_EXTENSION)
    return isinstance(failures, InjectedFailures) and (topic, partition) in failures.offline


def is_unreadable(broker: Broker, topic: str, partition: int) -> bool:
    """Whether the partition's records cannot be read (``offsets-unreadable``)."""
    failures = broker.extensions.get(_EXTENSION)
    return isinstance(failures, InjectedFailures) and (topic, partition) in failures.unreadable


def raise_if_delete_error(broker: Broker, topic: str, partition: int) -> None:
    """Raise :class:`InjectedError` once if a ``delete-error`` is armed on the partition."""
    failures = broker.extensions.get(_EXTENSION)
    if isinstance(failures, InjectedFailures) and (topic, partition) in failures.delete_errors:
        failures.delete_errors.discard((topic, partition))
        raise InjectedError(f"injected failure while deleting records of {topic}-{partition}")


def raise_if_replica_deletion_error(broker: Broker, topic: str, partition: int) -> None:
    """Raise an ``OSError`` once if a ``replica-deletion-error`` is armed on the partition
    (an I/O failure, which the KIP-694 check logs and retries)."""
    failures = broker.extensions.get(_EXTENSION)
    if (
        isinstance(failures, InjectedFailures)
        and (topic, partition) in failures.replica_deletion_errors
    ):
        failures.replica_deletion_errors.discard((topic, partition))
        raise OSError(f"injected I/O failure deleting the replica log of {topic}-{partition}")
