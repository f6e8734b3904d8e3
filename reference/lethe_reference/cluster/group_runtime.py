"""Glue between the broker and the group coordinator: config, ``__consumer_offsets``, time.

Theory of operation
-------------------
:class:`GroupRuntime` is what Kafka's ``GroupCoordinatorService`` plus its
coordinator runtime are to the broker, for the one node this broker is:

* **Config.** :func:`group_config` reads the coordinator's settings from the
  broker config (``group.initial.rebalance.delay.ms``,
  ``group.min.session.timeout.ms``, ``group.max.session.timeout.ms``,
  ``group.max.size``, ``offsets.topic.num.partitions``,
  ``offset.metadata.max.bytes``, ``offsets.retention.minutes``,
  ``offsets.retention.check.interval.ms``); they are read-only in Kafka, so once.
* **The offsets topic.** ``__consumer_offsets`` is created the first time a
  client looks for a group coordinator (FindCoordinator, key type 0), as
  Kafka's ``AutoTopicCreationManager`` does, with Kafka's internal-topic
  settings (``offsets.topic.num.partitions`` partitions, cleanup.policy=compact,
  ``offsets.topic.segment.bytes``). That request is answered
  COORDINATOR_NOT_AVAILABLE (15) and the client asks again. A replication
  factor above 1 (``offsets.topic.replication.factor`` defaults to 3) cannot be
  placed on one broker: the topic is then never created and every lookup keeps
  answering 15, exactly as a one-node Kafka without the shipped
  ``server.properties`` override does.
* **Loading.** Whenever the topic has partitions the coordinator has not
  loaded, :meth:`GroupRuntime.refresh` replays them (``GroupCoordinator.load``)
  from the log start offset to the log end offset, skipping control batches,
  as Kafka's ``CoordinatorLoaderImpl`` reads up to the LEO. Kafka loads
  asynchronously and answers NOT_COORDINATOR (16) meanwhile; the log here is
  local, so loading happens inside the request that noticed the topic and that
  window does not exist. A partition that fails to replay (a corrupt record)
  stays unloaded: its groups get NOT_COORDINATOR, as on a Kafka whose loader
  failed. A partition whose log is gone is unloaded.
* **Writes.** The coordinator's ``append(partition, batch)`` appends to the
  partition log as leader (offsets and leader epoch assigned by the log), moves
  the high watermark to the log end (one replica) and wakes fetchers parked on
  the partition. A storage failure becomes :class:`AppendError` with its Kafka
  code; a missing log is NOT_LEADER_OR_FOLLOWER, which the coordinator turns
  into NOT_COORDINATOR.
* **Time.** One scheduler task, ``group-coordinator``, is due at
  ``GroupCoordinator.next_deadline_ms()``; it runs ``tick()`` and re-arms itself.
  Every handler calls :meth:`GroupRuntime.rearm` after it used the
  coordinator, since a request can add or move a deadline.
* **Waiting replies.** :class:`PendingReply` turns a coordinator
  :class:`~lethe_reference.cluster.group.Pending` into the dispatch layer's
  :class:`~lethe_reference.purgatory.Deferred`: the coordinator completes it
  (from another member's request or a tick) and the response is built then.

Broker hooks (the Broker calls these; until it does, the first group request
builds the runtime lazily through :func:`runtime_of`):

* ``Broker.startup()``, after the topic registry is rebuilt: ``group_runtime.start(self)``
  (Kafka loads the coordinator partitions when the broker becomes their leader,
  so restored members start their session timers at startup);
* ``Broker.shutdown()``, before the scheduler is cleared: ``group_runtime.shutdown(self)``
  (every waiting JoinGroup/SyncGroup is answered NOT_COORDINATOR, as when
  Kafka unloads a partition).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

from lethe_formats.errors import FormatError
from lethe_formats.model import ControlType, Record, RecordBatch
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.find_coordinator import KEY_TYPE_GROUP
from lethe_formats.records.control import decode_control_key
from lethe_formats.records.scan import read_log

from lethe_reference.cluster.group import AppendError, GroupConfig, GroupCoordinator, Pending
from lethe_reference.cluster.group.consumer import ASSIGNORS, ConsumerConfig
from lethe_reference.cluster.group.persistence import replay
from lethe_reference.cluster.membership import leader_epoch
from lethe_reference.config import BrokerConfig
from lethe_reference.handlers.partition_ops.common import complete_delayed
from lethe_reference.handlers.topic_creation import TopicError, internal_topic_plan
from lethe_reference.injected_failures import is_unreadable
from lethe_reference.metadata import CONSUMER_OFFSETS
from lethe_reference.purgatory import Deferred
from lethe_reference.storage.errors import LogError
from lethe_reference.storage.log_reads import FetchIsolation, read

if TYPE_CHECKING:
    from lethe_reference.broker import Broker
    from lethe_reference.handlers.context import RequestContext
    from lethe_reference.storage.log import PartitionLog

__all__ = [
    "TICK_TASK",
    "GroupRuntime",
    "PendingReply",
    "client_host",
    "consumer_config",
    "group_config",
    "runtime_of",
    "shutdown",
    "start",
    "stored_records",
]

_log = logging.getLogger(__name__)
_EXTENSION = "cluster.group_runtime"
#: The scheduler task that drives the coordinator's timers.
TICK_TASK = "group-coordinator"
#: Bytes read per step while replaying a partition (a larger batch is read whole).
_READ_CHUNK = 1 << 20

T = TypeVar("T")
R = TypeVar("R")


def group_config(config: BrokerConfig) -> GroupConfig:
    """The coordinator's settings from the broker config."""
    return GroupConfig(
        offsets_topic_num_partitions=config.get_int("offsets.topic.num.partitions"),
        group_initial_rebalance_delay_ms=config.get_int("group.initial.rebalance.delay.ms"),
        group_min_session_timeout_ms=config.get_int("group.min.session.timeout.ms"),
        group_max_session_timeout_ms=config.get_int("group.max.session.timeout.ms"),
        group_max_size=config.get_int("group.max.size"),
        offset_metadata_max_bytes=config.get_int("offset.metadata.max.bytes"),
        offsets_retention_ms=config.get_int("offsets.retention.minutes") * 60_000,
        offsets_retention_check_interval_ms=config.get_int("offsets.retention.check.interval.ms"),
    )


