"""DescribeConfigs semantics: values, sources and synonyms as Kafka 4.0 reports them.

Theory of operation
-------------------
For a topic, Kafka (``ConfigHelper.createTopicConfigEntry``) reports every topic
config in :data:`~lethe_reference.config.topic.DESCRIBE_ORDER` (then lethe's
extension configs, ``EXTENSION_TOPIC_CONFIGS``) with:

* ``value``: the effective parsed value printed back (``convertToString``), so
  an override ``" 1 "`` of an INT reads ``1`` and a list reads ``a,b``;
* ``synonyms``: the topic override first (``TOPIC_CONFIG``, value as printed
  above), then the broker synonyms found in the dynamic per-broker, dynamic
  default, static and default layers, layer by layer and, within a layer, in
  synonym order (``log.retention.ms``, ``.minutes``, ``.hours``). Broker values
  are the raw strings of their layer. Kafka then drops every leading synonym
  whose name is not the *first* broker synonym (``dropWhile``), so when only
  ``log.retention.hours`` is set, ``retention.ms`` lists no broker synonym at
  all and reports ``DEFAULT_CONFIG``, though its value does come from the
  hours (visible in the golden frames: ``retention.ms``, ``segment.ms``,
  ``segment.jitter.ms`` and ``flush.ms`` have empty synonym lists);
* ``config_source``: the source of the first synonym, ``DEFAULT_CONFIG`` if none;
* ``read_only`` false, ``is_sensitive`` false; synonyms are sent only when the
  request asks for them (the source is computed either way).

Sources are numbered as ``DescribeConfigsResponse.ConfigSource``
(:class:`ConfigSource`). Broker resources (:func:`describe_broker_configs`)
follow ``createBrokerConfigEntry``: ``read_only`` unless dynamically
changeable, names without a definition are treated as sensitive (value null),
and the cluster-default resource ("" name) lists only dynamic defaults.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from itertools import dropwhile

from lethe_reference.config.broker import BrokerConfig
from lethe_reference.config.broker_defs import (
    BROKER_CONFIG_DEF,
    DYNAMIC_BROKER_CONFIGS,
    INTERNAL_BROKER_CONFIGS,
)
from lethe_reference.config.log_config import effective_topic_values
from lethe_reference.config.topic import (
    DESCRIBE_ORDER,
    EXTENSION_TOPIC_CONFIGS,
    TOPIC_CONFIG_DEF,
    TOPIC_SYNONYMS,
)
from lethe_reference.config.values import ConfigType, to_config_string

__all__ = [
    "ConfigEntry",
    "ConfigSource",
    "ConfigSynonym",
    "broker_synonyms",
    "describe_broker_configs",
    "describe_topic_configs",
]


class ConfigSource(enum.IntEnum):
    """``DescribeConfigsResponse.ConfigSource`` ids."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One ``DescribeConfigsResourceResult``."""

    name: str
    value: str | None
    read_only: bool
    source: ConfigSource
    sensitive: bool
    synonyms: tuple[ConfigSynonym, ...]
    config_type: ConfigType


# DynamicBrokerConfig.brokerConfigSynonyms: names that stand for one another.
_GROUPS: dict[str, tuple[str, ...]] = {
    member.name: tuple(s.name for s in synonyms)
    for synonyms in TOPIC_SYNONYMS.values()
    if len(synonyms) > 1
    for member in synonyms
}
_DEFAULT_STRINGS: dict[str, str] = {
    key.name: text for key in BROKER_CONFIG_DEF if (text := key.default_string()) is not None
}


