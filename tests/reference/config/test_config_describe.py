"""DescribeConfigs: sources, synonyms and printed values, following ConfigHelper."""

from __future__ import annotations

from lethe_reference.config import (
    BrokerConfig,
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    describe_broker_configs,
    describe_topic_configs,
)
from lethe_reference.config.topic import EXTENSION_TOPIC_CONFIGS

S = ConfigSource


def _entry(entries: list[ConfigEntry], name: str) -> ConfigEntry:
    (entry,) = [e for e in entries if e.name == name]
    return entry


def test_config_source_ids_are_kafkas() -> None:
    assert [(s.name, int(s)) for s in ConfigSource] == [
        ("UNKNOWN", 0),
        ("TOPIC_CONFIG", 1),
        ("DYNAMIC_BROKER_CONFIG", 2),
        ("DYNAMIC_DEFAULT_BROKER_CONFIG", 3),
        ("STATIC_BROKER_CONFIG", 4),
        ("DEFAULT_CONFIG", 5),
        ("DYNAMIC_BROKER_LOGGER_CONFIG", 6),
        ("CLIENT_METRICS_CONFIG", 7),
        ("GROUP_CONFIG", 8),
    ]


def test_an_override_is_reported_first_then_every_broker_layer() -> None:
    broker = (
        BrokerConfig({"log.retention.bytes": "10"})
        .with_dynamic({"log.retention.bytes": "20"}, per_broker=False)
        .with_dynamic({"log.retention.bytes": "30"}, per_broker=True)
    )
    entries = describe_topic_configs({"retention.bytes": "40"}, broker, include_synonyms=True)
    entry = _entry(entries, "retention.bytes")
    assert (entry.value, entry.source) == ("40", S.TOPIC_CONFIG)
    assert entry.synonyms == (
        ConfigSynonym("retention.bytes", "40", S.TOPIC_CONFIG),
        ConfigSynonym("log.retention.bytes", "30", S.DYNAMIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.bytes", "20", S.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ConfigSynonym("log.retention.bytes", "10", S.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.bytes", "-1", S.DEFAULT_CONFIG),
    )


