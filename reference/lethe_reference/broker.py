"""The broker's state: config, clock, scheduler, logs, topics, purgatories.

Theory of operation
-------------------
:class:`Broker` is the one object every handler receives. It owns no socket and
no event loop; the asyncio server (:mod:`lethe_reference.server`) or a test
drives it:

* ``startup()`` formats or reads ``meta.properties`` (cluster id, node id),
  loads the log directory through the :class:`~lethe_reference.storage.log_manager.LogManager`,
  rebuilds the topic registry from it and queues the periodic tasks; every
  partition then becomes leader with this broker its only in-sync replica, so
  its HW (read from ``replication-offset-checkpoint``) rises to its LEO
  (``Partition.makeLeader`` -> ``maybeIncrementLeaderHW``); a node that is its
  own controller (:attr:`Broker.own_controller`) first raises every partition's
  leader epoch as Kafka's controller does on a restart and writes
  ``(epoch, LEO)`` into ``leader-epoch-checkpoint`` (:mod:`lethe_reference.leadership`);
* handlers read and change state through it (``create_topic``, ``delete_topic``,
  ``create_partitions``, ``set_topic_configs``, ``set_config``, ``log``);
* the driver calls :meth:`Broker.run_due` whenever :meth:`Broker.next_due_ms`
  has passed on :attr:`Broker.clock` (and after each request, since a request
  can make work due earlier);
* ``shutdown()`` completes parked responses, cancels the tasks, leaves every
  partition leaderless at the next epoch (controlled shutdown) and shuts the log
  manager down (flush, producer snapshots, checkpoints, ``.kafka_cleanshutdown``
  with the broker epoch of this startup: :meth:`TopicRegistry.register_broker`).

Periodic tasks, named and timed as Kafka's (``ReplicaManager``/``LogManager``)::

    highwatermark-checkpoint         replica.high.watermark.checkpoint.interval.ms   5000
    kafka-recovery-point-checkpoint  log.flush.offset.checkpoint.interval.ms        60000
    kafka-log-start-offset-checkpoint log.flush.start.offset.checkpoint.interval.ms 60000
    kafka-log-retention              log.retention.check.interval.ms               300000
    kafka-log-flusher                log.flush.scheduler.interval.ms            Long.MAX (off)
    PeriodicProducerExpirationCheck  producer.id.expiration.check.interval.ms      600000
    kafka-log-cleaner-thread-0       log.cleaner.backoff.ms                        15000

The cleaner task (:attr:`Broker.cleaner`, :mod:`lethe_reference.cleaner`) runs
every backoff from startup when ``log.cleaner.enable``; it compacts the
filthiest logs and runs segment deletion on compacted logs, which the retention
task leaves to it, as Kafka's cleaner thread does.
    delete-topic-partitions          delete.topic.partition.interval.delay.ms     300000
                                     (KIP-694, only with delete.topic.partition.enable)

Kafka starts the retention task after ``log.initial.task.delay.ms`` (30000, settable);
the others start one period after startup. Deleting ``.deleted`` segment files
and ``-delete`` directories is due ``file.delete.delay.ms`` after each
deletion; :meth:`next_due_ms` includes those times and :meth:`run_due` performs
them, which stands for Kafka's one-shot ``delete-file`` tasks.

Long operations (the logs of thousands of new partitions) are jobs on
:attr:`Broker.background` (:mod:`lethe_reference.background`): the registry is
committed at once, :meth:`run_due` advances the jobs a small slice per call and
:meth:`next_due_ms` is "now" while any is pending, so the driver interleaves
them with other requests. ``create_topic``/``create_partitions`` still finish
their logs before returning; the handlers use the ``begin_*`` variants.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_formats.storage.meta_properties import MetaProperties

from lethe_reference import faults
from lethe_reference.background import BackgroundWork
from lethe_reference.cleaner import LogCleaner
from lethe_reference.clock import Clock, SystemClock
from lethe_reference.cluster import group_runtime, txn_runtime
from lethe_reference.cluster.membership import cluster_event
from lethe_reference.config import BrokerConfig, LogConfig, effective_log_config
from lethe_reference.injected_failures import raise_if_replica_deletion_error
from lethe_reference.leadership import Leadership
from lethe_reference.log_creation import LogCreation
from lethe_reference.metadata import METADATA_FILE, TopicInfo, TopicRegistry, new_topic_id
from lethe_reference.partitions import deletion as partition_deletion
from lethe_reference.purgatory import Purgatory
from lethe_reference.retention.committed import committed_offsets_of
from lethe_reference.scheduler import Scheduler
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.log_manager import LogManager

if TYPE_CHECKING:
    from lethe_reference.cluster.group import GroupCoordinator

__all__ = ["DEFAULT_NODE_ID", "Broker", "Purgatories"]

_log = logging.getLogger(__name__)
DEFAULT_NODE_ID = 1
LONG_MAX = 2**63 - 1


@dataclass
class Purgatories:
    """Kafka's purgatories by name (``DelayedFetch`` etc.)."""

    fetch: Purgatory
    produce: Purgatory
    delete_records: Purgatory

    def all(self) -> tuple[Purgatory, ...]:
        return (self.fetch, self.produce, self.delete_records)


