"""Glue between the broker and the transaction coordinator: ``__transaction_state``,
markers, producer ids, the timeout task.

Theory of operation
-------------------
:class:`TxnRuntime` is the broker side (:class:`~.txn.coordinator.TxnIO`) of the
sans-IO :class:`~.txn.coordinator.TransactionCoordinator`, as
:mod:`.group_runtime` is for groups:

* **The topic.** ``__transaction_state`` is created the first time a client
  looks for a transaction coordinator (FindCoordinator key type 1), with
  Kafka's internal-topic settings (``transaction.state.log.num.partitions``,
  50 by default; compacted); that lookup answers COORDINATOR_NOT_AVAILABLE and
  the client asks again, as on Kafka where the topic is created asynchronously.
* **Loading.** Every partition of the topic this broker leads is replayed from
  the log start to the log end (:meth:`refresh`, at startup and whenever a
  request finds a partition not loaded); prepared transactions are completed
  then (markers written), ongoing ones wait for their timeout. The coordinator
  epoch of a partition is its leader epoch.
* **Writes.** A state record is appended as leader; the high watermark follows
  as after any leader append.
* **Markers.** For each partition of a transaction, the broker that leads it
  appends the marker (:func:`~lethe_reference.handlers.txn_markers.write_marker`):
  this broker, or another broker of the same in-process cluster (Kafka's
  WriteTxnMarkers, without a socket). A partition without a leader or a topic
  deleted meanwhile is skipped, as Kafka drops markers for deleted topics.
* **Time.** The ``transaction-abort`` task (Kafka's name) runs every
  ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` (10 s) and
  aborts the transactions past their ``transaction.timeout.ms``, as Kafka's
  periodic ``abortTimedOutTransactions``. The ``transactionalId-expiration``
  task runs every ``transaction.remove.expired.transaction.cleanup.interval.ms``
  (1 h) and tombstones the ids idle for ``transactional.id.expiration.ms``
  (7 days), as Kafka's ``enableTransactionalIdExpiration``.

Broker hooks: ``start(broker)`` after the group runtime, ``shutdown(broker)``
before the scheduler is cleared.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lethe_formats.errors import FormatError
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.group_runtime import stored_records
from lethe_reference.cluster.membership import (
    high_watermark_after_append,
    leader_epoch,
    leader_error,
    member_of,
)
from lethe_reference.cluster.txn.coordinator import (
    TransactionCoordinator,
    TxnAppendError,
    TxnConfig,
)
from lethe_reference.cluster.txn.metadata import TopicPartition
from lethe_reference.handlers.partition_ops.common import complete_delayed
from lethe_reference.handlers.producer_ids import ProducerIdError, producer_ids
from lethe_reference.handlers.topic_creation import TopicError, internal_topic_plan
from lethe_reference.handlers.txn_markers import write_marker
from lethe_reference.metadata import TRANSACTION_STATE
from lethe_reference.storage.errors import LogError

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "EXPIRY_TASK",
    "TIMEOUT_TASK",
    "TxnRuntime",
    "coordinator_of",
    "shutdown",
    "start",
    "txn_runtime_of",
]

_log = logging.getLogger(__name__)
_EXTENSION = "cluster.txn_runtime"
TIMEOUT_TASK = "transaction-abort"
_CLEANUP_INTERVAL = "transaction.abort.timed.out.transaction.cleanup.interval.ms"
EXPIRY_TASK = "transactionalId-expiration"
_EXPIRY_INTERVAL = "transaction.remove.expired.transaction.cleanup.interval.ms"


def txn_config(broker: Broker) -> TxnConfig:
    config = broker.config
    return TxnConfig(
        num_partitions=config.get_int("transaction.state.log.num.partitions"),
        max_timeout_ms=config.get_int("transaction.max.timeout.ms"),
        id_expiration_ms=config.get_int("transactional.id.expiration.ms"),
    )


class TxnRuntime:
    """The broker's transaction coordinator and its plumbing (module docstring)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.coordinator = TransactionCoordinator(self, txn_config(broker))

    # -- TxnIO ------------------------------------------------------------------------

    def now_ms(self) -> int:
        return self.broker.clock.now_ms()

    def append(self, partition: int, batch: bytes) -> None:
        broker = self.broker
        log = broker.log(TRANSACTION_STATE, partition)
        if log is None or leader_error(broker, TRANSACTION_STATE, partition) is not None:
            raise TxnAppendError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        try:
            log.append_as_leader(batch, leader_epoch(broker, TRANSACTION_STATE, partition))
        except LogError as error:
            raise TxnAppendError(error.error_code, error.message) from None
        except OSError as error:
            raise TxnAppendError(ErrorCode.KAFKA_STORAGE_ERROR, str(error)) from None
        high_watermark_after_append(broker, log, TRANSACTION_STATE, partition)
        complete_delayed(broker, TRANSACTION_STATE, partition)

    def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: frozenset[TopicPartition],
    ) -> None:
        for topic, partition in sorted(partitions):
            target = self._leader_of(topic, partition)
            if target is None:
                _log.warning("no leader for %s-%d: its marker is dropped", topic, partition)
                continue
            code = write_marker(
                target,
                topic,
                partition,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                commit=commit,
                coordinator_epoch=coordinator_epoch,
            )
            if code is not ErrorCode.NONE:
                _log.warning("marker for %s-%d refused: %s", topic, partition, code.name)

    def _leader_of(self, topic: str, partition: int) -> Broker | None:
        member = member_of(self.broker)
        if member is None:
            return self.broker
        state = member.state((topic, partition))
        if state is None or state.leader < 0:
            return None
        if state.leader == self.broker.node_id:
            return self.broker
        return member.peer(state.leader)

    def new_producer_id(self) -> int:
        try:
            return producer_ids(self.broker).next_id()
        except ProducerIdError as error:
            raise TxnAppendError(ErrorCode.KAFKA_STORAGE_ERROR, str(error)) from None

    def coordinator_epoch(self, partition: int) -> int:
        return leader_epoch(self.broker, TRANSACTION_STATE, partition)

    # -- the topic --------------------------------------------------------------------

    def topic_partitions(self) -> int:
        info = self.broker.metadata.get(TRANSACTION_STATE)
        return 0 if info is None else info.partitions

    def refresh(self) -> None:
        """Load the led partitions not loaded yet; unload those gone or led elsewhere."""
        coordinator, broker = self.coordinator, self.broker
        for partition in range(min(self.topic_partitions(), coordinator.config.num_partitions)):
            led = leader_error(broker, TRANSACTION_STATE, partition) is None
            log = broker.log(TRANSACTION_STATE, partition)
            if partition in coordinator.loaded:
                if log is None or not led:
                    coordinator.unload(partition)
                continue
            if log is None or not led:
                continue
            try:
                coordinator.load(partition, [(r.key, r.value) for r in stored_records(log)])
            except (FormatError, TxnAppendError) as error:
                _log.error("loading %s-%d failed: %s", TRANSACTION_STATE, partition, error)

    def find_coordinator(self, transactional_id: str) -> ErrorCode:
        """NONE when this broker coordinates ``transactional_id`` (the caller names
        the leader of its partition in a cluster); COORDINATOR_NOT_AVAILABLE while
        the topic is being created."""
        if self.topic_partitions() == 0:
            try:
                plan = internal_topic_plan(self.broker, TRANSACTION_STATE)
                self.broker.create_topic(plan.name, plan.partitions, plan.configs)
            except TopicError as error:
                _log.warning("cannot create %s: %s", TRANSACTION_STATE, error.code.name)
            self.refresh()
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        self.refresh()
        return ErrorCode.NONE

    # -- time -------------------------------------------------------------------------

    def arm(self) -> None:
        scheduler, config = self.broker.scheduler, self.broker.config
        period = config.get_int(_CLEANUP_INTERVAL)
        scheduler.schedule(TIMEOUT_TASK, period, self._abort_timed_out, period_ms=period)
        period = config.get_int(_EXPIRY_INTERVAL)
        scheduler.schedule(EXPIRY_TASK, period, self._expire_ids, period_ms=period)

    def _expire_ids(self) -> None:
        self.refresh()
        for transactional_id in self.coordinator.expire_transactional_ids():
            _log.info("removed the expired transactional id %s", transactional_id)

    def _abort_timed_out(self) -> None:
        self.refresh()
        for transactional_id in self.coordinator.abort_timed_out():
            _log.info("aborted the timed-out transaction of %s", transactional_id)

    def close(self) -> None:
        for partition in list(self.coordinator.loaded):
            self.coordinator.unload(partition)
        self.broker.scheduler.cancel(TIMEOUT_TASK)
        self.broker.scheduler.cancel(EXPIRY_TASK)