def consumer_config(config: BrokerConfig) -> ConsumerConfig:
    """Consumer-group settings (``group.consumer.*``); an assignor may be named by
    its short name or its class name, as in Kafka."""
    assignors = tuple(
        name.rsplit(".", 1)[-1].removesuffix("Assignor").lower()
        for name in config.get_list("group.consumer.assignors")
    )
    return ConsumerConfig(
        heartbeat_interval_ms=config.get_int("group.consumer.heartbeat.interval.ms"),
        session_timeout_ms=config.get_int("group.consumer.session.timeout.ms"),
        assignors=tuple(a for a in assignors if a in ASSIGNORS) or ConsumerConfig().assignors,
        max_size=config.get_int("group.consumer.max.size"),
    )


class PendingReply(Deferred[R], Generic[T, R]):
    """A response built from a coordinator result that is not known yet."""

    def __init__(self, pending: Pending[T], build: Callable[[T], R], expired: T) -> None:
        super().__init__()
        self._pending = pending
        self._build = build
        self._expired = expired
        pending.add_done_callback(lambda result: self.complete(build(result)))

    def try_complete(self) -> R | None:
        return self._build(self._pending.result()) if self._pending.done else None

    def on_expire(self) -> R:
        """Only on broker shutdown without the runtime hook: Kafka's unload answer."""
        return self._build(self._expired)