def broker_synonyms(name: str, broker: BrokerConfig, sensitive: bool) -> list[ConfigSynonym]:
    """``ConfigHelper.configSynonyms(name, brokerConfigSynonyms(name))``."""
    names = _GROUPS.get(name, (name,))
    layers: list[tuple[ConfigSource, Mapping[str, str]]] = [
        (ConfigSource.DYNAMIC_BROKER_CONFIG, broker.dynamic_broker),
        (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, broker.dynamic_default),
        (ConfigSource.STATIC_BROKER_CONFIG, broker.static),
        (ConfigSource.DEFAULT_CONFIG, _DEFAULT_STRINGS),
    ]
    found = [
        ConfigSynonym(n, None if sensitive else layer[n], source)
        for source, layer in layers
        for n in names
        if n in layer
    ]
    return list(dropwhile(lambda s: s.name != name, found))


def describe_topic_configs(
    overrides: Mapping[str, str],
    broker: BrokerConfig | None = None,
    *,
    include_synonyms: bool = False,
    keys: Collection[str] | None = None,
) -> list[ConfigEntry]:
    """Entries of a topic with these overrides; ``keys`` filters (None/empty: all)."""
    broker = broker or BrokerConfig()
    hidden = broker.hidden_topic_configs
    overrides = broker.visible_topic_configs(overrides)
    values = effective_topic_values(overrides, broker)
    entries = []
    for name in DESCRIBE_ORDER + EXTENSION_TOPIC_CONFIGS:
        if (keys and name not in keys) or name in hidden:
            continue
        value = to_config_string(values[name])
        synonyms: list[ConfigSynonym] = []
        if name in overrides:
            synonyms.append(ConfigSynonym(name, value, ConfigSource.TOPIC_CONFIG))
        if name in TOPIC_SYNONYMS:
            synonyms += broker_synonyms(TOPIC_SYNONYMS[name][0].name, broker, False)
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        entries.append(
            ConfigEntry(
                name=name,
                value=value,
                read_only=False,
                source=source,
                sensitive=False,
                synonyms=tuple(synonyms) if include_synonyms else (),
                config_type=TOPIC_CONFIG_DEF.key(name).type,
            )
        )
    return entries


def describe_broker_configs(
    broker: BrokerConfig,
    *,
    per_broker: bool = True,
    include_synonyms: bool = False,
    keys: Collection[str] | None = None,
) -> list[ConfigEntry]:
    """Entries of resource BROKER "<node id>" (``per_broker``) or "" (defaults).

    Order: defined configs in definition order, then other names sorted (Kafka
    uses a hash order here). Internal configs (``INTERNAL_BROKER_CONFIGS``) are
    listed only when set, as Kafka lists ``originals`` plus ``nonInternalValues``.
    """
    hidden = broker.hidden_broker_configs  # unknown names while their extension is off
    defined = [n for n in BROKER_CONFIG_DEF.names() if n not in hidden]
    if per_broker:
        raw = {**broker.static, **broker.dynamic_default, **broker.dynamic_broker}
        names = [n for n in defined if n not in INTERNAL_BROKER_CONFIGS or n in raw]
    else:
        raw = dict(broker.dynamic_default)
        names = [n for n in defined if n in raw]
    names += sorted(set(raw) - set(defined))
    entries = []
    for name in names:
        if keys and name not in keys:
            continue
        known = name not in hidden
        entries.append(_broker_entry(broker, name, raw, per_broker, include_synonyms, known=known))
    return entries


def _broker_entry(
    broker: BrokerConfig,
    name: str,
    raw: Mapping[str, str],
    per_broker: bool,
    include_synonyms: bool,
    *,
    known: bool = True,
) -> ConfigEntry:
    key = BROKER_CONFIG_DEF.get(name) if known else None
    sensitive = key is None or key.sensitive
    if sensitive:
        value = None
    elif per_broker:
        value = to_config_string(broker.value(name))
    else:
        value = raw[name]
    synonyms = broker_synonyms(name, broker, sensitive)
    if not per_broker:
        synonyms = [s for s in synonyms if s.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
    return ConfigEntry(
        name=name,
        value=value,
        read_only=name not in DYNAMIC_BROKER_CONFIGS,
        source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
        sensitive=sensitive,
        synonyms=tuple(synonyms) if include_synonyms else (),
        config_type=ConfigType.UNKNOWN if key is None else key.type,
    )
