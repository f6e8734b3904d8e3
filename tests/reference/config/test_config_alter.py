"""AlterConfigs / IncrementalAlterConfigs / topic validation: Kafka 4.0's rules and words."""

from __future__ import annotations

import pytest
from lethe_reference.config import (
    AlterOp,
    BrokerConfig,
    ConfigOp,
    InvalidConfigError,
    InvalidRequestError,
    alter_broker_configs,
    alter_topic_configs,
    incremental_alter_broker_configs,
    incremental_alter_topic_configs,
    validate_topic_configs,
)


def test_op_ids_are_kafkas() -> None:
    assert [(op.name, int(op)) for op in AlterOp] == [
        ("SET", 0),
        ("DELETE", 1),
        ("APPEND", 2),
        ("SUBTRACT", 3),
    ]


def test_legacy_alter_replaces_the_whole_set() -> None:
    current = {"retention.ms": "1000", "cleanup.policy": "compact"}
    new = alter_topic_configs(current, [("segment.bytes", "1048576")])
    assert new == {"segment.bytes": "1048576"}
    assert current == {"retention.ms": "1000", "cleanup.policy": "compact"}  # pure


def test_legacy_alter_with_nothing_clears_every_override() -> None:
    assert alter_topic_configs({"retention.ms": "1"}, []) == {}


def test_incremental_set_and_delete() -> None:
    current = {"retention.ms": "1000", "segment.ms": "5"}
    ops = [
        ConfigOp("retention.ms", AlterOp.SET, "2000"),
        ConfigOp("segment.ms", AlterOp.DELETE),
        ConfigOp("not.there", AlterOp.DELETE),
    ]
    assert incremental_alter_topic_configs(current, ops) == {"retention.ms": "2000"}


def test_set_stores_the_value_as_given() -> None:
    ops = [ConfigOp("retention.ms", AlterOp.SET, " 42 ")]
    assert incremental_alter_topic_configs({}, ops) == {"retention.ms": " 42 "}


def test_append_starts_from_the_default_when_unset() -> None:
    ops = [ConfigOp("cleanup.policy", AlterOp.APPEND, "compact")]
    assert incremental_alter_topic_configs({}, ops) == {"cleanup.policy": "delete,compact"}


def test_append_skips_elements_already_present() -> None:
    ops = [ConfigOp("cleanup.policy", AlterOp.APPEND, "delete,compact")]
    result = incremental_alter_topic_configs({"cleanup.policy": "compact"}, ops)
    assert result == {"cleanup.policy": "compact,delete"}


def test_subtract_removes_elements() -> None:
    ops = [ConfigOp("cleanup.policy", AlterOp.SUBTRACT, "delete")]
    result = incremental_alter_topic_configs({"cleanup.policy": "compact,delete"}, ops)
    assert result == {"cleanup.policy": "compact"}
    everything = [ConfigOp("cleanup.policy", AlterOp.SUBTRACT, "delete")]
    assert incremental_alter_topic_configs({}, everything) == {"cleanup.policy": ""}


def test_append_to_a_throttled_replica_list() -> None:
    name = "leader.replication.throttled.replicas"
    ops = [ConfigOp(name, AlterOp.APPEND, "0:1,1:1")]
    assert incremental_alter_topic_configs({name: "2:1"}, ops) == {name: "2:1,0:1,1:1"}


@pytest.mark.parametrize("op", [AlterOp.APPEND, AlterOp.SUBTRACT])
def test_append_or_subtract_on_a_non_list_is_invalid_config(op: AlterOp) -> None:
    with pytest.raises(InvalidConfigError) as error:
        incremental_alter_topic_configs({}, [ConfigOp("retention.ms", op, "1")])
    assert error.value.message == (
        f"Can't {op.name} to key retention.ms because its type is not LIST."
    )
    assert error.value.error_name == "INVALID_CONFIG"


def test_append_to_an_unknown_key_is_not_a_list_either() -> None:
    with pytest.raises(InvalidConfigError, match="Can't APPEND to key foo because"):
        incremental_alter_topic_configs({}, [ConfigOp("foo", AlterOp.APPEND, "x")])


def test_duplicate_keys_are_an_invalid_request() -> None:
    ops = [ConfigOp("retention.ms", AlterOp.SET, "1"), ConfigOp("retention.ms", AlterOp.DELETE)]
    with pytest.raises(InvalidRequestError) as error:
        incremental_alter_topic_configs({}, ops)
    assert error.value.message == "Error due to duplicate config keys"
    with pytest.raises(InvalidRequestError, match="duplicate config keys"):
        alter_topic_configs({}, [("a", "1"), ("a", "2")])