def test_without_an_override_the_highest_broker_layer_is_the_source() -> None:
    broker = BrokerConfig({"log.cleanup.policy": "compact"}).with_dynamic(
        {"log.cleanup.policy": "compact,delete"}, per_broker=False
    )
    entry = _entry(describe_topic_configs({}, broker), "cleanup.policy")
    assert (entry.value, entry.source) == ("compact,delete", S.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert entry.synonyms == ()  # not asked for


def test_values_are_printed_from_the_parsed_value() -> None:
    overrides = {
        "cleanup.policy": " compact ,delete",
        "segment.bytes": " 0016384 ",
        "min.cleanable.dirty.ratio": "1",
        "preallocate": "TRUE",
    }
    entries = describe_topic_configs(overrides, include_synonyms=True)
    printed = {name: _entry(entries, name).value for name in overrides}
    assert printed == {
        "cleanup.policy": "compact,delete",
        "segment.bytes": "16384",
        "min.cleanable.dirty.ratio": "1.0",
        "preallocate": "true",
    }
    assert _entry(entries, "segment.bytes").synonyms[0] == ConfigSynonym(
        "segment.bytes", "16384", S.TOPIC_CONFIG
    )


def test_broker_synonym_values_are_the_raw_strings_of_their_layer() -> None:
    broker = BrokerConfig({"log.cleaner.min.cleanable.ratio": " 1 "})
    entry = _entry(
        describe_topic_configs({}, broker, include_synonyms=True), "min.cleanable.dirty.ratio"
    )
    assert entry.value == "1.0"
    assert entry.synonyms[0] == ConfigSynonym(
        "log.cleaner.min.cleanable.ratio", " 1 ", S.STATIC_BROKER_CONFIG
    )


def test_retention_from_hours_only_reports_default_with_no_synonyms() -> None:
    # ConfigHelper drops synonyms until the first one named log.retention.ms.
    broker = BrokerConfig({"log.retention.hours": "1"})
    entry = _entry(describe_topic_configs({}, broker, include_synonyms=True), "retention.ms")
    assert (entry.value, entry.source, entry.synonyms) == ("3600000", S.DEFAULT_CONFIG, ())


def test_retention_ms_set_on_the_broker_lists_the_hours_default_too() -> None:
    broker = BrokerConfig({"log.retention.ms": "5000", "log.retention.hours": "2"})
    entry = _entry(describe_topic_configs({}, broker, include_synonyms=True), "retention.ms")
    assert (entry.value, entry.source) == ("5000", S.STATIC_BROKER_CONFIG)
    assert entry.synonyms == (
        ConfigSynonym("log.retention.ms", "5000", S.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "2", S.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", S.DEFAULT_CONFIG),
    )


def test_an_override_of_a_config_without_broker_synonym_has_one_synonym() -> None:
    entries = describe_topic_configs({"remote.log.copy.disable": "true"}, include_synonyms=True)
    entry = _entry(entries, "remote.log.copy.disable")
    assert entry.synonyms == (ConfigSynonym("remote.log.copy.disable", "true", S.TOPIC_CONFIG),)


def test_requested_keys_filter_and_keep_kafkas_order() -> None:
    entries = describe_topic_configs({}, keys=["segment.ms", "cleanup.policy", "no.such.key"])
    assert [e.name for e in entries] == ["cleanup.policy", "segment.ms"]
    assert len(describe_topic_configs({}, keys=[])) == 33  # extensions off: Kafka's 33
    switched_on = BrokerConfig({"lethe.kip68.enable": "true", "lethe.kip87.enable": "true"})
    assert len(describe_topic_configs({}, switched_on, keys=[])) == 33 + len(
        EXTENSION_TOPIC_CONFIGS
    )


def test_broker_resource_entries() -> None:
    broker = BrokerConfig({"node.id": "1", "custom.secret": "s3cr3t"}).with_dynamic(
        {"log.retention.bytes": "7"}, per_broker=True
    )
    entries = describe_broker_configs(broker, include_synonyms=True)
    node = _entry(entries, "node.id")
    assert (node.value, node.source, node.read_only) == ("1", S.STATIC_BROKER_CONFIG, True)
    retention = _entry(entries, "log.retention.bytes")
    assert (retention.value, retention.source, retention.read_only) == (
        "7",
        S.DYNAMIC_BROKER_CONFIG,
        False,
    )
    custom = _entry(entries, "custom.secret")
    assert (custom.value, custom.sensitive, custom.config_type) == (None, True, ConfigType.UNKNOWN)
    assert custom.synonyms == (ConfigSynonym("custom.secret", None, S.STATIC_BROKER_CONFIG),)


def test_cluster_default_resource_lists_only_dynamic_defaults() -> None:
    broker = BrokerConfig({"num.io.threads": "4"}).with_dynamic(
        {"log.cleaner.threads": "2"}, per_broker=False
    )
    (entry,) = describe_broker_configs(broker, per_broker=False, include_synonyms=True)
    assert (entry.name, entry.value, entry.source) == (
        "log.cleaner.threads",
        "2",
        S.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    assert entry.synonyms == (
        ConfigSynonym("log.cleaner.threads", "2", S.DYNAMIC_DEFAULT_BROKER_CONFIG),
    )


def test_broker_roll_hours_lists_its_group_from_itself_on() -> None:
    broker = BrokerConfig({"log.roll.ms": "10", "log.roll.hours": "3"})
    entry = _entry(describe_broker_configs(broker, include_synonyms=True), "log.roll.hours")
    assert [(s.name, s.source) for s in entry.synonyms] == [
        ("log.roll.hours", S.STATIC_BROKER_CONFIG),
        ("log.roll.hours", S.DEFAULT_CONFIG),
    ]
