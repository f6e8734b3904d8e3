"""LogConfig: effective values (override > broker synonym > default) as typed attributes."""

from __future__ import annotations

import pytest
from lethe_formats.model import Compression, TimestampType
from lethe_reference.config import BrokerConfig, LogConfig, effective_log_config
from lethe_reference.config.topic import TOPIC_CONFIG_DEF


def test_defaults_without_overrides_or_broker_settings() -> None:
    config = effective_log_config({})
    assert config == LogConfig()
    assert config.segment_bytes == 1073741824
    assert config.retention_ms == 604800000
    assert config.retention_bytes == -1
    assert config.cleanup_policy == frozenset({"delete"})
    assert config.delete and not config.compact
    assert config.message_timestamp_type is TimestampType.CREATE_TIME
    assert config.message_timestamp_after_max_ms == 3600000
    assert config.overridden == frozenset()


def test_every_topic_config_has_an_attribute_of_the_same_name() -> None:
    config = LogConfig()
    for name in TOPIC_CONFIG_DEF.names():
        assert hasattr(config, name.replace(".", "_")), name


def test_topic_override_beats_every_broker_layer() -> None:
    broker = BrokerConfig({"log.retention.bytes": "1"}).with_dynamic(
        {"log.retention.bytes": "2"}, per_broker=True
    )
    assert effective_log_config({}, broker).retention_bytes == 2
    assert effective_log_config({"retention.bytes": "3"}, broker).retention_bytes == 3


def test_broker_synonym_beats_the_topic_default() -> None:
    broker = BrokerConfig({"log.cleanup.policy": "compact", "log.cleaner.delete.retention.ms": "5"})
    config = effective_log_config({}, broker)
    assert config.cleanup_policy == frozenset({"compact"})
    assert config.delete_retention_ms == 5


def test_list_and_enum_attributes_are_typed() -> None:
    config = effective_log_config(
        {
            "cleanup.policy": "compact, delete",
            "message.timestamp.type": "LogAppendTime",
            "compression.type": "zstd",
            "min.cleanable.dirty.ratio": "1",
        }
    )
    assert config.cleanup_policy == frozenset({"compact", "delete"})
    assert config.compact and config.delete
    assert config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    assert config.compression is Compression.ZSTD
    assert config.min_cleanable_dirty_ratio == 1.0
    assert config.overridden == frozenset(
        {
            "cleanup.policy",
            "message.timestamp.type",
            "compression.type",
            "min.cleanable.dirty.ratio",
        }
    )


def test_empty_cleanup_policy_is_neither_compact_nor_delete() -> None:
    config = effective_log_config({"cleanup.policy": ""})
    assert config.cleanup_policy == frozenset()
    assert not config.compact and not config.delete


@pytest.mark.parametrize(
    ("codec", "expected"),
    [("producer", None), ("uncompressed", Compression.NONE), ("gzip", Compression.GZIP)],
)
def test_compression_none_means_keep_the_producers_codec(
    codec: str, expected: Compression | None
) -> None:
    assert effective_log_config({"compression.type": codec}).compression is expected


def test_max_segment_ms_of_a_compacted_topic_includes_max_compaction_lag() -> None:
    compacted = {"cleanup.policy": "compact", "max.compaction.lag.ms": "1000"}
    assert effective_log_config(compacted).max_segment_ms == 1000
    deleting = {"cleanup.policy": "delete", "max.compaction.lag.ms": "1000"}
    assert effective_log_config(deleting).max_segment_ms == 604800000


def test_init_file_size_follows_preallocate() -> None:
    assert effective_log_config({}).init_file_size == 0
    preallocated = effective_log_config({"preallocate": "true", "segment.bytes": "2048"})
    assert preallocated.init_file_size == 2048


def test_local_retention_minus_two_means_the_total_retention() -> None:
    config = effective_log_config({"retention.ms": "100", "retention.bytes": "200"})
    assert config.effective_local_retention_ms == 100
    assert config.effective_local_retention_bytes == 200
    config = effective_log_config({"local.retention.ms": "5", "local.retention.bytes": "6"})
    assert (config.effective_local_retention_ms, config.effective_local_retention_bytes) == (5, 6)


def test_log_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        LogConfig().retention_ms = 1  # type: ignore[misc]


def test_log_config_meets_the_storage_engines_settings_protocol() -> None:
    from lethe_reference.storage.settings import LogSettings, max_segment_ms

    settings: LogSettings = effective_log_config(
        {"cleanup.policy": "compact", "max.compaction.lag.ms": "60000"}
    )
    assert max_segment_ms(settings) == 60000
    assert settings.compact and not settings.delete
