"""DescribeConfigs of a topic reproduces what Kafka 4.0 answered in the golden frames.

The wire case's broker ran with the static settings in case.json (among them
``log.segment.bytes=1073741824`` and ``log.retention.hours=168`` from the shipped
server.properties); both described topics had no overrides.
"""

from __future__ import annotations

import pytest
from golden_describe_configs import (
    GoldenResponse,
    golden_broker_settings,
    golden_describe_configs_responses,
)
from lethe_reference.config import BrokerConfig, ConfigSource, describe_topic_configs
from lethe_reference.config.describe import ConfigEntry
from lethe_reference.config.topic import DESCRIBE_ORDER, EXTENSION_TOPIC_CONFIGS, TOPIC_CONFIG_DEF

RESPONSES = golden_describe_configs_responses()
TOPIC_RESOURCE = 2


def kafkas(entries: list[ConfigEntry]) -> list[ConfigEntry]:
    """The entries of Kafka's own configs: lethe lists its extension configs after them."""
    assert [e.name for e in entries if e.name in EXTENSION_TOPIC_CONFIGS] == [
        n for n in EXTENSION_TOPIC_CONFIGS if n in {e.name for e in entries}
    ]
    kept = [e for e in entries if e.name not in EXTENSION_TOPIC_CONFIGS]
    assert entries[: len(kept)] == kept  # extensions come last
    return kept


def _ids(response: GoldenResponse) -> str:
    return f"v{response.api_version}-{response.client.split()[0]}"


def test_the_capture_has_a_v1_and_a_v4_topic_description() -> None:
    assert sorted(r.api_version for r in RESPONSES) == [1, 4]
    for response in RESPONSES:
        (resource,) = response.resources
        assert (resource.error_code, resource.resource_type) == (0, TOPIC_RESOURCE)


@pytest.mark.parametrize("response", RESPONSES, ids=_ids)
def test_every_entry_matches_kafka_in_order(response: GoldenResponse) -> None:
    broker = BrokerConfig(golden_broker_settings())
    (resource,) = response.resources
    ours = kafkas(
        describe_topic_configs(
            {}, broker, include_synonyms=response.include_synonyms, keys=response.requested_keys
        )
    )
    expected = [(e.name, e.value, e.read_only, e.source, e.sensitive) for e in resource.entries]
    actual = [(e.name, e.value, e.read_only, int(e.source), e.sensitive) for e in ours]
    assert actual == expected


@pytest.mark.parametrize("response", RESPONSES, ids=_ids)
def test_synonyms_match_kafka(response: GoldenResponse) -> None:
    broker = BrokerConfig(golden_broker_settings())
    (resource,) = response.resources
    ours = kafkas(describe_topic_configs({}, broker, include_synonyms=response.include_synonyms))
    for theirs, mine in zip(resource.entries, ours, strict=True):
        assert [(s.name, s.value, int(s.source)) for s in mine.synonyms] == list(theirs.synonyms), (
            theirs.name
        )


def test_config_types_match_kafka_v4() -> None:
    (response,) = [r for r in RESPONSES if r.api_version >= 3]
    ours = {e.name: int(e.config_type) for e in kafkas(describe_topic_configs({}, BrokerConfig()))}
    assert {e.name: e.config_type for e in response.resources[0].entries} == ours


def test_describe_order_is_the_order_kafka_sent() -> None:
    for response in RESPONSES:
        assert tuple(e.name for e in response.resources[0].entries) == DESCRIBE_ORDER


def test_kafka_4_topic_configs_are_exactly_the_defined_ones() -> None:
    names = {e.name for r in RESPONSES for e in r.resources[0].entries}
    assert names == set(TOPIC_CONFIG_DEF.names()) - set(EXTENSION_TOPIC_CONFIGS)
    assert not names & set(EXTENSION_TOPIC_CONFIGS)
    assert "message.downconversion.enable" not in names
    assert "message.format.version" not in names


def test_static_log_segment_bytes_is_reported_with_its_default_synonym() -> None:
    (response,) = [r for r in RESPONSES if r.include_synonyms]
    entry = next(e for e in response.resources[0].entries if e.name == "segment.bytes")
    assert entry.source == ConfigSource.STATIC_BROKER_CONFIG
    assert entry.synonyms == (
        ("log.segment.bytes", "1073741824", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG),
    )


def test_without_static_settings_every_topic_config_is_a_default() -> None:
    entries = kafkas(describe_topic_configs({}, BrokerConfig()))
    assert {e.source for e in entries} == {ConfigSource.DEFAULT_CONFIG}
    golden = {e.name: e.value for e in RESPONSES[0].resources[0].entries}
    assert {e.name: e.value for e in entries} == golden
