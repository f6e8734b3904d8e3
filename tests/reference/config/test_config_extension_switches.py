"""An extension switched off is invisible (issue 16 item 3; lethe_reference.config.extensions).

On a broker without the switches a stock client sees Kafka 4.0: no extension
config in DescribeConfigs (synonyms included, topic and broker), none in
CreateTopics' answer, no key 10694 in ApiVersions, and each extension topic
config refused as Kafka refuses an unknown name: INVALID_CONFIG with
``Unknown topic config name: <name>`` (``LogConfig.validateNames`` in
Kafka 4.0, the same in CreateTopics, AlterConfigs and IncrementalAlterConfigs).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.messages.alter_configs import (
    AlterableConfig,
    AlterConfigsRequest,
    AlterConfigsResource,
    AlterConfigsResponse,
)
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResponse,
)
from lethe_formats.protocol.messages.incremental_alter_configs import (
    IncrementalAlterableConfig,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResource,
    IncrementalAlterConfigsResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config.extensions import EXTENSIONS
from lethe_reference.config.topic import DESCRIBE_ORDER
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_reference.server.defaults import broker_config

TOPIC, BROKER = 2, 4
INVALID_CONFIG = 40
EXTENSION_TOPIC_NAMES = [name for ext in EXTENSIONS for name in ext.topic_configs]
EXTENSION_BROKER_NAMES = [n for ext in EXTENSIONS for n in (ext.switch, *ext.broker_configs)]
ALL_ON = {ext.switch: "true" for ext in EXTENSIONS}


def start(log_dir: Path, **static: str) -> Broker:
    broker = Broker(
        log_dir,
        config=broker_config(overrides=static),
        clock=ManualClock(1_800_000_000_000),
        durable=False,
    )
    broker.startup()
    return broker


def entries(broker: Broker, resource_type: int, name: str) -> tuple[list[str], list[str]]:
    """The config names and synonym names ``kafka-configs --describe --all`` sees."""
    resource = DescribeConfigsResource(resource_type, name, None)
    request = DescribeConfigsRequest((resource,), include_synonyms=True)
    (result,) = LoopbackClient(broker).call(request, DescribeConfigsResponse, 4).results
    assert result.error_code == 0
    return [c.name for c in result.configs], [s.name for c in result.configs for s in c.synonyms]


def described(broker: Broker, resource_type: int, name: str) -> list[str]:
    configs, synonyms = entries(broker, resource_type, name)
    return configs + synonyms


@pytest.fixture
def default_broker(tmp_path: Path) -> Broker:
    broker = start(tmp_path)
    broker.create_topic("t", 1)
    return broker


def test_describe_configs_of_a_topic_and_the_broker_name_nothing_of_them(
    default_broker: Broker,
) -> None:
    topic_configs, topic_synonyms = entries(default_broker, TOPIC, "t")
    assert topic_configs == list(DESCRIBE_ORDER)  # Kafka 4.0's 33, in its order
    topic_names = topic_configs + topic_synonyms
    broker_names = described(default_broker, BROKER, str(default_broker.node_id))
    listed = set(topic_names) | set(broker_names)
    assert not listed & {*EXTENSION_TOPIC_NAMES, *EXTENSION_BROKER_NAMES}


def test_api_versions_lacks_delete_partitions(default_broker: Broker) -> None:
    answer = LoopbackClient(default_broker).call(
        ApiVersionsRequest("t", "1"), ApiVersionsResponse, 3
    )
    assert 10694 not in {key.api_key for key in answer.api_keys}


@pytest.mark.parametrize("name", EXTENSION_TOPIC_NAMES)
def test_create_topics_refuses_the_name_as_kafka_refuses_an_unknown_one(
    default_broker: Broker, name: str
) -> None:
    topic = CreatableTopic("x", 1, 1, (), (CreatableTopicConfig(name, "true"),))
    answer = LoopbackClient(default_broker).call(
        CreateTopicsRequest((topic,)), CreateTopicsResponse, 7
    )
    (result,) = answer.topics
    assert (result.error_code, result.error_message) == (
        INVALID_CONFIG,
        f"Unknown topic config name: {name}",
    )
    assert default_broker.metadata.get("x") is None


@pytest.mark.parametrize("name", EXTENSION_TOPIC_NAMES)
def test_alter_configs_refuse_the_name_too(default_broker: Broker, name: str) -> None:
    client = LoopbackClient(default_broker)
    incremental = IncrementalAlterConfigsRequest(
        (IncrementalAlterConfigsResource(TOPIC, "t", (IncrementalAlterableConfig(name, 0, "1"),)),),
        False,
    )
    (result,) = client.call(incremental, IncrementalAlterConfigsResponse, 1).responses
    assert (result.error_code, result.error_message) == (
        INVALID_CONFIG,
        f"Unknown topic config name: {name}",
    )
    legacy = AlterConfigsRequest((AlterConfigsResource(TOPIC, "t", (AlterableConfig(name, "1"),)),))
    (result,) = client.call(legacy, AlterConfigsResponse, 1).responses
    assert (result.error_code, result.error_message) == (
        INVALID_CONFIG,
        f"Unknown topic config name: {name}",
    )


def test_create_topics_answer_lists_kafkas_configs_only(default_broker: Broker) -> None:
    answer = LoopbackClient(default_broker).call(
        CreateTopicsRequest((CreatableTopic("y", 1, 1, (), ()),)), CreateTopicsResponse, 7
    )
    (result,) = answer.topics
    assert result.error_code == 0 and result.configs is not None
    assert sorted(c.name for c in result.configs) == sorted(DESCRIBE_ORDER)


def test_switched_on_each_extension_shows_its_configs(tmp_path: Path) -> None:
    broker = start(tmp_path, **ALL_ON)
    broker.create_topic("t", 1)
    topic_names = set(described(broker, TOPIC, "t"))
    assert set(EXTENSION_TOPIC_NAMES) <= topic_names
    broker_names = set(described(broker, BROKER, str(broker.node_id)))
    assert {ext.switch for ext in EXTENSIONS} <= broker_names
    answer = LoopbackClient(broker).call(ApiVersionsRequest("t", "1"), ApiVersionsResponse, 3)
    assert 10694 in {key.api_key for key in answer.api_keys}


def test_an_override_kept_from_a_switched_on_run_has_no_effect_once_off(tmp_path: Path) -> None:
    broker = start(tmp_path, **ALL_ON)
    broker.create_topic(
        "kept",
        1,
        {"cleanup.policy": "compact", "tombstone.flag.enable": "true"},
    )
    assert broker.log_config("kept").tombstone_flag_enable is True
    broker.shutdown()
    broker = start(tmp_path, **{"log.tombstone.flag.enable": "true"})
    assert broker.log_config("kept").tombstone_flag_enable is False
    assert "tombstone.flag.enable" not in described(broker, TOPIC, "kept")
    broker.shutdown()
