"""Broker settings a scenario relies on are data, checked against the target first.

A new user ran the kip107 gate against lethe's broker by address with
``log.retention.hours=24``, and it failed: scenarios silently assumed Kafka's
168 hours (issue #14). Now the runner reads the broker's settings with
DescribeConfigs: a scenario that checks Kafka's default is not applicable, naming
the setting; one that only relies on it gets Kafka's value on its topics.
Kafka 4.0's defaults (fixtures/broker-settings.json) are what the verified run
and Kafka's ServerLogConfigs say: 168 hours, 1 GiB segments, the cleaner on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from lethe_conformance.client import calls
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import load_scenario, run_scenarios
from lethe_conformance.scenarios.model import Scenario
from lethe_conformance.scenarios.settings import (
    Assessment,
    assess,
    kafka_settings,
    target_settings,
)
from lethe_conformance.targets.bootstrap import BootstrapTarget
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_formats.fixtures import fixtures_root

SCENARIOS = fixtures_root() / "scenarios"
GATES = load_scenario(SCENARIOS / "kip107" / "kip107-cleanup-policy-gates-delete-records.json")
GOLDEN = load_scenario(SCENARIOS / "kip107" / "kip107-golden-delete-records.json")
COMPACT = load_scenario(SCENARIOS / "kip534" / "kip534-compaction-on-any-broker.json")
#: topics t and u leave retention.ms unset (and hold no records: a scenario writing fixed
#: timestamps sets retention.ms -1, so no date of the run deletes them; scenarios/dates.py)
RELIANT_FILE = SCENARIOS / "kip694" / "kip694-delete-partitions-refusals.json"
RELIANT = load_scenario(RELIANT_FILE)
DAY_MS = "86400000"
WEEK_MS = "604800000"


@pytest.fixture(scope="module")
def day_broker() -> Iterator[BootstrapTarget]:
    """lethe's broker with log.retention.hours=24, reached by address as a user would."""
    with EmbeddedTarget(clock="wall", overrides={"log.retention.hours": "24"}) as broker:
        yield BootstrapTarget(broker.bootstrap)


def test_kafkas_defaults_are_data() -> None:
    known = kafka_settings()
    defaults = {d.config: d.default for d in known.topic_defaults}
    assert known.kafka_version == "4.0.0"
    assert defaults["retention.ms"] == WEEK_MS
    assert defaults["segment.bytes"] == str(1 << 30)
    assert {b.setting: b.default for b in known.broker_only} == {"log.cleaner.enable": "true"}


def test_the_targets_settings_are_read_with_describe_configs(
    day_broker: BootstrapTarget,
) -> None:
    values = target_settings(day_broker)
    assert values["log.retention.hours"] == "24"
    assert values["log.retention.ms"] is None
    assert target_settings(day_broker) is values  # read once per target


def test_a_scenario_checking_a_default_the_target_changed_is_not_applicable(
    day_broker: BootstrapTarget,
) -> None:
    (result,) = run_scenarios(day_broker, [GATES])
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "default retention.ms=604800000" in result.detail
    assert f"give {DAY_MS} (log.retention.hours=24)" in result.detail


def test_a_scenario_relying_on_a_default_gets_kafkas_value_on_its_topics(
    day_broker: BootstrapTarget,
) -> None:
    assessed = assess(RELIANT, target_settings(day_broker))
    assert assessed.not_applicable is None
    assert {s: dict(c) for s, c in assessed.per_topic.items()} == {
        "t": {"retention.ms": WEEK_MS},
        "u": {"retention.ms": WEEK_MS},
    }
    (result,) = run_scenarios(day_broker, [RELIANT], cleanup=False)
    assert result.outcome is Outcome.PASS, result.detail
    symbol = next(iter(assessed.per_topic))
    with day_broker.connect() as conn:
        listed = [t.name for t in calls.metadata(conn, None).topics]
        (name,) = [n for n in listed if n.startswith(f"lethe-{RELIANT.id}-{symbol}-")]
        configs = calls.describe_configs(conn, calls.RESOURCE_TOPIC, name, ["retention.ms"])
    assert configs.results[0].configs[0].value == WEEK_MS


def test_kafkas_own_defaults_change_nothing() -> None:
    with EmbeddedTarget(clock="wall") as broker:
        values = target_settings(broker)
    assert values["log.retention.hours"] == "168"
    for scenario in (GATES, GOLDEN, COMPACT, RELIANT):
        assert assess(scenario, values).not_applicable is None
        assert assess(scenario, values).per_topic == {}
    assert assess(RELIANT, {}).per_topic == {}  # a target that does not answer: unknown


def test_a_broker_only_setting_relied_on_and_the_scenarios_own_settings() -> None:
    values = {"log.cleaner.enable": "false"}
    assessed = assess(COMPACT, values)
    assert assessed.not_applicable is not None
    assert "log.cleaner.enable=true, the target has false" in assessed.not_applicable
    assert assess(GOLDEN, values).not_applicable is None  # no compacted topic
    # a setting the scenario's own broker sets is its choice, never compared
    data = json.loads(RELIANT_FILE.read_text())
    data["setup"]["broker_configs"] = {"log.retention.hours": "1"}
    own = Scenario.from_json(data, "own.json")
    hours = {"log.retention.ms": None, "log.retention.minutes": None, "log.retention.hours": "1"}
    assert assess(own, hours) == Assessment()
    assert assess(RELIANT, hours).per_topic == {
        "t": {"retention.ms": WEEK_MS},
        "u": {"retention.ms": WEEK_MS},
    }