class GroupRuntime:
    """The broker's group coordinator and its plumbing (see the module docstring)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.config = group_config(broker.config)
        self.coordinator = GroupCoordinator(broker.clock, self._append, self.config)
        self.coordinator.consumer_config = consumer_config(broker.config)
        self.coordinator.topic_partitions = self._topic_partitions
        self.coordinator.topic_ids = self._topic_ids
        broker.group_coordinator = self.coordinator

    def _topic_partitions(self) -> dict[str, int]:
        """Every topic and its partition count (what consumer groups subscribe to)."""
        return {info.name: info.partitions for info in self.broker.metadata}

    def _topic_ids(self) -> dict[str, bytes]:
        return {info.name: info.topic_id.raw for info in self.broker.metadata}

    # -- the offsets topic --------------------------------------------------------------

    def offsets_topic_partitions(self) -> int:
        """How many partitions ``__consumer_offsets`` has (0: it does not exist)."""
        info = self.broker.metadata.get(CONSUMER_OFFSETS)
        return 0 if info is None else info.partitions

    def refresh(self) -> None:
        """Load the partitions not loaded yet; unload those whose log is gone."""
        loaded = self.coordinator.loaded
        wanted = self.config.offsets_topic_num_partitions
        for partition in range(min(self.offsets_topic_partitions(), wanted)):
            if partition in loaded:
                continue
            log = self.broker.log(CONSUMER_OFFSETS, partition)
            if log is not None:
                self._load(partition, log)
        for partition in list(loaded):
            if self.broker.log(CONSUMER_OFFSETS, partition) is None:
                self.coordinator.unload(partition)

    def _load(self, partition: int, log: PartitionLog) -> None:
        if is_unreadable(self.broker, CONSUMER_OFFSETS, partition):
            return  # an injected read failure: stays unloaded, as a failed replay
        still_open: dict[int, list[Record]] = {}
        try:
            self.coordinator.load(partition, list(stored_records(log, still_open)))
            for producer_id, records in still_open.items():  # their marker is still to come
                for group_id, offsets in replay(records).offsets.items():
                    kept = {tp: o for tp, o in offsets.items() if o is not None}
                    self.coordinator.pending_txn_offsets[producer_id, group_id] = kept
        except FormatError as error:
            _log.error(
                "loading %s-%d failed, its groups stay unavailable: %s",
                CONSUMER_OFFSETS,
                partition,
                error,
            )

    def find_coordinator(self, key_type: int, key: str) -> ErrorCode:
        """``KafkaApis.getCoordinator`` for one key (see the handler module)."""
        if key_type != KEY_TYPE_GROUP:  # transactions: lethe_reference.cluster.txn_runtime
            return ErrorCode.INVALID_REQUEST
        partitions = self.offsets_topic_partitions()
        if partitions == 0:
            self._create_offsets_topic()
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if self.coordinator.partition_for(key) >= partitions:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return ErrorCode.NONE

    def _create_offsets_topic(self) -> None:
        try:
            plan = internal_topic_plan(self.broker, CONSUMER_OFFSETS)
            self.broker.create_topic(plan.name, plan.partitions, plan.configs)
        except TopicError as error:
            _log.warning(
                "cannot create %s: %s %s", CONSUMER_OFFSETS, error.code.name, error.message
            )
        self.refresh()

    # -- writes -------------------------------------------------------------------------

    def _append(self, partition: int, batch: bytes) -> None:
        log = self.broker.log(CONSUMER_OFFSETS, partition)
        if log is None:
            raise AppendError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        try:
            log.append_as_leader(
                batch,
                leader_epoch(self.broker, CONSUMER_OFFSETS, partition),
                from_coordinator=True,
            )
        except LogError as error:
            raise AppendError(error.error_code, error.message) from None
        except OSError as error:  # an IOException is a KafkaStorageException in Kafka
            raise AppendError(ErrorCode.KAFKA_STORAGE_ERROR, str(error)) from None
        log.maybe_increment_high_watermark(log.log_end_offset)
        complete_delayed(self.broker, CONSUMER_OFFSETS, partition)

    # -- time ---------------------------------------------------------------------------

    def rearm(self) -> None:
        """Put the tick task at the coordinator's next deadline (or remove it)."""
        scheduler = self.broker.scheduler
        scheduler.cancel(TICK_TASK)
        due = self.coordinator.next_deadline_ms()
        if due is not None:
            delay = max(0, due - self.broker.clock.now_ms())
            scheduler.schedule(TICK_TASK, delay, self._tick)

    def _tick(self) -> None:
        self.coordinator.tick()
        self.rearm()

    def reply(self, result: T | Pending[T], build: Callable[[T], R], expired: T) -> R | Deferred[R]:
        """A handler's answer: built now, or when the coordinator completes it."""
        self.rearm()
        if isinstance(result, Pending):
            return PendingReply(result, build, expired)
        return build(result)

    # -- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Unload every partition (waiting replies get NOT_COORDINATOR), stop ticking."""
        for partition in sorted(self.coordinator.loaded):
            self.coordinator.unload(partition)
        self.broker.scheduler.cancel(TICK_TASK)


