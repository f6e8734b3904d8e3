"""Broker configs the reference broker reads, with Kafka 4.0.0's types and defaults.

Theory of operation
-------------------
Kafka's ``KafkaConfig`` knows several hundred names; the reference broker defines
the ones it acts on, plus every broker synonym of a topic config (so that
``log.retention.hours=1`` in ``server.properties`` changes ``retention.ms`` of
every topic without an override, exactly as in Kafka). Names it does not define
are kept as given and ignored, as Kafka ignores names it does not know.

Sources: ``ServerLogConfigs`` and ``LogConfig.SERVER_CONFIG_DEF``,
``CleanerConfig``, ``ServerConfigs``, ``KRaftConfigs``, ``SocketServerConfigs``,
``ReplicationConfigs``, ``GroupCoordinatorConfig``, ``TransactionLogConfig``,
``TransactionStateManagerConfig``, ``BrokerSecurityConfigs`` and
``RemoteLogManagerConfig``. Kafka 4.0.0 values where 4.0 changed them
(KIP-1030): ``log.segment.bytes`` at least 1 MiB, ``num.recovery.threads.per.
data.dir`` 2, ``log.message.timestamp.after.max.ms`` 3600000.

:data:`DYNAMIC_BROKER_CONFIGS` are the names IncrementalAlterConfigs/AlterConfigs
may change on a BROKER resource (``DynamicBrokerConfig.AllDynamicConfigs``, the
part the reference broker implements): the first broker synonym of every topic
config, the reconfigurable cleaner settings, thread pools, the connection
quotas (``max.connections``, ``max.connections.per.ip[.overrides]``) and
``producer.id.expiration.ms``.
"""

from __future__ import annotations

from lethe_reference.config.definition import ConfigDef, ConfigKey
from lethe_reference.config.topic import (
    CLEANUP_POLICIES,
    COMPRESSION_TYPES,
    LONG_MAX,
    TIMESTAMP_TYPES,
    TOPIC_SYNONYMS,
)
from lethe_reference.config.validators import GzipLevel, Range, ValidList, ValidString
from lethe_reference.config.values import ConfigType
from lethe_reference.faults import CONFIG_NAME as FAULTS_CONFIG
from lethe_reference.faults import FAULTS

__all__ = ["BROKER_CONFIG_DEF", "DYNAMIC_BROKER_CONFIGS", "INTERNAL_BROKER_CONFIGS"]

_B, _S, _I, _SH, _L, _D, _LIST = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.SHORT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
)
_at_least = Range.at_least
_DOUBLE_MAX = 1.7976931348623157e308
_INT_MAX = 2**31 - 1
_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

_SERVER = [
    ConfigKey("process.roles", _LIST, (), ValidList(("broker", "controller"))),
    ConfigKey("node.id", _I, -1),
    ConfigKey("broker.id", _I, -1),
    ConfigKey("controller.listener.names", _S, None),
    ConfigKey("listeners", _S, "PLAINTEXT://:9092"),
    ConfigKey("advertised.listeners", _S, None),
    ConfigKey("listener.security.protocol.map", _S, _PROTOCOL_MAP),
    ConfigKey("inter.broker.listener.name", _S, None),
    ConfigKey("security.inter.broker.protocol", _S, "PLAINTEXT", ValidString(_SECURITY_PROTOCOLS)),
    ConfigKey("num.network.threads", _I, 3, _at_least(1)),
    ConfigKey("num.io.threads", _I, 8, _at_least(1)),
    ConfigKey("background.threads", _I, 10, _at_least(1)),
    ConfigKey("socket.send.buffer.bytes", _I, 100 * 1024),
    ConfigKey("socket.receive.buffer.bytes", _I, 100 * 1024),
    ConfigKey("socket.request.max.bytes", _I, 100 * 1024 * 1024, _at_least(1)),
    ConfigKey("socket.listen.backlog.size", _I, 50, _at_least(1)),
    ConfigKey("max.connections.per.ip", _I, _INT_MAX, _at_least(0)),
    ConfigKey("max.connections.per.ip.overrides", _S, ""),
    ConfigKey("max.connections", _I, _INT_MAX, _at_least(0)),
    ConfigKey("queued.max.requests", _I, 500, _at_least(1)),
    ConfigKey("queued.max.request.bytes", _L, -1),
    ConfigKey("connections.max.idle.ms", _L, 10 * 60 * 1000),
    ConfigKey("request.timeout.ms", _I, 30000),
    ConfigKey("message.max.bytes", _I, 1024 * 1024 + 12, _at_least(0)),
    ConfigKey("fetch.max.bytes", _I, 55 * 1024 * 1024, _at_least(1024)),
    ConfigKey("delete.topic.enable", _B, True),
    # KIP-694 extension (lethe_reference.partitions): off by default, read-only.
    ConfigKey("delete.topic.partition.enable", _B, False),
    ConfigKey("delete.topic.partition.interval.delay.ms", _L, 300000, _at_least(1)),
    ConfigKey("compression.type", _S, "producer", ValidString(COMPRESSION_TYPES)),
    ConfigKey("compression.gzip.level", _I, -1, GzipLevel()),
    ConfigKey("compression.lz4.level", _I, 9, Range.between(1, 17)),
    ConfigKey("compression.zstd.level", _I, 3, Range.between(-131072, 22)),
    ConfigKey("sasl.enabled.mechanisms", _LIST, ("GSSAPI",)),
    ConfigKey("sasl.mechanism.inter.broker.protocol", _S, "GSSAPI"),
]

