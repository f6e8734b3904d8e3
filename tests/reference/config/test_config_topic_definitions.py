"""Topic config definitions: Kafka 4.0.0's types, defaults and validators.

Defaults and types are checked against kafka-facts.md §4.5 and the golden
DescribeConfigs frames (see test_config_golden_describe.py for the full list);
validators and their messages against Kafka 4.0's LogConfig / ConfigDef.
"""

from __future__ import annotations

import pytest
from lethe_reference.config import ConfigType, InvalidConfigError
from lethe_reference.config.broker_defs import BROKER_CONFIG_DEF
from lethe_reference.config.topic import TOPIC_CONFIG_DEF, TOPIC_SYNONYMS

LONG_MAX = 9223372036854775807

# kafka-facts.md §4.5 table: topic config -> (default, first broker synonym)
FACTS_4_5 = {
    "cleanup.policy": (("delete",), "log.cleanup.policy"),
    "delete.retention.ms": (86400000, "log.cleaner.delete.retention.ms"),
    "min.compaction.lag.ms": (0, "log.cleaner.min.compaction.lag.ms"),
    "max.compaction.lag.ms": (LONG_MAX, "log.cleaner.max.compaction.lag.ms"),
    "min.cleanable.dirty.ratio": (0.5, "log.cleaner.min.cleanable.ratio"),
    "segment.bytes": (1073741824, "log.segment.bytes"),
    "segment.ms": (604800000, "log.roll.ms"),
    "segment.jitter.ms": (0, "log.roll.jitter.ms"),
    "segment.index.bytes": (10485760, "log.index.size.max.bytes"),
    "index.interval.bytes": (4096, "log.index.interval.bytes"),
    "retention.ms": (604800000, "log.retention.ms"),
    "retention.bytes": (-1, "log.retention.bytes"),
    "file.delete.delay.ms": (60000, "log.segment.delete.delay.ms"),
    "max.message.bytes": (1048588, "message.max.bytes"),
}


@pytest.mark.parametrize("name", sorted(FACTS_4_5))
def test_defaults_and_synonyms_match_kafka_facts(name: str) -> None:
    default, synonym = FACTS_4_5[name]
    assert TOPIC_CONFIG_DEF.key(name).default == default
    assert TOPIC_SYNONYMS[name][0].name == synonym


def test_time_synonyms_carry_their_unit_factor() -> None:
    assert [(s.name, s.factor) for s in TOPIC_SYNONYMS["retention.ms"]] == [
        ("log.retention.ms", 1),
        ("log.retention.minutes", 60_000),
        ("log.retention.hours", 3_600_000),
    ]
    assert [(s.name, s.factor) for s in TOPIC_SYNONYMS["segment.ms"]] == [
        ("log.roll.ms", 1),
        ("log.roll.hours", 3_600_000),
    ]


def test_configs_without_broker_synonym() -> None:
    without = set(TOPIC_CONFIG_DEF.names()) - set(TOPIC_SYNONYMS)
    assert without == {
        "leader.replication.throttled.replicas",
        "follower.replication.throttled.replicas",
        "remote.storage.enable",
        "remote.log.copy.disable",
        "remote.log.delete.on.disable",
        # KIP-68's topic-level units: the broker's units are synonyms of .ms (KIP68-CFG-5)
        "retention.commitoffset.minutes",
        "retention.commitoffset.hours",
    }


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("segment.bytes", ConfigType.INT),
        ("retention.ms", ConfigType.LONG),
        ("min.cleanable.dirty.ratio", ConfigType.DOUBLE),
        ("cleanup.policy", ConfigType.LIST),
        ("compression.type", ConfigType.STRING),
        ("preallocate", ConfigType.BOOLEAN),
    ],
)
def test_types(name: str, kind: ConfigType) -> None:
    assert TOPIC_CONFIG_DEF.key(name).type is kind


