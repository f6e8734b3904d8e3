"""A topic's effective log configuration as one typed, frozen value.

Theory of operation
-------------------
The storage engine, retention and the cleaner read topic configs through
:class:`LogConfig`, Kafka's ``LogConfig`` as a frozen dataclass. Every attribute
is the topic config of the same name with ``.`` replaced by ``_``, holding the
*effective* value (topic override > broker synonym > default, see
:func:`effective_log_config`):

=====================================  =============================  =====================
attribute                              Python type                    Kafka 4.0 default
=====================================  =============================  =====================
segment_bytes                          int                            1073741824
segment_ms                             int                            604800000
segment_jitter_ms                      int                            0
segment_index_bytes                    int                            10485760
flush_messages                         int                            2**63-1
flush_ms                               int                            2**63-1
retention_bytes                        int (-1 = no limit)            -1
retention_ms                           int (-1 = no limit)            604800000
max_message_bytes                      int                            1048588
index_interval_bytes                   int                            4096
delete_retention_ms                    int                            86400000
min_compaction_lag_ms                  int                            0
max_compaction_lag_ms                  int                            2**63-1
file_delete_delay_ms                   int                            60000
min_cleanable_dirty_ratio              float                          0.5
cleanup_policy                         frozenset[str]                 {"delete"}
unclean_leader_election_enable         bool                           False
min_insync_replicas                    int                            1
compression_type                       str                            "producer"
compression_gzip_level                 int                            -1
compression_lz4_level                  int                            9
compression_zstd_level                 int                            3
preallocate                            bool                           False
message_timestamp_type                 TimestampType (lethe_formats)  CREATE_TIME
message_timestamp_before_max_ms        int                            2**63-1
message_timestamp_after_max_ms         int                            3600000
leader_replication_throttled_replicas  tuple[str, ...]                ()
follower_replication_throttled_...     tuple[str, ...]                ()
remote_storage_enable                  bool                           False
local_retention_ms                     int (-2 = use retention_ms)    -2
local_retention_bytes                  int (-2 = use retention_bytes) -2
remote_log_copy_disable                bool                           False
remote_log_delete_on_disable           bool                           False
tombstone_flag_enable (KIP-87)         bool                           False
retention_commitoffset_enable (KIP-68) bool                           False
retention_commitoffset_ms (KIP-68)     int (-2 = use retention_ms)    -2
retention_commitoffset_minutes (KIP-68) int | None                    None
retention_commitoffset_hours (KIP-68)  int | None                     None
overridden                             frozenset[str] (topic names)   frozenset()
=====================================  =============================  =====================

KIP-68's topic-level units (catalog KIP68-CFG-5) combine as Kafka's broker
``log.retention.ms/minutes/hours`` do (``KafkaConfig.logRetentionTimeMillis``):
the topic's own ``retention.commitoffset.ms`` wins, else its ``.minutes`` x
60000, else its ``.hours`` x 3600000 (a negative product is -1), else the broker
default; :func:`resolve_consumed_retention` writes the result into
``retention.commitoffset.ms``, the one value retention reads.

Derived properties follow ``LogConfig``'s methods: :attr:`LogConfig.compact`,
:attr:`LogConfig.delete`, :attr:`LogConfig.compression` (``None`` for
"producer": keep the producer's codec), :attr:`LogConfig.max_segment_ms`,
:attr:`LogConfig.init_file_size`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from lethe_formats.model import Compression, TimestampType

from lethe_reference.config.broker import BrokerConfig
from lethe_reference.config.topic import TOPIC_CONFIG_DEF
from lethe_reference.config.values import ConfigValue

__all__ = [
    "CONSUMED_RETENTION_UNITS",
    "LogConfig",
    "consumed_retention_key",
    "effective_log_config",
    "effective_topic_values",
    "resolve_consumed_retention",
]

#: KIP-68's topic-level units, highest priority first, with their factor to ms.
CONSUMED_RETENTION_UNITS = (
    ("retention.commitoffset.ms", 1),
    ("retention.commitoffset.minutes", 60 * 1000),
    ("retention.commitoffset.hours", 60 * 60 * 1000),
)

_CODECS = {
    "uncompressed": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Effective topic configuration; attribute table in the module docstring."""

    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10 * 1024 * 1024
    flush_messages: int = 2**63 - 1
    flush_ms: int = 2**63 - 1
    retention_bytes: int = -1
    retention_ms: int = 604800000
    max_message_bytes: int = 1048588
    index_interval_bytes: int = 4096
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = 2**63 - 1
    file_delete_delay_ms: int = 60000
    min_cleanable_dirty_ratio: float = 0.5
    cleanup_policy: frozenset[str] = frozenset({"delete"})
    unclean_leader_election_enable: bool = False
    min_insync_replicas: int = 1
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    preallocate: bool = False
    message_timestamp_type: TimestampType = TimestampType.CREATE_TIME
    message_timestamp_before_max_ms: int = 2**63 - 1
    message_timestamp_after_max_ms: int = 3600000
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    follower_replication_throttled_replicas: tuple[str, ...] = ()
    remote_storage_enable: bool = False
    local_retention_ms: int = -2
    local_retention_bytes: int = -2
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    tombstone_flag_enable: bool = False  # KIP-87 extension
    retention_commitoffset_enable: bool = False  # KIP-68 extension
    retention_commitoffset_ms: int = -2  # KIP-68 extension
    retention_commitoffset_minutes: int | None = None  # KIP-68 extension
    retention_commitoffset_hours: int | None = None  # KIP-68 extension
    overridden: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def from_values(
        cls, values: Mapping[str, ConfigValue], overridden: frozenset[str] = frozenset()
    ) -> LogConfig:
        """Build from parsed values keyed by topic config name (every defined name:
        Kafka's 33 and the extension configs)."""
        kwargs: dict[str, object] = {}
        for name in TOPIC_CONFIG_DEF.names():
            kwargs[name.replace(".", "_")] = values[name]
        policy = values["cleanup.policy"]
        assert isinstance(policy, tuple)
        kwargs["cleanup_policy"] = frozenset(p.lower() for p in policy)
        timestamp = values["message.timestamp.type"]
        kwargs["message_timestamp_type"] = (
            TimestampType.LOG_APPEND_TIME
            if timestamp == "LogAppendTime"
            else TimestampType.CREATE_TIME
        )
        return cls(overridden=overridden, **kwargs)  # type: ignore[arg-type]

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        """Whether retention and DeleteRecords apply (``cleanup.policy`` has delete)."""
        return "delete" in self.cleanup_policy

    @property
    def compression(self) -> Compression | None:
        """Codec the broker recompresses to; None keeps the producer's codec."""
        return _CODECS.get(self.compression_type)

    @property
    def max_segment_ms(self) -> int:
        """Roll deadline: compacted topics also roll by ``max.compaction.lag.ms``."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def init_file_size(self) -> int:
        return self.segment_bytes if self.preallocate else 0

    @property
    def effective_local_retention_ms(self) -> int:
        return self.retention_ms if self.local_retention_ms == -2 else self.local_retention_ms

    @property
    def effective_local_retention_bytes(self) -> int:
        if self.local_retention_bytes == -2:
            return self.retention_bytes
        return self.local_retention_bytes


def effective_topic_values(
    overrides: Mapping[str, str], broker: BrokerConfig | None = None
) -> dict[str, ConfigValue]:
    """Parsed value of every topic config: override > broker synonym > default.

    ``LogConfig.fromProps(extractLogConfigMap, topicProps)``: broker-derived
    values first, the topic's own strings on top, all parsed and validated with
    the topic definitions. Overrides are assumed already accepted (see
    :mod:`lethe_reference.config.alter`); an invalid one still raises.
    """
    base = (broker or BrokerConfig()).log_config_defaults()
    return resolve_consumed_retention(TOPIC_CONFIG_DEF.parse({**base, **overrides}), overrides)


def consumed_retention_key(overrides: Mapping[str, object]) -> str | None:
    """The topic-level KIP-68 unit in force (module docstring), None without one."""
    return next((name for name, _ in CONSUMED_RETENTION_UNITS if name in overrides), None)


def resolve_consumed_retention(
    values: dict[str, ConfigValue], overrides: Mapping[str, object]
) -> dict[str, ConfigValue]:
    """``values`` with ``retention.commitoffset.ms`` from the topic's unit in force."""
    key = consumed_retention_key(overrides)
    if key is None or key == "retention.commitoffset.ms":
        return values
    factor = dict(CONSUMED_RETENTION_UNITS)[key]
    amount = values[key]
    assert isinstance(amount, int)
    values["retention.commitoffset.ms"] = max(amount * factor, -1)
    return values


def effective_log_config(
    overrides: Mapping[str, str], broker: BrokerConfig | None = None
) -> LogConfig:
    """The :class:`LogConfig` of a topic with these overrides on this broker."""
    values = effective_topic_values(overrides, broker)
    return LogConfig.from_values(values, frozenset(overrides))


assert [f.name for f in fields(LogConfig)][:-1] == [
    n.replace(".", "_") for n in TOPIC_CONFIG_DEF.names()
]
