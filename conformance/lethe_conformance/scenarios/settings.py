"""Broker settings a scenario relies on, as data, checked against the target before it runs.

Theory of operation
-------------------
Scenarios are written against Apache Kafka 4.0's defaults. A broker run with other
settings (``log.retention.hours=24``) would fail scenarios that never meant to test
that setting: records six days old vanish at the first retention pass. So what a
scenario relies on is data (``fixtures/broker-settings.json``):

* ``topic_defaults``: a topic config a scenario's topic leaves unset takes Kafka's
  default, which the broker's settings give (``retention.ms`` from
  ``log.retention.ms``, else ``log.retention.minutes``, else ``log.retention.hours``);
* ``broker_only``: settings with no topic config (``log.cleaner.enable``), relied on
  by scenarios with a compacted topic, or by a step that checks them.

Before a scenario runs, the runner reads the target's broker settings once per
target (DescribeConfigs of the broker Metadata lists first; :func:`target_settings`)
and :func:`assess` the scenario:

==========================================  =========================================
the target's effective value differs for    the runner
==========================================  =========================================
a topic default the scenario only relies on sets Kafka's value on that topic at creation
                                            (:attr:`Assessment.per_topic`)
a topic default a step checks (describe_    NOT_APPLICABLE, naming the setting, Kafka's
configs expects it on a topic leaving it    value and the target's (it cannot be set
unset), or a broker_only setting relied on  per topic without changing what is checked)
==========================================  =========================================

A setting the scenario's own broker sets (``setup.broker_configs``) is the
scenario's choice, never compared. A setting the target does not list, or a
target that does not answer DescribeConfigs (Tansu closes the connection), is
taken as Kafka's: nothing is changed, and the scenarios that ask show the target's
answer themselves.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from lethe_formats.errors import FormatError
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_conformance.client import calls
from lethe_conformance.client.errors import ClientError
from lethe_conformance.scenarios.model import Scenario
from lethe_conformance.targets.base import Target

__all__ = ["Assessment", "KafkaSettings", "assess", "kafka_settings", "target_settings"]


@dataclass(frozen=True, slots=True)
class TopicDefault:
    """A topic config's Kafka default and the broker settings it comes from, in order."""

    config: str
    default: str
    #: (broker setting, scale into the topic config's unit; None: the value as it is)
    sources: tuple[tuple[str, int | None], ...]


@dataclass(frozen=True, slots=True)
class BrokerOnly:
    """A broker setting with no topic config; relied on by scenarios with a topic whose
    ``topic_config`` contains ``contains``, and by steps that check it."""

    setting: str
    default: str
    topic_config: str
    contains: str


@dataclass(frozen=True, slots=True)
class KafkaSettings:
    """``fixtures/broker-settings.json``: what the scenarios rely on."""

    kafka_version: str
    topic_defaults: tuple[TopicDefault, ...]
    broker_only: tuple[BrokerOnly, ...]

    def setting_names(self) -> list[str]:
        names = [s for d in self.topic_defaults for s, _ in d.sources]
        return names + [b.setting for b in self.broker_only]


@cache
def kafka_settings() -> KafkaSettings:
    data: Any = json.loads((fixtures_root() / "broker-settings.json").read_text(encoding="utf-8"))
    return KafkaSettings(
        kafka_version=str(data["kafka_version"]),
        topic_defaults=tuple(
            TopicDefault(
                name,
                str(entry["default"]),
                tuple((s["setting"], s.get("scale")) for s in entry["from"]),
            )
            for name, entry in data["topic_defaults"].items()
        ),
        broker_only=tuple(
            BrokerOnly(name, str(e["default"]), str(e["topic_config"]), str(e["contains"]))
            for name, e in data["broker_only"].items()
        ),
    )


@dataclass(frozen=True, slots=True)
class Assessment:
    """What :func:`assess` found: a reason to skip, or configs to set per topic."""

    not_applicable: str | None = None
    #: topic symbol -> configs set at creation so the topic behaves as on Kafka's defaults
    per_topic: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