def coordinator_of(broker: Broker, transactional_id: str) -> TransactionCoordinator | None:
    """The coordinator of ``transactional_id`` in this process: this broker's, or that
    of the broker of the same in-process cluster leading the id's partition (None:
    no leader, or the topic does not exist yet)."""
    runtime = txn_runtime_of(broker)
    partition = runtime.coordinator.partition_for(transactional_id)
    if runtime.topic_partitions() == 0:
        return None
    member = member_of(broker)
    if member is None:
        return runtime.coordinator
    state = member.state((TRANSACTION_STATE, partition))
    if state is None or state.leader < 0:
        return None
    target = broker if state.leader == broker.node_id else member.peer(state.leader)
    return None if target is None else txn_runtime_of(target).coordinator


def txn_runtime_of(broker: Broker) -> TxnRuntime:
    """The broker's runtime, built on first use; its partitions refreshed."""
    runtime = broker.extensions.get(_EXTENSION)
    if not isinstance(runtime, TxnRuntime):
        runtime = broker.extensions[_EXTENSION] = TxnRuntime(broker)
        runtime.arm()
    runtime.refresh()
    return runtime


def start(broker: Broker) -> TxnRuntime:
    """Broker startup hook: load ``__transaction_state``, complete prepared transactions."""
    return txn_runtime_of(broker)


def shutdown(broker: Broker) -> None:
    runtime = broker.extensions.pop(_EXTENSION, None)
    if isinstance(runtime, TxnRuntime):
        runtime.close()
