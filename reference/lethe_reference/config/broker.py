"""The broker's configuration: static file, dynamic layers, and topic defaults.

Theory of operation
-------------------
A Kafka broker's effective config has four layers, highest priority first, and
DescribeConfigs reports which one a value came from:

1. dynamic per-broker configs (AlterConfigs on resource ``BROKER`` "<node id>");
2. dynamic cluster-wide defaults (resource ``BROKER`` "");
3. static configs: ``server.properties`` plus ``--override`` (``--config FILE``);
4. Kafka's defaults (:data:`~lethe_reference.config.broker_defs.BROKER_CONFIG_DEF`).

:class:`BrokerConfig` is an immutable value holding the raw strings of layers
1-3 and the parsed effective values; a dynamic change returns a new
:class:`BrokerConfig` (:meth:`BrokerConfig.with_dynamic`) that the broker swaps
in. Construction validates the static layer as ``KafkaConfig`` does (a bad value
is an :class:`~lethe_reference.config.errors.InvalidConfigError` and the broker
does not start); names it does not define are kept and ignored.

:meth:`BrokerConfig.log_config_defaults` is ``KafkaConfig.extractLogConfigMap``:
the broker-derived value of every topic config that has a broker synonym, which
is what a topic without an override uses. Time configs take the first synonym
that has a value: ``log.retention.ms``, else ``log.retention.minutes`` x 60000,
else ``log.retention.hours`` x 3600000 (a negative result means "no limit",
-1); ``log.roll.ms`` / ``log.roll.hours``; ``log.roll.jitter.ms`` /
``log.roll.jitter.hours``; ``log.flush.interval.ms`` /
``log.flush.scheduler.interval.ms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from lethe_reference.config.broker_defs import BROKER_CONFIG_DEF, DYNAMIC_BROKER_CONFIGS
from lethe_reference.config.errors import ConfigError, InvalidRequestError
from lethe_reference.config.extensions import hidden_broker_configs, hidden_topic_configs
from lethe_reference.config.properties import load_properties
from lethe_reference.config.topic import TOPIC_SYNONYMS
from lethe_reference.config.values import ConfigValue

__all__ = ["BrokerConfig", "check_dynamic_names"]


class BrokerConfig:
    """Immutable broker configuration; see the module docstring."""

    __slots__ = ("_dynamic_broker", "_dynamic_default", "_static", "_values")

    def __init__(
        self,
        static: Mapping[str, str] | None = None,
        *,
        dynamic_default: Mapping[str, str] | None = None,
        dynamic_broker: Mapping[str, str] | None = None,
    ) -> None:
        self._static = MappingProxyType(dict(static or {}))
        self._dynamic_default = MappingProxyType(dict(dynamic_default or {}))
        self._dynamic_broker = MappingProxyType(dict(dynamic_broker or {}))
        merged = {**self._static, **self._dynamic_default, **self._dynamic_broker}
        known = {k: v for k, v in merged.items() if k in BROKER_CONFIG_DEF}
        self._values = MappingProxyType(BROKER_CONFIG_DEF.parse(known))

    @classmethod
    def from_properties_file(
        cls, path: str | Path, overrides: Mapping[str, str] | None = None
    ) -> BrokerConfig:
        """``kafka-server-start.sh FILE [--override k=v ...]``."""
        static = load_properties(path)
        static.update(overrides or {})
        return cls(static)

    # -- raw layers (DescribeConfigs synonyms) ------------------------------------
    @property
    def static(self) -> Mapping[str, str]:
        return self._static

    @property
    def dynamic_default(self) -> Mapping[str, str]:
        return self._dynamic_default

    @property
    def dynamic_broker(self) -> Mapping[str, str]:
        return self._dynamic_broker

    # -- effective values ----------------------------------------------------------
    def value(self, name: str) -> ConfigValue:
        """The effective parsed value of a defined broker config."""
        return self._values[name]

    def values(self) -> Mapping[str, ConfigValue]:
        return self._values

    def get_int(self, name: str) -> int:
        value = self._values[name]
        assert isinstance(value, int) and not isinstance(value, bool), name
        return value

    def get_bool(self, name: str) -> bool:
        value = self._values[name]
        assert isinstance(value, bool), name
        return value

    def get_str(self, name: str) -> str | None:
        value = self._values[name]
        assert value is None or isinstance(value, str), name
        return value

    def get_list(self, name: str) -> tuple[str, ...]:
        value = self._values[name]
        assert isinstance(value, tuple), name
        return value

    @property
    def node_id(self) -> int:
        return self.get_int("node.id")

    @property
    def log_dirs(self) -> tuple[str, ...]:
        """``log.dirs`` if set, else ``log.dir``, split on commas."""
        text = self.get_str("log.dirs") or self.get_str("log.dir") or ""
        return tuple(part.strip() for part in text.split(",") if part.strip())

    # -- extensions (config/extensions.py) ----------------------------------------------
    @property
    def hidden_topic_configs(self) -> frozenset[str]:
        """Topic configs of the switched-off extensions: unknown names on this broker."""
        return hidden_topic_configs(self.get_bool)

    @property
    def hidden_broker_configs(self) -> frozenset[str]:
        """Broker configs of the switched-off extensions, their switches included."""
        return hidden_broker_configs(self.get_bool)

    def visible_topic_configs(self, overrides: Mapping[str, str]) -> dict[str, str]:
        """A topic's overrides without those of switched-off extensions (no effect)."""
        hidden = self.hidden_topic_configs
        return {name: value for name, value in overrides.items() if name not in hidden}

    # -- topic defaults --------------------------------------------------------------
    def log_config_defaults(self) -> dict[str, ConfigValue]:
        """``KafkaConfig.extractLogConfigMap``: topic name -> broker-derived value."""
        derived: dict[str, ConfigValue] = {}
        hidden = self.hidden_topic_configs  # a switched-off extension keeps its defaults
        for topic_name, synonyms in TOPIC_SYNONYMS.items():
            if topic_name in hidden:
                continue
            for synonym in synonyms:
                value = self._values[synonym.name]
                if value is None:
                    continue
                if synonym.factor != 1:
                    assert isinstance(value, int)
                    value *= synonym.factor
                derived[topic_name] = value
                break
        retention = derived["retention.ms"]
        assert isinstance(retention, int)
        derived["retention.ms"] = max(retention, -1)
        consumed = derived.get("retention.commitoffset.ms")  # KIP-68: -2 kept, as .ms allows it
        if isinstance(consumed, int) and consumed < -2:
            derived["retention.commitoffset.ms"] = -1
        return derived

    # -- dynamic changes ---------------------------------------------------------------
    def with_dynamic(self, configs: Mapping[str, str], *, per_broker: bool) -> BrokerConfig:
        """A copy whose per-broker (or cluster-default) dynamic layer is ``configs``.

        Raises :class:`InvalidRequestError`, as Kafka does (KAFKA-13609), when a
        name cannot change at runtime or a value does not parse.
        """
        check_dynamic_names(configs)
        try:
            for name, raw in configs.items():
                key = BROKER_CONFIG_DEF.get(name)
                if key is not None:
                    key.parse(raw)
            if per_broker:
                return BrokerConfig(
                    self._static, dynamic_default=self._dynamic_default, dynamic_broker=configs
                )
            return BrokerConfig(
                self._static, dynamic_default=configs, dynamic_broker=self._dynamic_broker
            )
        except ConfigError as error:
            raise InvalidRequestError(error.message) from error

    def __repr__(self) -> str:
        layers = f"static={len(self._static)}, dynamic_default={len(self._dynamic_default)}"
        return f"BrokerConfig({layers}, dynamic_broker={len(self._dynamic_broker)})"


def check_dynamic_names(configs: Mapping[str, object]) -> None:
    """Refuse defined names that cannot change at runtime; unknown names pass."""
    fixed = sorted(n for n in configs if n in BROKER_CONFIG_DEF and n not in DYNAMIC_BROKER_CONFIGS)
    if fixed:
        # Scala prints a Set as Set(a, b); Kafka's order is a hash order, lethe's sorted.
        raise InvalidRequestError(
            f"Cannot update these configs dynamically: Set({', '.join(fixed)})"
        )