_READ: weakref.WeakKeyDictionary[Any, dict[str, str | None]] = weakref.WeakKeyDictionary()


def target_settings(target: Target) -> dict[str, str | None]:
    """The target's broker settings the scenarios rely on (read once per target); empty
    when the target does not answer DescribeConfigs of its broker."""
    found = _READ.get(target)
    if found is None:
        found = _READ[target] = _read(target, kafka_settings().setting_names())
    return found


def _read(target: Target, names: list[str]) -> dict[str, str | None]:
    try:
        with target.connect() as conn:
            brokers = calls.metadata(conn, []).brokers
            if not brokers:
                return {}
            response = calls.describe_configs(
                conn, calls.RESOURCE_BROKER, str(brokers[0].node_id), names
            )
    except (ClientError, FormatError):
        return {}
    out: dict[str, str | None] = {}
    for result in response.results:
        if result.error_code == ErrorCode.NONE:
            out.update({c.name: c.value for c in result.configs})
    return out


def effective(default: TopicDefault, values: Mapping[str, str | None]) -> str | None:
    """The topic default the target's settings give (None: the target lists none)."""
    for setting, scale in default.sources:
        if setting not in values:
            return None  # not listed: unknown, never assumed different
        value = values[setting]
        if value is None:
            continue
        if scale is None:
            return value
        try:
            return str(int(Decimal(value) * scale))
        except (InvalidOperation, ValueError):
            return value
    return None


def assess(scenario: Scenario, values: Mapping[str, str | None]) -> Assessment:
    """The scenario against the target's settings ``values`` (module docstring)."""
    known = kafka_settings()
    own = set(scenario.broker_configs)
    per_topic: dict[str, dict[str, str]] = {}
    for default in known.topic_defaults:
        if own & {s for s, _ in default.sources}:
            continue  # the scenario's own broker sets it: its choice
        theirs = effective(default, values)
        if theirs is None or theirs == default.default:
            continue
        unset = [t.symbol for t in scenario.topics if default.config not in t.configs]
        if not unset:
            continue
        if _checks(scenario, default.config, unset):
            setting = _set_setting(default, values)
            return Assessment(
                f"checks Kafka {known.kafka_version}'s default {default.config}="
                f"{default.default}, but the target's broker settings give {theirs} "
                f"({setting}): it cannot be set per topic without changing what is checked"
            )
        for symbol in unset:
            per_topic.setdefault(symbol, {})[default.config] = default.default
    for broker in known.broker_only:
        theirs = values.get(broker.setting)
        if broker.setting in own or theirs is None or theirs == broker.default:
            continue
        if _relies_on(scenario, broker):
            return Assessment(
                f"relies on Kafka {known.kafka_version}'s default {broker.setting}="
                f"{broker.default}, the target has {theirs}; it has no topic config"
            )
    return Assessment(None, per_topic)


def _set_setting(default: TopicDefault, values: Mapping[str, str | None]) -> str:
    for setting, _ in default.sources:
        if values.get(setting) is not None:
            return f"{setting}={values[setting]}"
    return "its settings"


def _checks(scenario: Scenario, config: str, unset: list[str]) -> bool:
    """A describe_configs step expects ``config`` on a topic that leaves it unset."""
    for step in scenario.steps:
        data = step.data["until"] if step.op == "wait" else step.data
        if data.get("op", step.op) != "describe_configs" or data.get("topic") not in unset:
            continue
        if config in data.get("expect", {}).get("configs", {}):
            return True
    return False


def _relies_on(scenario: Scenario, broker: BrokerOnly) -> bool:
    if any(broker.contains in t.configs.get(broker.topic_config, "") for t in scenario.topics):
        return True
    return any(
        step.op == "describe_broker_configs"
        and broker.setting in step.data.get("expect", {}).get("configs", {})
        for step in scenario.steps
    )