_LOG = [
    ConfigKey("num.partitions", _I, 1, _at_least(1)),
    ConfigKey("log.dir", _S, "/tmp/kafka-logs"),
    ConfigKey("log.dirs", _S, None),
    ConfigKey("log.segment.bytes", _I, 1024 * 1024 * 1024, _at_least(1024 * 1024)),
    ConfigKey("log.roll.ms", _L, None),
    ConfigKey("log.roll.hours", _I, 168, _at_least(1)),
    ConfigKey("log.roll.jitter.ms", _L, None),
    ConfigKey("log.roll.jitter.hours", _I, 0, _at_least(0)),
    ConfigKey("log.retention.ms", _L, None),
    ConfigKey("log.retention.minutes", _I, None),
    ConfigKey("log.retention.hours", _I, 168),
    ConfigKey("log.retention.bytes", _L, -1),
    ConfigKey("log.retention.check.interval.ms", _L, 300000, _at_least(1)),
    ConfigKey("log.cleanup.policy", _LIST, ("delete",), ValidList(CLEANUP_POLICIES)),
    ConfigKey("log.index.size.max.bytes", _I, 10 * 1024 * 1024, _at_least(4)),
    ConfigKey("log.index.interval.bytes", _I, 4096, _at_least(0)),
    ConfigKey("log.flush.interval.messages", _L, LONG_MAX, _at_least(1)),
    ConfigKey("log.segment.delete.delay.ms", _L, 60000, _at_least(0)),
    ConfigKey("log.flush.scheduler.interval.ms", _L, LONG_MAX),
    ConfigKey("log.flush.interval.ms", _L, None),
    ConfigKey("log.flush.offset.checkpoint.interval.ms", _I, 60000, _at_least(0)),
    ConfigKey("log.flush.start.offset.checkpoint.interval.ms", _I, 60000, _at_least(0)),
    ConfigKey("log.preallocate", _B, False),
    ConfigKey("num.recovery.threads.per.data.dir", _I, 2, _at_least(1)),
    ConfigKey("auto.create.topics.enable", _B, True),
    ConfigKey("min.insync.replicas", _I, 1, _at_least(1)),
    ConfigKey("log.message.timestamp.type", _S, "CreateTime", ValidString(TIMESTAMP_TYPES)),
    ConfigKey("log.message.timestamp.before.max.ms", _L, LONG_MAX, _at_least(0)),
    ConfigKey("log.message.timestamp.after.max.ms", _L, 60 * 60 * 1000, _at_least(0)),
    ConfigKey("log.dir.failure.timeout.ms", _L, 30000, _at_least(1)),
    ConfigKey("log.local.retention.ms", _L, -2, _at_least(-2)),
    ConfigKey("log.local.retention.bytes", _L, -2, _at_least(-2)),
    ConfigKey("remote.log.storage.system.enable", _B, False),
    # lethe's extension switches (config/extensions.py): static, off by default
    ConfigKey("lethe.kip68.enable", _B, False),
    ConfigKey("lethe.kip87.enable", _B, False),
    ConfigKey("log.tombstone.flag.enable", _B, False),  # KIP-87 extension
    # KIP-68 extension (catalog KIP68-CFG-1/4/5): resolved as log.retention.* are
    ConfigKey("log.retention.commitoffset.enable", _B, False),
    ConfigKey("log.retention.commitoffset.ms", _L, None),
    ConfigKey("log.retention.commitoffset.minutes", _I, None),
    ConfigKey("log.retention.commitoffset.hours", _I, None),
]

_CLEANER = [
    ConfigKey("log.cleaner.threads", _I, 1, _at_least(0)),
    ConfigKey("log.cleaner.io.max.bytes.per.second", _D, _DOUBLE_MAX),
    ConfigKey("log.cleaner.dedupe.buffer.size", _L, 128 * 1024 * 1024),
    ConfigKey("log.cleaner.io.buffer.size", _I, 512 * 1024, _at_least(0)),
    ConfigKey("log.cleaner.io.buffer.load.factor", _D, 0.9),
    ConfigKey("log.cleaner.backoff.ms", _L, 15000, _at_least(0)),
    ConfigKey("log.cleaner.min.cleanable.ratio", _D, 0.5, Range.between(0, 1)),
    ConfigKey("log.cleaner.enable", _B, True),
    ConfigKey("log.cleaner.delete.retention.ms", _L, 24 * 60 * 60 * 1000, _at_least(0)),
    ConfigKey("log.cleaner.min.compaction.lag.ms", _L, 0, _at_least(0)),
    ConfigKey("log.cleaner.max.compaction.lag.ms", _L, LONG_MAX, _at_least(1)),
]

