"""Topic-level configs of Kafka 4.0.0: names, types, defaults, validators, synonyms.

Theory of operation
-------------------
:data:`TOPIC_CONFIG_DEF` mirrors ``LogConfig``'s topic ConfigDef in Kafka 4.0.0,
in its definition order (which decides the error reported first). Differences
from the pre-4.0 source (kafka-facts.md §0 "HEAD") that 4.0.0 made:

* ``message.format.version``, ``message.timestamp.difference.max.ms`` and
  ``message.downconversion.enable`` are gone (not in 4.0's DescribeConfigs);
* ``message.timestamp.after.max.ms`` defaults to 3600000 (KIP-1030);
* ``segment.bytes`` keeps its old minimum of 14 bytes (``LegacyRecord.
  RECORD_OVERHEAD_V0``). KAFKA-16368 (in 4.0) raised only the *broker*
  ``log.segment.bytes`` minimum to 1 MiB; the topic-level minimum followed in
  KAFKA-19080 (4.1), after 4.0.0 was released.

:data:`TOPIC_SYNONYMS` is ``ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS``:
for each topic config, the broker configs that supply its value when the topic
has no override, highest priority first, with the factor turning the broker
unit into the topic unit (``log.retention.hours`` x 3600000 = ``retention.ms``).
Topic configs with no broker synonym fall back to their own default.

Extension configs (:data:`EXTENSION_TOPIC_CONFIGS`, lethe's opt-in profiles, all
off by default) are defined after Kafka's 33 and listed after them.

:data:`DESCRIBE_ORDER` is the order Kafka 4.0 lists a topic's configs in
DescribeConfigs (the iteration order of a Scala hash map over these 33 names,
fixed for a fixed set of names), taken from the golden wire frames.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_reference.config.definition import ConfigDef, ConfigKey
from lethe_reference.config.validators import (
    GzipLevel,
    Range,
    ThrottledReplicas,
    ValidList,
    ValidString,
)
from lethe_reference.config.values import ConfigType

__all__ = [
    "CLEANUP_POLICIES",
    "COMPRESSION_TYPES",
    "DESCRIBE_ORDER",
    "EXTENSION_TOPIC_CONFIGS",
    "LONG_MAX",
    "TIMESTAMP_TYPES",
    "TOPIC_CONFIG_DEF",
    "TOPIC_SYNONYMS",
    "BrokerSynonym",
]

LONG_MAX = 2**63 - 1
_HOUR_MS = 60 * 60 * 1000
_MINUTE_MS = 60 * 1000

COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
CLEANUP_POLICIES = ("compact", "delete")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")

_B, _S, _I, _L, _D, _LIST = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
)
_at_least = Range.at_least

TOPIC_CONFIG_DEF = ConfigDef(
    [
        ConfigKey("segment.bytes", _I, 1024 * 1024 * 1024, _at_least(14)),
        ConfigKey("segment.ms", _L, 7 * 24 * _HOUR_MS, _at_least(1)),
        ConfigKey("segment.jitter.ms", _L, 0, _at_least(0)),
        ConfigKey("segment.index.bytes", _I, 10 * 1024 * 1024, _at_least(4)),
        ConfigKey("flush.messages", _L, LONG_MAX, _at_least(1)),
        ConfigKey("flush.ms", _L, LONG_MAX, _at_least(0)),
        ConfigKey("retention.bytes", _L, -1),
        ConfigKey("retention.ms", _L, 7 * 24 * _HOUR_MS, _at_least(-1)),
        ConfigKey("max.message.bytes", _I, 1024 * 1024 + 12, _at_least(0)),
        ConfigKey("index.interval.bytes", _I, 4096, _at_least(0)),
        ConfigKey("delete.retention.ms", _L, 24 * _HOUR_MS, _at_least(0)),
        ConfigKey("min.compaction.lag.ms", _L, 0, _at_least(0)),
        ConfigKey("max.compaction.lag.ms", _L, LONG_MAX, _at_least(1)),
        ConfigKey("file.delete.delay.ms", _L, 60000, _at_least(0)),
        ConfigKey("min.cleanable.dirty.ratio", _D, 0.5, Range.between(0, 1)),
        ConfigKey("cleanup.policy", _LIST, ("delete",), ValidList(CLEANUP_POLICIES)),
        ConfigKey("unclean.leader.election.enable", _B, False),
        ConfigKey("min.insync.replicas", _I, 1, _at_least(1)),
        ConfigKey("compression.type", _S, "producer", ValidString(COMPRESSION_TYPES)),
        ConfigKey("compression.gzip.level", _I, -1, GzipLevel()),
        ConfigKey("compression.lz4.level", _I, 9, Range.between(1, 17)),
        ConfigKey("compression.zstd.level", _I, 3, Range.between(-131072, 22)),
        ConfigKey("preallocate", _B, False),
        ConfigKey("message.timestamp.type", _S, "CreateTime", ValidString(TIMESTAMP_TYPES)),
        ConfigKey("message.timestamp.before.max.ms", _L, LONG_MAX, _at_least(0)),
        ConfigKey("message.timestamp.after.max.ms", _L, _HOUR_MS, _at_least(0)),
        ConfigKey("leader.replication.throttled.replicas", _LIST, (), ThrottledReplicas()),
        ConfigKey("follower.replication.throttled.replicas", _LIST, (), ThrottledReplicas()),
        ConfigKey("remote.storage.enable", _B, False),
        ConfigKey("local.retention.ms", _L, -2, _at_least(-2)),
        ConfigKey("local.retention.bytes", _L, -2, _at_least(-2)),
        ConfigKey("remote.log.copy.disable", _B, False),
        ConfigKey("remote.log.delete.on.disable", _B, False),
        # lethe extensions (EXTENSION_TOPIC_CONFIGS), after Kafka's own names
        ConfigKey("tombstone.flag.enable", _B, False),  # KIP-87, catalog KIP87-CFG-1
        # KIP-68, catalog KIP68-CFG-1/4/5; cross-checked with retention.ms (KIP68-CFG-3);
        # .minutes and .hours (no default) stand in for .ms as in Kafka's log.retention.*
        ConfigKey("retention.commitoffset.enable", _B, False),
        ConfigKey("retention.commitoffset.ms", _L, -2, _at_least(-2)),
        ConfigKey("retention.commitoffset.minutes", _I, None),
        ConfigKey("retention.commitoffset.hours", _I, None),
    ]
)


@dataclass(frozen=True, slots=True)
class BrokerSynonym:
    """A broker config standing in for a topic config, and its unit factor."""

    name: str
    factor: int = 1


def _same(name: str) -> tuple[BrokerSynonym, ...]:
    return (BrokerSynonym(name),)


TOPIC_SYNONYMS: dict[str, tuple[BrokerSynonym, ...]] = {
    "segment.bytes": _same("log.segment.bytes"),
    "segment.ms": (BrokerSynonym("log.roll.ms"), BrokerSynonym("log.roll.hours", _HOUR_MS)),
    "segment.jitter.ms": (
        BrokerSynonym("log.roll.jitter.ms"),
        BrokerSynonym("log.roll.jitter.hours", _HOUR_MS),
    ),
    "segment.index.bytes": _same("log.index.size.max.bytes"),
    "flush.messages": _same("log.flush.interval.messages"),
    "flush.ms": (
        BrokerSynonym("log.flush.interval.ms"),
        BrokerSynonym("log.flush.scheduler.interval.ms"),
    ),
    "retention.bytes": _same("log.retention.bytes"),
    "retention.ms": (
        BrokerSynonym("log.retention.ms"),
        BrokerSynonym("log.retention.minutes", _MINUTE_MS),
        BrokerSynonym("log.retention.hours", _HOUR_MS),
    ),
    "max.message.bytes": _same("message.max.bytes"),
    "index.interval.bytes": _same("log.index.interval.bytes"),
    "delete.retention.ms": _same("log.cleaner.delete.retention.ms"),
    "min.compaction.lag.ms": _same("log.cleaner.min.compaction.lag.ms"),
    "max.compaction.lag.ms": _same("log.cleaner.max.compaction.lag.ms"),
    "file.delete.delay.ms": _same("log.segment.delete.delay.ms"),
    "min.cleanable.dirty.ratio": _same("log.cleaner.min.cleanable.ratio"),
    "cleanup.policy": _same("log.cleanup.policy"),
    "unclean.leader.election.enable": _same("unclean.leader.election.enable"),
    "min.insync.replicas": _same("min.insync.replicas"),
    "compression.type": _same("compression.type"),
    "compression.gzip.level": _same("compression.gzip.level"),
    "compression.lz4.level": _same("compression.lz4.level"),
    "compression.zstd.level": _same("compression.zstd.level"),
    "preallocate": _same("log.preallocate"),
    "message.timestamp.type": _same("log.message.timestamp.type"),
    "message.timestamp.before.max.ms": _same("log.message.timestamp.before.max.ms"),
    "message.timestamp.after.max.ms": _same("log.message.timestamp.after.max.ms"),
    "local.retention.ms": _same("log.local.retention.ms"),
    "local.retention.bytes": _same("log.local.retention.bytes"),
    "tombstone.flag.enable": _same("log.tombstone.flag.enable"),
    "retention.commitoffset.enable": _same("log.retention.commitoffset.enable"),
    "retention.commitoffset.ms": (
        BrokerSynonym("log.retention.commitoffset.ms"),
        BrokerSynonym("log.retention.commitoffset.minutes", _MINUTE_MS),
        BrokerSynonym("log.retention.commitoffset.hours", _HOUR_MS),
    ),
}

DESCRIBE_ORDER: tuple[str, ...] = (
    "compression.type",
    "remote.log.delete.on.disable",
    "leader.replication.throttled.replicas",
    "remote.storage.enable",
    "min.insync.replicas",
    "segment.jitter.ms",
    "remote.log.copy.disable",
    "local.retention.ms",
    "cleanup.policy",
    "flush.ms",
    "follower.replication.throttled.replicas",
    "compression.lz4.level",
    "segment.bytes",
    "retention.ms",
    "compression.gzip.level",
    "flush.messages",
    "compression.zstd.level",
    "max.compaction.lag.ms",
    "file.delete.delay.ms",
    "max.message.bytes",
    "min.compaction.lag.ms",
    "message.timestamp.type",
    "local.retention.bytes",
    "preallocate",
    "min.cleanable.dirty.ratio",
    "index.interval.bytes",
    "unclean.leader.election.enable",
    "retention.bytes",
    "delete.retention.ms",
    "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms",
    "segment.ms",
    "segment.index.bytes",
)

#: Topic configs of lethe's extension profiles (not in Kafka 4.0), in the order
#: DescribeConfigs lists them, after :data:`DESCRIBE_ORDER`. A target offers an
#: extension profile when DescribeConfigs lists its config (catalog *-DISC-1).
EXTENSION_TOPIC_CONFIGS: tuple[str, ...] = (
    "tombstone.flag.enable",
    "retention.commitoffset.enable",
    "retention.commitoffset.ms",
    "retention.commitoffset.minutes",
    "retention.commitoffset.hours",
)

assert sorted(DESCRIBE_ORDER + EXTENSION_TOPIC_CONFIGS) == sorted(TOPIC_CONFIG_DEF.names())
assert set(TOPIC_SYNONYMS) <= set(TOPIC_CONFIG_DEF.names())