ACCEPTED = [
    ("segment.bytes", "14"),
    ("segment.ms", "1"),
    ("segment.jitter.ms", "0"),
    ("segment.index.bytes", "4"),
    ("flush.messages", "1"),
    ("flush.ms", "0"),
    ("retention.bytes", "-5"),
    ("retention.ms", "-1"),
    ("max.message.bytes", "0"),
    ("delete.retention.ms", "0"),
    ("max.compaction.lag.ms", "1"),
    ("min.cleanable.dirty.ratio", "0"),
    ("min.cleanable.dirty.ratio", "1"),
    ("cleanup.policy", "compact"),
    ("cleanup.policy", "compact,delete"),
    ("cleanup.policy", "delete,compact,delete"),
    ("cleanup.policy", ""),
    ("compression.type", "zstd"),
    ("compression.gzip.level", "-1"),
    ("compression.gzip.level", "1"),
    ("compression.gzip.level", "9"),
    ("compression.lz4.level", "17"),
    ("compression.zstd.level", "-131072"),
    ("compression.zstd.level", "22"),
    ("message.timestamp.type", "LogAppendTime"),
    ("leader.replication.throttled.replicas", "0:1,1:2"),
    ("follower.replication.throttled.replicas", "*"),
    ("local.retention.ms", "-2"),
    ("local.retention.bytes", "-2"),
]


@pytest.mark.parametrize(("name", "raw"), ACCEPTED)
def test_boundary_values_kafka_accepts(name: str, raw: str) -> None:
    TOPIC_CONFIG_DEF.key(name).parse(raw)


REFUSED = [
    ("segment.bytes", "13", "13", "Value must be at least 14"),
    ("segment.ms", "0", "0", "Value must be at least 1"),
    ("segment.jitter.ms", "-1", "-1", "Value must be at least 0"),
    ("segment.index.bytes", "3", "3", "Value must be at least 4"),
    ("flush.messages", "0", "0", "Value must be at least 1"),
    ("retention.ms", "-2", "-2", "Value must be at least -1"),
    ("max.compaction.lag.ms", "0", "0", "Value must be at least 1"),
    ("min.insync.replicas", "0", "0", "Value must be at least 1"),
    ("min.cleanable.dirty.ratio", "1.5", "1.5", "Value must be no more than 1"),
    ("min.cleanable.dirty.ratio", "-0.1", "-0.1", "Value must be at least 0"),
    ("cleanup.policy", "compact,foo", "foo", "String must be one of: compact, delete"),
    ("cleanup.policy", "Compact", "Compact", "String must be one of: compact, delete"),
    (
        "compression.type",
        "brotli",
        "brotli",
        "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
    ),
    ("compression.gzip.level", "0", "0", "Value must be between 1 and 9 or equal to -1"),
    ("compression.gzip.level", "10", "10", "Value must be between 1 and 9 or equal to -1"),
    ("compression.lz4.level", "18", "18", "Value must be no more than 17"),
    ("compression.zstd.level", "23", "23", "Value must be no more than 22"),
    ("compression.zstd.level", "-131073", "-131073", "Value must be at least -131072"),
    (
        "message.timestamp.type",
        "createtime",
        "createtime",
        "String must be one of: CreateTime, LogAppendTime",
    ),
    ("local.retention.ms", "-3", "-3", "Value must be at least -2"),
]


@pytest.mark.parametrize(("name", "raw", "shown", "reason"), REFUSED)
def test_refused_values_use_kafkas_wording(name: str, raw: str, shown: str, reason: str) -> None:
    with pytest.raises(InvalidConfigError) as error:
        TOPIC_CONFIG_DEF.key(name).parse(raw)
    assert error.value.message == f"Invalid value {shown} for configuration {name}: {reason}"
    assert error.value.error_name == "INVALID_CONFIG"


def test_throttled_replicas_message_names_the_config_and_shows_the_list() -> None:
    name = "leader.replication.throttled.replicas"
    with pytest.raises(InvalidConfigError) as error:
        TOPIC_CONFIG_DEF.key(name).parse("0:1, x")
    assert error.value.message == (
        f"Invalid value [0:1, x] for configuration {name}: {name} must be the literal '*' "
        "or a list of replicas in the following format: "
        "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
    )


def test_broker_log_segment_bytes_minimum_is_one_mebibyte_in_4_0() -> None:
    key = BROKER_CONFIG_DEF.key("log.segment.bytes")
    key.parse("1048576")
    with pytest.raises(InvalidConfigError, match="Value must be at least 1048576"):
        key.parse("1048575")


def test_first_invalid_value_in_definition_order_is_reported() -> None:
    with pytest.raises(InvalidConfigError, match=r"for configuration segment\.bytes:"):
        TOPIC_CONFIG_DEF.parse({"retention.ms": "-9", "segment.bytes": "1"})
