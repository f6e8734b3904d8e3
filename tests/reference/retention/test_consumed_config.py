"""KIP-68's configs: names, defaults, broker synonyms, DescribeConfigs, and the check against
retention.ms (catalog KIP68-CFG-1/2/3, KIP68-DISC-1/3), on a broker with the extension switched
on (``lethe.kip68.enable``; off, it is invisible: test_config_extension_switches.py)."""

from __future__ import annotations

import pytest
from lethe_reference.config import (
    AlterOp,
    BrokerConfig,
    ConfigOp,
    InvalidConfigError,
    alter_topic_configs,
    describe_broker_configs,
    describe_topic_configs,
    effective_log_config,
    incremental_alter_topic_configs,
    validate_topic_configs,
)
from lethe_reference.config.broker_defs import DYNAMIC_BROKER_CONFIGS
from lethe_reference.config.topic import DESCRIBE_ORDER

ENABLE, MS = "retention.commitoffset.enable", "retention.commitoffset.ms"
HOUR = 3_600_000
SWITCH = {"lethe.kip68.enable": "true"}
ON = BrokerConfig(SWITCH)


def test_defaults_are_off_and_as_retention_ms() -> None:
    config = effective_log_config({})
    assert (config.retention_commitoffset_enable, config.retention_commitoffset_ms) == (False, -2)


def test_describe_configs_lists_both_after_kafkas_own_while_disabled() -> None:
    entries = describe_topic_configs({}, ON)
    names = [e.name for e in entries]
    assert names[: len(DESCRIBE_ORDER)] == list(DESCRIBE_ORDER)
    assert {e.name: e.value for e in entries if e.name in (ENABLE, MS)} == {
        ENABLE: "false",
        MS: "-2",
    }


@pytest.mark.parametrize(
    ("static", "expected"),
    [
        ({"log.retention.commitoffset.ms": "5000"}, 5000),
        ({"log.retention.commitoffset.minutes": "2"}, 120_000),
        ({"log.retention.commitoffset.hours": "3"}, 3 * HOUR),
        (
            {"log.retention.commitoffset.hours": "3", "log.retention.commitoffset.ms": "7"},
            7,
        ),  # ms wins, as log.retention.ms does
        ({"log.retention.commitoffset.hours": "-1"}, -1),  # negative: no limit
        ({"log.retention.commitoffset.ms": "-2"}, -2),
    ],
)
def test_broker_defaults_resolve_as_log_retention_does(
    static: dict[str, str], expected: int
) -> None:
    broker = BrokerConfig(SWITCH | static)
    assert effective_log_config({}, broker).retention_commitoffset_ms == expected


def test_the_broker_default_enables_topics_without_an_override() -> None:
    broker = BrokerConfig(SWITCH | {"log.retention.commitoffset.enable": "true"})
    assert effective_log_config({}, broker).retention_commitoffset_enable is True
    assert effective_log_config({ENABLE: "false"}, broker).retention_commitoffset_enable is False


def test_the_broker_lists_its_four_configs_and_may_change_the_first_synonyms() -> None:
    names = [
        "log.retention.commitoffset.enable",
        "log.retention.commitoffset.ms",
        "log.retention.commitoffset.minutes",
        "log.retention.commitoffset.hours",
    ]
    entries = {e.name: e for e in describe_broker_configs(ON, keys=names)}
    assert {n: entries[n].value for n in names} == dict(
        zip(names, ["false", None, None, None], strict=True)
    )
    assert {n for n in names if n in DYNAMIC_BROKER_CONFIGS} == set(names[:2])


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({MS: "604800001"}, "must not be more than retention.ms property value: 604800000"),
        ({MS: "-1"}, "must not be -1 as retention.ms value is set as 604800000"),
        ({MS: "-3"}, "Value must be at least -2"),
        ({"retention.ms": "1000", MS: "1001"}, "must not be more than"),
        ({ENABLE: "yes"}, "Expected value to be either true or false"),
    ],
)
def test_invalid_values_are_invalid_config(configs: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message) as caught:
        validate_topic_configs(configs, ON)
    assert caught.value.error_name == "INVALID_CONFIG"