def test_null_values_are_an_invalid_request_except_for_delete() -> None:
    ops = [
        ConfigOp("retention.ms", AlterOp.SET, None),
        ConfigOp("segment.ms", AlterOp.DELETE, None),
        ConfigOp("cleanup.policy", AlterOp.APPEND, None),
    ]
    with pytest.raises(InvalidRequestError) as error:
        incremental_alter_topic_configs({}, ops)
    assert error.value.message == "Null value not supported for : retention.ms, cleanup.policy"
    with pytest.raises(InvalidRequestError, match="Null value not supported for : x"):
        alter_topic_configs({}, [("x", None)])


def test_unknown_operation_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError, match="Unknown operations type 7"):
        incremental_alter_topic_configs({}, [ConfigOp("retention.ms", 7, "1")])


def test_unknown_topic_config_name() -> None:
    with pytest.raises(InvalidConfigError) as error:
        incremental_alter_topic_configs({}, [ConfigOp("retention.hours", AlterOp.SET, "1")])
    assert error.value.message == "Unknown topic config name: retention.hours"


def test_invalid_value_uses_kafkas_wording() -> None:
    with pytest.raises(InvalidConfigError) as error:
        alter_topic_configs({}, [("cleanup.policy", "compact,bogus")])
    assert error.value.message == (
        "Invalid value bogus for configuration cleanup.policy: "
        "String must be one of: compact, delete"
    )


def test_min_compaction_lag_above_max_is_a_conflict() -> None:
    configs = {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}
    with pytest.raises(InvalidConfigError) as error:
        validate_topic_configs(configs)
    assert error.value.message == (
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"
    )


def test_broker_synonyms_take_part_in_cross_checks() -> None:
    broker = BrokerConfig({"log.cleaner.max.compaction.lag.ms": "5"})
    with pytest.raises(InvalidConfigError, match="conflict topic config setting"):
        validate_topic_configs({"min.compaction.lag.ms": "10"}, broker)


def test_remote_storage_cannot_be_enabled_without_a_remote_tier() -> None:
    with pytest.raises(InvalidConfigError) as error:
        validate_topic_configs({"remote.storage.enable": "true"})
    assert error.value.message == (
        "Tiered Storage functionality is disabled in the broker. "
        "Topic cannot be configured with remote log storage."
    )


def test_null_values_in_create_topics_are_invalid_config() -> None:
    with pytest.raises(InvalidConfigError) as error:
        validate_topic_configs({"retention.ms": None, "segment.ms": None})
    assert (
        error.value.message == "Null value not supported for topic configs: retention.ms,segment.ms"
    )


def test_validate_returns_effective_values() -> None:
    values = validate_topic_configs(
        {"retention.ms": "5"}, BrokerConfig({"log.retention.bytes": "9"})
    )
    assert values["retention.ms"] == 5
    assert values["retention.bytes"] == 9


def test_broker_legacy_alter_replaces_the_dynamic_layer() -> None:
    broker = BrokerConfig().with_dynamic({"log.retention.bytes": "5"}, per_broker=True)
    altered = alter_broker_configs(broker, [("log.cleaner.threads", "2")], per_broker=True)
    assert dict(altered.dynamic_broker) == {"log.cleaner.threads": "2"}
    assert altered.get_int("log.retention.bytes") == -1


def test_broker_incremental_append_to_a_list() -> None:
    ops = [ConfigOp("log.cleanup.policy", AlterOp.APPEND, "compact")]
    altered = incremental_alter_broker_configs(BrokerConfig(), ops, per_broker=False)
    assert dict(altered.dynamic_default) == {"log.cleanup.policy": "delete,compact"}
    assert altered.get_list("log.cleanup.policy") == ("delete", "compact")


def test_broker_incremental_append_to_a_non_list() -> None:
    ops = [ConfigOp("log.retention.bytes", AlterOp.APPEND, "1")]
    with pytest.raises(InvalidConfigError) as error:
        incremental_alter_broker_configs(BrokerConfig(), ops, per_broker=True)
    assert error.value.message == (
        "Config value append is not allowed for config key: log.retention.bytes"
    )


def test_broker_incremental_set_of_a_static_only_config() -> None:
    ops = [ConfigOp("node.id", AlterOp.SET, "2")]
    with pytest.raises(
        InvalidRequestError, match=r"Cannot update these configs dynamically: Set\(node.id\)"
    ):
        incremental_alter_broker_configs(BrokerConfig(), ops, per_broker=True)