@dataclass
class _Endpoint:
    host: str
    port: int


@dataclass
class Broker:
    """One single-node KRaft broker's state; see the module docstring."""

    log_dir: Path
    config: BrokerConfig = field(default_factory=BrokerConfig)
    clock: Clock = field(default_factory=SystemClock)
    host: str = "127.0.0.1"
    port: int = 9092
    node_id: int = -1
    cluster_id: str = ""
    group_coordinator: GroupCoordinator | None = None
    #: fsync on flush; an embedded broker for tests may turn it off.
    durable: bool = True
    #: A single node that is its own controller keeps its partitions' leadership in
    #: its registry; a broker of an in-process cluster follows the cluster's controller.
    own_controller: bool = True
    scheduler: Scheduler = field(init=False)
    log_manager: LogManager = field(init=False)
    cleaner: LogCleaner = field(init=False)
    metadata: TopicRegistry = field(init=False)
    purgatories: Purgatories = field(init=False)
    #: long operations run a slice at a time by :meth:`run_due` (:mod:`.background`)
    background: BackgroundWork = field(init=False)
    started: bool = field(default=False, init=False)
    extensions: dict[str, Any] = field(default_factory=dict, init=False)
    _dir_deletions: list[int] = field(default_factory=list, init=False, repr=False)
    #: topic -> (broker config, topic overrides, their LogConfig): see :meth:`log_config`
    _log_configs: dict[str, tuple[BrokerConfig, Mapping[str, str], LogConfig]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.log_dir = Path(self.log_dir)
        if self.node_id < 0:
            self.node_id = self.config.node_id if self.config.node_id >= 0 else DEFAULT_NODE_ID
        faults.bind(self.log_dir, self.config)  # deliberate faults, off unless lethe.faults
        self.scheduler = Scheduler(self.clock)
        self.background = BackgroundWork()
        self.metadata = TopicRegistry(self.log_dir / METADATA_FILE)
        self.log_manager = LogManager(
            self.log_dir,
            clock=self.clock,
            settings_for=self.log_config,
            file_delete_delay_ms=self.config.get_int("log.segment.delete.delay.ms"),
            durable=self.durable,
            producer_id_expiration_ms=self.config.get_int("producer.id.expiration.ms"),
            shutdown_threads=self.config.get_int("num.recovery.threads.per.data.dir"),
        )
        self.log_manager.min_committed_offsets = lambda: committed_offsets_of(self)  # KIP-68
        self.cleaner = LogCleaner(self.log_manager, self.config)
        self.purgatories = Purgatories(
            fetch=Purgatory("Fetch", self.scheduler),
            produce=Purgatory("Produce", self.scheduler),
            delete_records=Purgatory("DeleteRecords", self.scheduler),
        )

    # --- lifecycle ----------------------------------------------------------------------

    def startup(self) -> None:
        """Read or write ``meta.properties``, load the logs, queue periodic tasks."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._load_meta_properties()
        self.metadata.load()
        self.metadata.register_broker()
        self.log_manager.startup()
        self._adopt_meta_properties()
        counts: dict[str, int] = {}
        for topic, partition in self.log_manager.logs:
            counts[topic] = max(counts.get(topic, 0), partition + 1)
        self.metadata.rebuild(counts, self.log_manager.topic_ids)
        for info in self.metadata:
            self.log_manager.update_settings(info.name)  # in case rebuild dropped overrides
            for partition in range(info.partitions):
                self.log_manager.create_log(info.name, partition, topic_id=info.topic_id)
        if self.own_controller:
            self._elect_after_restart()
        for log in self.log_manager.logs.values():  # makeLeader: the ISR is this broker
            log.maybe_increment_high_watermark(log.log_end_offset)
        self._schedule_periodic_tasks()
        partition_deletion.start(self)  # KIP-694 check, when delete.topic.partition.enable
        group_runtime.start(self)  # load __consumer_offsets, restart session timers
        txn_runtime.start(self)  # load __transaction_state, complete prepared transactions
        self.started = True
        _log.info(
            "broker %d started: cluster %s, %d topics, log dir %s",
            self.node_id,
            self.cluster_id,
            len(self.metadata),
            self.log_dir,
        )

    def shutdown(self) -> None:
        """Answer parked requests, stop the tasks, flush and checkpoint the logs."""
        if not self.started:
            return
        self.background.abandon()  # the metadata is committed: startup finishes the logs
        for purgatory in self.purgatories.all():
            purgatory.expire_all()
        txn_runtime.shutdown(self)
        group_runtime.shutdown(self)  # parked joins/syncs get NOT_COORDINATOR, as on unload
        self.scheduler.clear()
        if self.own_controller:
            self._controlled_shutdown()
        self.log_manager.shutdown(broker_epoch=self.metadata.broker_epoch)
        self.started = False
        _log.info("broker %d shut down cleanly", self.node_id)

    def _elect_after_restart(self) -> None:
        """Registration (a leader left by kill -9 is removed), unfencing (this node is
        elected) and ``makeLeader``: each an epoch bump, as in Kafka; the new epoch
        starts at the log end offset, written to ``leader-epoch-checkpoint`` at once."""
        for info in self.metadata:
            states: dict[int, Leadership] = {}
            for partition in range(info.partitions):
                log = self.log(info.name, partition)
                previous = info.leadership.get(partition, Leadership(self.node_id))
                floor = None if log is None else log.epoch_cache.latest_epoch
                states[partition] = previous.restarted(self.node_id, floor)
                if log is not None:
                    log.epoch_cache.assign(states[partition].leader_epoch, log.log_end_offset)
            self.metadata.set_leadership(info.name, states)

    def _controlled_shutdown(self) -> None:
        """The controller moves every partition this node led to no leader (epoch + 1)."""
        for info in self.metadata:
            states = {
                partition: info.leadership.get(partition, Leadership(self.node_id))
                for partition in range(info.partitions)
            }
            self.metadata.set_leadership(
                info.name, {p: s.controlled_shutdown() for p, s in states.items()}
            )

    def _load_meta_properties(self) -> None:
        """What ``kafka-storage.sh format`` would have written, for a fresh directory;
        an existing ``meta.properties`` wins (the log manager reads it)."""
        if self.log_manager.meta_properties is None:
            cluster_id = self.cluster_id or str(new_topic_id())
            self.log_manager.meta_properties = MetaProperties(
                1, cluster_id, self.node_id, new_topic_id()
            )

    def _adopt_meta_properties(self) -> None:
        meta = self.log_manager.meta_properties
        if meta is not None and meta.cluster_id:
            self.cluster_id = meta.cluster_id

    def _schedule_periodic_tasks(self) -> None:
        config = self.config
        # Kafka's LogManager reads log.initial.task.delay.ms (30000 unless set); a
        # wall-clock conformance run sets it low so the first retention pass comes soon
        initial_delay = config.get_int("log.initial.task.delay.ms")
        tasks = [
            ("highwatermark-checkpoint", "replica.high.watermark.checkpoint.interval.ms", None),
            ("kafka-recovery-point-checkpoint", "log.flush.offset.checkpoint.interval.ms", None),
            (
                "kafka-log-start-offset-checkpoint",
                "log.flush.start.offset.checkpoint.interval.ms",
                None,
            ),
            ("kafka-log-retention", "log.retention.check.interval.ms", initial_delay),
            ("kafka-log-flusher", "log.flush.scheduler.interval.ms", initial_delay),
            (
                "PeriodicProducerExpirationCheck",
                "producer.id.expiration.check.interval.ms",
                None,
            ),
        ]
        actions = {
            "highwatermark-checkpoint": self.log_manager.checkpoint_high_watermarks,
            "kafka-recovery-point-checkpoint": self.log_manager.checkpoint_recovery_points,
            "kafka-log-start-offset-checkpoint": self.log_manager.checkpoint_log_start_offsets,
            "kafka-log-retention": self.log_manager.cleanup_logs,
            "kafka-log-flusher": self.log_manager.flush,
            "PeriodicProducerExpirationCheck": self._expire_producers,
        }
        for name, key, initial in tasks:
            period = config.get_int(key)
            if period <= 0 or period >= LONG_MAX:
                continue
            delay = period if initial is None else initial
            self.scheduler.schedule(name, delay, actions[name], period_ms=period)
        self.cleaner.start(self.scheduler)

    def _expire_producers(self) -> None:
        """Kafka reads ``producer.id.expiration.ms`` dynamically; so does this task."""
        self.log_manager.producer_id_expiration_ms = self.config.get_int(
            "producer.id.expiration.ms"
        )
        self.log_manager.remove_expired_producers()

    # --- time ---------------------------------------------------------------------------

    def next_due_ms(self) -> int | None:
        """When :meth:`run_due` next has work (absolute, on :attr:`clock`)."""
        candidates = [
            self.scheduler.next_due_ms(),
            self.log_manager.pending.next_due_ms(),
            min(self._dir_deletions, default=None),
            self.clock.now_ms() if self.background.pending else None,
        ]
        due = [c for c in candidates if c is not None]
        return min(due) if due else None

    def run_due(self) -> list[str]:
        """Run every task due now; returns their names (file deletion included)."""
        ran = self.scheduler.run_due()
        if self.background.run():
            ran.append("background")
        if self.log_manager.delete_due_files():
            ran.append("delete-file")
        now = self.clock.now_ms()
        self._dir_deletions = [due for due in self._dir_deletions if due > now]
        return ran

    # --- topics -------------------------------------------------------------------------

    def log_config(self, topic: str) -> LogConfig:
        """The effective :class:`LogConfig` of ``topic`` on this broker.

        Kept per topic while the same broker config and override mapping (both
        replaced, never changed in place, when configs change) are in force:
        building it costs about 90 us, and every Fetch and Produce asks."""
        info = self.metadata.get(topic)
        configs: Mapping[str, str] = info.configs if info else {}
        cached = self._log_configs.get(topic)
        if cached is not None and cached[0] is self.config and cached[1] is configs:
            return cached[2]
        overrides = self.config.visible_topic_configs(configs)
        built = effective_log_config(overrides, self.config)
        if info is not None:
            self._log_configs[topic] = (self.config, configs, built)
        return built

    def log(self, topic: str, partition: int) -> PartitionLog | None:
        return self.log_manager.get_log(topic, partition)

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: dict[str, str] | None = None,
        *,
        topic_id: KafkaUuid | None = None,
        replication_factor: int = 1,
    ) -> TopicInfo:
        """Register ``name`` and create its partition logs now (validation is the caller's);
        in an in-process cluster the other brokers learn it and the controller places
        ``replication_factor`` replicas of each partition."""
        wanted = TopicInfo(name, topic_id or new_topic_id(), partitions, dict(configs or {}))
        info, job = self.begin_create_topic(wanted, replication_factor)
        self.background.finish(job)
        return info

    def begin_create_topic(
        self, wanted: TopicInfo, replication_factor: int = 1
    ) -> tuple[TopicInfo, LogCreation]:
        """Register ``wanted`` at once; its logs are created by the returned job, queued
        on :attr:`background` (:mod:`.log_creation`)."""
        info = self.metadata.add(wanted)
        name, partitions = info.name, info.partitions

        def finish() -> None:
            _log.info("created topic %s (%s) with %d partitions", name, info.topic_id, partitions)
            cluster_event(self, "topic_created", info, replication_factor)

        job = LogCreation(self, name, info.topic_id, range(partitions), on_finish=finish)
        self.background.submit(job)
        return info, job

    def delete_topic(self, name: str) -> TopicInfo | None:
        """Unregister ``name``; its partition directories are renamed ``-delete``."""
        info = self.metadata.remove(name)
        if info is None:
            return None
        self.log_manager.delete_logs(name, range(info.partitions))
        self._dir_deletions.append(self.clock.now_ms() + self.log_manager.file_delete_delay_ms)
        _log.info("deleted topic %s (%s)", name, info.topic_id)
        cluster_event(self, "topic_deleted", info)
        return info

    def delete_partition_logs(self, name: str, partitions: list[int]) -> None:
        """KIP-694: delete these partitions' logs as a deleted topic's (renamed
        ``-delete``, removed after the file delete delay); the registry is the caller's."""
        failed: OSError | None = None
        for partition in partitions:  # each replica on its own: one failure stops no other
            try:
                raise_if_replica_deletion_error(self, name, partition)
                self.log_manager.delete_log(name, partition)
            except OSError as error:
                failed = failed or error
        if partitions:
            self._dir_deletions.append(self.clock.now_ms() + self.log_manager.file_delete_delay_ms)
        if failed is not None:
            raise failed  # the reduction stays pending; the next check retries (KIP694-DEL-7)

    def create_partitions(self, name: str, count: int) -> TopicInfo:
        """Grow ``name`` to ``count`` partitions now (the caller checked it is an increase)."""
        info, job = self.begin_create_partitions(name, count)
        self.background.finish(job)
        return info

    def begin_create_partitions(self, name: str, count: int) -> tuple[TopicInfo, LogCreation]:
        """Register the new count at once; the new logs are created by the returned job."""
        current = self.metadata.get(name)
        before = 0 if current is None else current.partitions
        info = self.metadata.set_partitions(name, count)
        job = LogCreation(
            self,
            name,
            info.topic_id,
            range(min(before, count), count),
            on_finish=lambda: cluster_event(self, "partitions_created", info),
        )
        self.background.submit(job)
        return info, job

    def lead_new_partitions(self, info: TopicInfo, partitions: range) -> None:
        """``makeLeader`` of a new partition at epoch 0: ``0 0`` is in its
        ``leader-epoch-checkpoint`` before anything is appended (as in Kafka)."""
        if not self.own_controller:
            return  # the cluster's members do it when the controller announces the leader
        for partition in partitions:
            log = self.log(info.name, partition)
            if log is not None:
                log.epoch_cache.assign(info.leader_epoch(partition), log.log_end_offset)

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> TopicInfo:
        """Replace the overrides of ``name``; its logs see the new LogConfig at once."""
        info = self.metadata.set_configs(name, configs)
        self.log_manager.update_settings(name)
        cluster_event(self, "configs_changed", info)
        return info

    def set_config(self, config: BrokerConfig) -> None:
        """Swap in a new broker config (dynamic change); topic defaults follow."""
        self.config = config
        self.cleaner.reconfigure(config)
        for info in self.metadata:
            self.log_manager.update_settings(info.name)

    @property
    def endpoint(self) -> _Endpoint:
        return _Endpoint(self.host, self.port)