@pytest.mark.parametrize(
    "configs",
    [
        {MS: "604800000"},  # equal is fine
        {MS: "0"},
        {MS: "-2"},
        {"retention.ms": "-1", MS: "-1"},
        {"retention.ms": "-1", MS: "99999999999"},  # unlimited retention.ms bounds nothing
        {ENABLE: "true"},
    ],
)
def test_valid_values_are_accepted(configs: dict[str, str]) -> None:
    validate_topic_configs(configs, ON)


def test_lowering_retention_ms_below_the_consumed_limit_is_refused() -> None:
    current = {MS: str(HOUR)}
    with pytest.raises(InvalidConfigError, match="must not be more than"):
        incremental_alter_topic_configs(
            current, [ConfigOp("retention.ms", AlterOp.SET, "1000")], ON
        )
    with pytest.raises(InvalidConfigError, match="must not be more than"):
        alter_topic_configs(current, [(MS, str(HOUR)), ("retention.ms", "1000")], ON)
    assert incremental_alter_topic_configs(current, [ConfigOp(MS, AlterOp.DELETE)], ON) == {}


def test_a_broker_retention_ms_counts_in_the_check() -> None:
    broker = BrokerConfig(SWITCH | {"log.retention.ms": "1000"})
    with pytest.raises(InvalidConfigError, match="property value: 1000"):
        validate_topic_configs({MS: "1001"}, broker)


# -- KIP68-CFG-4/5: topic-level .minutes and .hours, precedence as log.retention.* --

MINUTES, HOURS = "retention.commitoffset.minutes", "retention.commitoffset.hours"


@pytest.mark.parametrize(
    ("overrides", "broker", "expected"),
    [
        ({HOURS: "2"}, {}, 2 * HOUR),
        ({MINUTES: "90"}, {}, 90 * 60_000),
        ({MINUTES: "90", HOURS: "2"}, {}, 90 * 60_000),  # minutes over hours
        ({MS: "5000", MINUTES: "90", HOURS: "2"}, {}, 5000),  # ms over both
        ({MS: "-2", HOURS: "2"}, {}, -2),  # an explicit .ms wins, even its -2
        ({HOURS: "-1", "retention.ms": "-1"}, {}, -1),  # negative: no limit, as log.retention.*
        ({MINUTES: "-5", "retention.ms": "-1"}, {}, -1),
        ({HOURS: "1"}, {"log.retention.commitoffset.ms": "5000"}, HOUR),  # topic over broker
        ({}, {"log.retention.commitoffset.minutes": "3"}, 180_000),
    ],
)
def test_topic_units_combine_as_kafkas_retention_units(
    overrides: dict[str, str], broker: dict[str, str], expected: int
) -> None:
    config = effective_log_config(overrides, BrokerConfig(SWITCH | broker))
    assert config.retention_commitoffset_ms == expected
    assert validate_topic_configs(overrides, BrokerConfig(SWITCH | broker))[MS] == expected


def test_topic_units_have_no_default_and_are_listed_as_null() -> None:
    config = effective_log_config({})
    assert (config.retention_commitoffset_minutes, config.retention_commitoffset_hours) == (
        None,
        None,
    )


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({HOURS: "169"}, "Invalid value 169 for configuration retention.commitoffset.hours"),
        ({MINUTES: "10081"}, "Invalid value 10081 for configuration retention.commitoffset.min"),
        ({"retention.ms": "3600000", MINUTES: "61"}, "property value: 3600000"),
        ({HOURS: "-1"}, "Invalid value -1 for configuration retention.commitoffset.hours"),
        (
            {HOURS: "two"},
            "two for configuration retention.commitoffset.hours: Not a number of type INT",
        ),
    ],
)
def test_a_unit_above_retention_ms_is_refused_naming_that_unit(
    configs: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidConfigError, match=message) as caught:
        validate_topic_configs(configs, ON)
    assert caught.value.error_name == "INVALID_CONFIG"


def test_a_unit_within_retention_ms_is_accepted() -> None:
    assert validate_topic_configs({HOURS: "168"}, ON)[MS] == 168 * HOUR
    assert validate_topic_configs({"retention.ms": "-1", HOURS: "100000"}, ON)[MS] == 100000 * HOUR