def stored_records(
    log: PartitionLog, still_open: dict[int, list[Record]] | None = None
) -> Iterator[Record]:
    """Records from the log start offset to the log end, as a coordinator replays
    them: control batches skipped; a transaction's records (TxnOffsetCommit) held
    until its marker and yielded there on COMMIT, dropped on ABORT; those of a
    transaction still open at the end are left in ``still_open`` (producer id ->
    records) instead."""
    pending: dict[int, list[Record]] = {} if still_open is None else still_open
    for entry, records in _stored_batches(log):
        header = entry.header
        if header.is_control:
            held = pending.pop(header.producer_id, [])
            if records and _is_commit(records[0]):
                yield from held
        elif header.is_transactional:
            pending.setdefault(header.producer_id, []).extend(records)
        else:
            yield from records


def _is_commit(record: Record) -> bool:
    try:
        return decode_control_key(record.key)[1] is ControlType.COMMIT
    except FormatError:
        return False


def _stored_batches(log: PartitionLog) -> Iterator[tuple[RecordBatch, list[Record]]]:
    """Each v2 batch from the log start to the log end, with its records at or
    above the offset the read started at."""
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = bytes(read(log, offset, _READ_CHUNK, isolation=FetchIsolation.LOG_END).records)
        next_offset = offset
        try:
            for entry in read_log(data):
                if not isinstance(entry, RecordBatch):
                    next_offset = max(next_offset, entry.offset + 1)
                    continue
                next_offset = max(next_offset, entry.header.next_offset)
                yield entry, [r for r in entry.records if entry.offset_of(r) >= offset]
        except FormatError:
            if next_offset == offset:  # not a batch cut by the chunk size: broken data
                raise
        if next_offset == offset:
            return
        offset = next_offset


def client_host(ctx: RequestContext) -> str:
    """``RequestContext.clientAddress.toString()``: "/<ip>" (loopback until the
    connection layer tells the client's address as ``client_address``)."""
    address = getattr(ctx, "client_address", None)
    return f"/{address}" if isinstance(address, str) and address else "/127.0.0.1"


def runtime_of(broker: Broker) -> GroupRuntime:
    """The broker's runtime, built (and its partitions loaded) on first use."""
    runtime = broker.extensions.get(_EXTENSION)
    if not isinstance(runtime, GroupRuntime):
        runtime = broker.extensions[_EXTENSION] = GroupRuntime(broker)
    runtime.refresh()
    return runtime


def start(broker: Broker) -> GroupRuntime:
    """Broker startup hook: load the existing ``__consumer_offsets`` partitions."""
    runtime = runtime_of(broker)
    runtime.rearm()
    return runtime


def shutdown(broker: Broker) -> None:
    """Broker shutdown hook (see the module docstring)."""
    runtime = broker.extensions.pop(_EXTENSION, None)
    if isinstance(runtime, GroupRuntime):
        runtime.close()
        broker.group_coordinator = None
