"""KIP-87's switch: topic config ``tombstone.flag.enable`` (catalog KIP87-CFG-1, DISC-1).

The catalog decides a boolean topic config, default false, with the broker
default ``log.tombstone.flag.enable``, listed by DescribeConfigs after Kafka's
own configs so a client can discover the profile, on a broker that switches
the extension on (``lethe.kip87.enable``; off, it is invisible:
test_config_extension_switches.py).
"""

from __future__ import annotations

import pytest
from lethe_reference.config import BrokerConfig, ConfigSource, ConfigType, describe_topic_configs
from lethe_reference.config.broker_defs import BROKER_CONFIG_DEF, DYNAMIC_BROKER_CONFIGS
from lethe_reference.config.describe import ConfigEntry
from lethe_reference.config.errors import ConfigError
from lethe_reference.config.log_config import LogConfig, effective_log_config
from lethe_reference.config.topic import DESCRIBE_ORDER, TOPIC_CONFIG_DEF

NAME = "tombstone.flag.enable"
ON = BrokerConfig({"lethe.kip87.enable": "true"})


def _entry(entries: list[ConfigEntry]) -> ConfigEntry:
    (entry,) = [e for e in entries if e.name == NAME]
    return entry


def test_the_topic_config_is_a_boolean_defaulting_to_false() -> None:
    key = TOPIC_CONFIG_DEF.key(NAME)
    assert (key.type, key.default) == (ConfigType.BOOLEAN, False)
    assert LogConfig().tombstone_flag_enable is False
    assert effective_log_config({}).tombstone_flag_enable is False


def test_describe_configs_lists_it_false_by_default_after_kafkas_configs() -> None:
    entries = describe_topic_configs({}, ON)
    assert [e.name for e in entries][: len(DESCRIBE_ORDER)] == list(DESCRIBE_ORDER)
    entry = _entry(entries)
    assert (entry.value, entry.source, entry.config_type) == (
        "false",
        ConfigSource.DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
    )


def test_a_topic_override_enables_it() -> None:
    assert effective_log_config({NAME: "true"}).tombstone_flag_enable is True
    entry = _entry(describe_topic_configs({NAME: "TRUE"}, ON))
    assert (entry.value, entry.source) == ("true", ConfigSource.TOPIC_CONFIG)


def test_the_broker_default_is_log_tombstone_flag_enable() -> None:
    broker = BrokerConfig({"lethe.kip87.enable": "true", "log.tombstone.flag.enable": "true"})
    assert effective_log_config({}, broker).tombstone_flag_enable is True
    assert effective_log_config({NAME: "false"}, broker).tombstone_flag_enable is False
    entry = _entry(describe_topic_configs({}, broker, include_synonyms=True))
    assert entry.source == ConfigSource.STATIC_BROKER_CONFIG
    assert entry.synonyms[0].name == "log.tombstone.flag.enable"
    assert BROKER_CONFIG_DEF.key("log.tombstone.flag.enable").default is False
    assert "log.tombstone.flag.enable" in DYNAMIC_BROKER_CONFIGS


def test_a_non_boolean_value_is_refused() -> None:
    with pytest.raises(ConfigError):
        effective_log_config({NAME: "yes"})
