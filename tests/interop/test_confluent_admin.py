"""confluent-kafka's AdminClient (librdkafka): topic configs and the DeleteRecords policy check.

Config values come from Kafka 4.0's DescribeConfigs answer in the golden wire
capture and Kafka's documented semantics: IncrementalAlterConfigs changes the
named keys (APPEND adds a list item, DELETE falls back to the default), while
the legacy AlterConfigs replaces a topic's whole set of overrides. DeleteRecords
on a topic whose ``cleanup.policy`` lacks ``delete`` is POLICY_VIOLATION (44),
as Kafka answered in the golden delete-records and wire cases.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)
from confluent_support import REQUEST, TIMEOUT, admin_client, create, delete_records, describe


@pytest.fixture
def admin(bootstrap: str) -> Iterator[AdminClient]:
    yield admin_client(bootstrap)


def test_delete_records_on_a_compact_topic_is_policy_violation(
    admin: AdminClient, topic: str
) -> None:
    create(admin, topic, 1, {"cleanup.policy": "compact"})
    assert delete_records(admin, topic, {0: 1}) == {0: KafkaError.POLICY_VIOLATION}


def test_describe_configs_reports_kafkas_defaults_and_the_creation_overrides(
    admin: AdminClient, topic: str
) -> None:
    create(admin, topic, 1, {"retention.ms": "123456", "cleanup.policy": "compact"})
    entries = describe(admin, topic)
    assert entries["retention.ms"].value == "123456"
    assert entries["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["cleanup.policy"].value == "compact"
    # Kafka 4.0's defaults, as its DescribeConfigs answered librdkafka (golden wire capture)
    defaults = {
        "retention.bytes": "-1",
        "delete.retention.ms": "86400000",
        "min.compaction.lag.ms": "0",
        "min.cleanable.dirty.ratio": "0.5",
        "file.delete.delay.ms": "60000",
        "segment.ms": "604800000",
        "max.message.bytes": "1048588",
        "message.timestamp.type": "CreateTime",
        "message.timestamp.after.max.ms": "3600000",
        "index.interval.bytes": "4096",
    }
    for name, value in defaults.items():
        assert entries[name].value == value, name
        assert entries[name].source == ConfigSource.DEFAULT_CONFIG.value, name


def test_incremental_alter_configs_set_append_and_delete(admin: AdminClient, topic: str) -> None:
    create(admin, topic, 1, {"retention.ms": "123456"})
    changes = [
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("segment.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
    ]
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=changes)
    assert (
        admin.incremental_alter_configs([resource], **REQUEST)[resource].result(timeout=TIMEOUT)
        is None
    )
    entries = describe(admin, topic)
    assert entries["cleanup.policy"].value == "delete,compact"
    assert entries["segment.ms"].value == "3600000"
    assert entries["segment.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["retention.ms"].value == "604800000"
    assert entries["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")
def test_legacy_alter_configs_replaces_every_override(admin: AdminClient, topic: str) -> None:
    create(admin, topic, 1, {"retention.ms": "123456", "cleanup.policy": "compact"})
    resource = ConfigResource(ResourceType.TOPIC, topic, set_config={"segment.bytes": "1048576"})
    assert admin.alter_configs([resource], **REQUEST)[resource].result(timeout=TIMEOUT) is None
    entries = describe(admin, topic)
    assert entries["segment.bytes"].value == "1048576"
    assert entries["segment.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    # AlterConfigs (not incremental) sets the whole override set: the others are gone
    assert entries["retention.ms"].value == "604800000"
    assert entries["cleanup.policy"].value == "delete"