_REPLICATION_AND_COORDINATORS = [
    ConfigKey("default.replication.factor", _I, 1),
    ConfigKey("unclean.leader.election.enable", _B, False),
    ConfigKey("replica.lag.time.max.ms", _L, 30000),
    ConfigKey("replica.fetch.wait.max.ms", _I, 500),
    ConfigKey("replica.high.watermark.checkpoint.interval.ms", _L, 5000),
    ConfigKey("delete.records.purgatory.purge.interval.requests", _I, 1),
    ConfigKey("group.initial.rebalance.delay.ms", _I, 3000),
    ConfigKey("group.min.session.timeout.ms", _I, 6000),
    ConfigKey("group.max.session.timeout.ms", _I, 1800000),
    ConfigKey("group.max.size", _I, 2**31 - 1, _at_least(1)),
    ConfigKey("group.consumer.heartbeat.interval.ms", _I, 5000, _at_least(1)),
    ConfigKey("group.consumer.min.heartbeat.interval.ms", _I, 5000, _at_least(1)),
    ConfigKey("group.consumer.max.heartbeat.interval.ms", _I, 15000, _at_least(1)),
    ConfigKey("group.consumer.session.timeout.ms", _I, 45000, _at_least(1)),
    ConfigKey("group.consumer.min.session.timeout.ms", _I, 45000, _at_least(1)),
    ConfigKey("group.consumer.max.session.timeout.ms", _I, 60000, _at_least(1)),
    ConfigKey("group.consumer.assignors", _LIST, ("uniform", "range")),
    ConfigKey("group.consumer.max.size", _I, 2**31 - 1, _at_least(1)),
    ConfigKey("offsets.topic.num.partitions", _I, 50, _at_least(1)),
    ConfigKey("offsets.topic.replication.factor", _SH, 3, _at_least(1)),
    ConfigKey("offsets.topic.segment.bytes", _I, 100 * 1024 * 1024, _at_least(1)),
    ConfigKey("offsets.retention.minutes", _I, 7 * 24 * 60, _at_least(1)),
    ConfigKey("offsets.retention.check.interval.ms", _L, 600000, _at_least(1)),
    ConfigKey("offsets.commit.timeout.ms", _I, 5000, _at_least(1)),
    ConfigKey("offset.metadata.max.bytes", _I, 4096),
    ConfigKey("transaction.state.log.num.partitions", _I, 50, _at_least(1)),
    ConfigKey("transaction.state.log.replication.factor", _SH, 3, _at_least(1)),
    ConfigKey("transaction.state.log.min.isr", _I, 2, _at_least(1)),
    ConfigKey("transaction.state.log.segment.bytes", _I, 100 * 1024 * 1024, _at_least(1)),
    ConfigKey("transaction.max.timeout.ms", _I, 15 * 60 * 1000, _at_least(1)),
    ConfigKey(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms", _I, 10000, _at_least(1)
    ),
    ConfigKey(
        "transaction.remove.expired.transaction.cleanup.interval.ms", _I, 3600000, _at_least(1)
    ),
    ConfigKey("transaction.partition.verification.enable", _B, True),
    ConfigKey("transactional.id.expiration.ms", _I, 7 * 24 * 60 * 60 * 1000, _at_least(1)),
    ConfigKey("producer.id.expiration.ms", _I, 24 * 60 * 60 * 1000, _at_least(1)),
]

# lethe's own: deliberate faults for the conformance kit (lethe_reference/faults.py).
# Kafka's own internal configs (``defineInternal``) sit here too.
_INTERNAL = [
    ConfigKey(FAULTS_CONFIG, _LIST, (), ValidList(tuple(FAULTS))),
    ConfigKey("log.initial.task.delay.ms", _L, 30000, _at_least(0)),
    ConfigKey("producer.id.expiration.check.interval.ms", _I, 600000, _at_least(1)),
]
#: Like Kafka's ``defineInternal`` configs: DescribeConfigs lists them only when set.
INTERNAL_BROKER_CONFIGS: frozenset[str] = frozenset(key.name for key in _INTERNAL)

BROKER_CONFIG_DEF = ConfigDef(_SERVER + _LOG + _CLEANER + _REPLICATION_AND_COORDINATORS + _INTERNAL)

_CLEANER_RECONFIGURABLE = {
    "log.cleaner.threads",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.backoff.ms",
}
_THREAD_POOLS = {"num.io.threads", "num.network.threads", "background.threads"}
#: ``DynamicConnectionQuota.ReconfigurableConfigs`` (the rate limit is not modelled)
_CONNECTION_QUOTAS = {
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
}

DYNAMIC_BROKER_CONFIGS: frozenset[str] = frozenset(
    {synonyms[0].name for synonyms in TOPIC_SYNONYMS.values()}
    | _CLEANER_RECONFIGURABLE
    | _THREAD_POOLS
    | _CONNECTION_QUOTAS
    | {"num.recovery.threads.per.data.dir", "producer.id.expiration.ms"}
)

assert all(synonym.name in BROKER_CONFIG_DEF for s in TOPIC_SYNONYMS.values() for synonym in s)
assert DYNAMIC_BROKER_CONFIGS.issubset(BROKER_CONFIG_DEF.names())
