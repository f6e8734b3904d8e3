"""BrokerConfig: Kafka 4.0 defaults, --config files, layers and derived topic defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.config import BrokerConfig, InvalidConfigError, InvalidRequestError

# Defaults named in issue 3 and kafka-facts.md §1.3, §1.4, §4.5.
KAFKA_DEFAULTS = {
    "log.retention.check.interval.ms": 300000,
    "log.flush.offset.checkpoint.interval.ms": 60000,
    "log.flush.start.offset.checkpoint.interval.ms": 60000,
    "replica.high.watermark.checkpoint.interval.ms": 5000,
    "log.segment.delete.delay.ms": 60000,
    "group.initial.rebalance.delay.ms": 3000,
    "offsets.topic.num.partitions": 50,
    "offsets.topic.replication.factor": 3,
    "message.max.bytes": 1048588,
    "socket.request.max.bytes": 104857600,
    "num.partitions": 1,
    "default.replication.factor": 1,
    "auto.create.topics.enable": True,
    "node.id": -1,
    "listeners": "PLAINTEXT://:9092",
    "sasl.enabled.mechanisms": ("GSSAPI",),
    "log.cleaner.enable": True,
    "log.cleaner.threads": 1,
    "log.cleaner.dedupe.buffer.size": 134217728,
    "log.cleaner.io.buffer.size": 524288,
    "log.cleaner.io.buffer.load.factor": 0.9,
    "log.cleaner.backoff.ms": 15000,
    "log.cleaner.io.max.bytes.per.second": 1.7976931348623157e308,
    "producer.id.expiration.ms": 86400000,
    "log.retention.hours": 168,
    "log.retention.ms": None,
    "log.retention.minutes": None,
}


@pytest.mark.parametrize("name", sorted(KAFKA_DEFAULTS))
def test_kafka_defaults(name: str) -> None:
    assert BrokerConfig().value(name) == KAFKA_DEFAULTS[name]


def test_loading_a_properties_file_with_overrides(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(
        "# broker\nnode.id=1\nlog.dirs=/var/a, /var/b\nnum.partitions = 3\n"
        "log.retention.check.interval.ms=1000\n"
    )
    broker = BrokerConfig.from_properties_file(path, {"num.partitions": "5"})
    assert broker.node_id == 1
    assert broker.log_dirs == ("/var/a", "/var/b")
    assert broker.get_int("num.partitions") == 5
    assert broker.get_int("log.retention.check.interval.ms") == 1000
    assert broker.static["num.partitions"] == "5"


def test_log_dir_is_used_when_log_dirs_is_unset() -> None:
    assert BrokerConfig().log_dirs == ("/tmp/kafka-logs",)
    assert BrokerConfig({"log.dir": "/x"}).log_dirs == ("/x",)


def test_an_invalid_static_value_stops_the_broker() -> None:
    with pytest.raises(InvalidConfigError) as error:
        BrokerConfig({"num.partitions": "0"})
    assert error.value.message == (
        "Invalid value 0 for configuration num.partitions: Value must be at least 1"
    )


def test_unknown_names_are_kept_and_ignored() -> None:
    broker = BrokerConfig({"some.plugin.setting": "x", "process.roles": "broker,controller"})
    assert broker.static["some.plugin.setting"] == "x"
    assert broker.get_list("process.roles") == ("broker", "controller")


def test_retention_ms_comes_from_ms_then_minutes_then_hours() -> None:
    assert BrokerConfig().log_config_defaults()["retention.ms"] == 604800000
    hours = BrokerConfig({"log.retention.hours": "1"})
    assert hours.log_config_defaults()["retention.ms"] == 3_600_000
    minutes = BrokerConfig({"log.retention.hours": "1", "log.retention.minutes": "2"})
    assert minutes.log_config_defaults()["retention.ms"] == 120_000
    millis = BrokerConfig({"log.retention.minutes": "2", "log.retention.ms": "5"})
    assert millis.log_config_defaults()["retention.ms"] == 5


def test_negative_broker_retention_means_unlimited() -> None:
    assert BrokerConfig({"log.retention.hours": "-1"}).log_config_defaults()["retention.ms"] == -1
    assert BrokerConfig({"log.retention.ms": "-7"}).log_config_defaults()["retention.ms"] == -1


def test_segment_ms_and_flush_ms_come_from_their_synonyms() -> None:
    defaults = BrokerConfig({"log.roll.hours": "2", "log.roll.jitter.hours": "1"})
    assert defaults.log_config_defaults()["segment.ms"] == 7_200_000
    assert defaults.log_config_defaults()["segment.jitter.ms"] == 3_600_000
    flush = BrokerConfig({"log.flush.scheduler.interval.ms": "3000"})
    assert flush.log_config_defaults()["flush.ms"] == 3000
    both = BrokerConfig({"log.flush.scheduler.interval.ms": "3000", "log.flush.interval.ms": "7"})
    assert both.log_config_defaults()["flush.ms"] == 7


def test_dynamic_layers_take_precedence_over_static() -> None:
    broker = BrokerConfig({"log.retention.bytes": "100"})
    cluster = broker.with_dynamic({"log.retention.bytes": "200"}, per_broker=False)
    assert cluster.get_int("log.retention.bytes") == 200
    node = cluster.with_dynamic({"log.retention.bytes": "300"}, per_broker=True)
    assert node.get_int("log.retention.bytes") == 300
    assert node.dynamic_default == {"log.retention.bytes": "200"}
    assert broker.get_int("log.retention.bytes") == 100  # immutable


def test_static_only_configs_cannot_change_dynamically() -> None:
    with pytest.raises(InvalidRequestError) as error:
        BrokerConfig().with_dynamic({"log.dirs": "/elsewhere"}, per_broker=True)
    assert error.value.message == "Cannot update these configs dynamically: Set(log.dirs)"
    assert error.value.error_name == "INVALID_REQUEST"


def test_a_bad_dynamic_value_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError) as error:
        BrokerConfig().with_dynamic({"log.segment.bytes": "1000"}, per_broker=False)
    assert error.value.message == (
        "Invalid value 1000 for configuration log.segment.bytes: Value must be at least 1048576"
    )


def test_the_quickstart_start_leaves_the_initial_rebalance_delay_at_kafkas_default() -> None:
    # Kafka 4.0.0's config/server.properties sets no group.initial.rebalance.delay.ms
    # (GroupCoordinatorConfig's default, 3000, applies); older releases' files set 0.
    from lethe_reference.server.defaults import QUICKSTART_PROPERTIES, broker_config

    assert "group.initial.rebalance.delay.ms" not in QUICKSTART_PROPERTIES
    assert broker_config().get_int("group.initial.rebalance.delay.ms") == 3000
    lowered = broker_config(overrides={"group.initial.rebalance.delay.ms": "0"})
    assert lowered.get_int("group.initial.rebalance.delay.ms") == 0
