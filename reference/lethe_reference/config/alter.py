"""AlterConfigs, IncrementalAlterConfigs and topic config validation, as pure functions.

Theory of operation
-------------------
A resource's *dynamic* configs are a ``dict[str, str]`` of raw strings (what
Kafka keeps in its metadata log). The functions here take the current dict and a
request and return the new dict, or raise a
:class:`~lethe_reference.config.errors.ConfigError`; they change nothing, so
``validate_only`` is simply "do not store the result". The order of checks is
Kafka 4.0's (``ConfigAdminManager.preprocess`` on the broker, then
``ConfigurationControlManager`` and ``ControllerConfigurationValidator`` on the
controller):

1. request shape, ``INVALID_REQUEST``: a name given twice
   (``Error due to duplicate config keys``); a null value for any operation but
   DELETE (``Null value not supported for : a, b``);
2. operations, in request order (IncrementalAlterConfigs only):
   SET 0 stores the value as given, DELETE 1 drops the key, APPEND 2 / SUBTRACT 3
   edit a LIST config element-wise (starting from the config's *default* when
   the resource has no value; elements split on plain commas, appended only if
   absent, subtracted first occurrence first). APPEND/SUBTRACT on any other key
   is ``INVALID_CONFIG`` ``Can't APPEND to key <k> because its type is not LIST.``;
3. validation of the complete new set (:func:`validate_topic_configs`):
   ``Unknown topic config name: <k>``, then every value parsed and validated with
   the topic definitions on top of the broker-derived defaults (``Invalid value
   ...``), then the cross-config rules (compaction lags, KIP-68 consumed retention
   within ``retention.ms``, tiered storage).

Legacy AlterConfigs replaces the whole set: keys not in the request are deleted.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lethe_reference.config.broker import BrokerConfig
from lethe_reference.config.broker_defs import BROKER_CONFIG_DEF
from lethe_reference.config.definition import ConfigDef
from lethe_reference.config.errors import InvalidConfigError, InvalidRequestError, invalid_value
from lethe_reference.config.log_config import consumed_retention_key, resolve_consumed_retention
from lethe_reference.config.topic import TOPIC_CONFIG_DEF
from lethe_reference.config.values import ConfigType, ConfigValue

__all__ = [
    "AlterOp",
    "ConfigOp",
    "alter_broker_configs",
    "alter_topic_configs",
    "incremental_alter_broker_configs",
    "incremental_alter_topic_configs",
    "validate_topic_configs",
]


class AlterOp(enum.IntEnum):
    """``AlterConfigOp.OpType`` ids of IncrementalAlterConfigs."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigOp:
    """One ``AlterableConfig`` of an IncrementalAlterConfigs request."""

    name: str
    op: AlterOp | int
    value: str | None = None


# -- topics ------------------------------------------------------------------------------


def alter_topic_configs(
    current: Mapping[str, str],
    entries: Iterable[tuple[str, str | None]],
    broker: BrokerConfig | None = None,
) -> dict[str, str]:
    """Legacy AlterConfigs on a topic: the new overrides are exactly ``entries``."""
    new = _replacement(list(entries))
    validate_topic_configs(new, broker, existing=current)
    return new


def incremental_alter_topic_configs(
    current: Mapping[str, str],
    ops: Iterable[ConfigOp],
    broker: BrokerConfig | None = None,
) -> dict[str, str]:
    """IncrementalAlterConfigs on a topic: ``ops`` applied to ``current``."""
    ops = _checked_ops(list(ops))
    new = _apply_ops(current, ops, TOPIC_CONFIG_DEF, _topic_not_list)
    validate_topic_configs(new, broker, existing=current)
    return new


def validate_topic_configs(
    configs: Mapping[str, str | None],
    broker: BrokerConfig | None = None,
    *,
    existing: Mapping[str, str] | None = None,
) -> dict[str, ConfigValue]:
    """Accept or refuse a topic's complete override set (CreateTopics, alters).

    Returns the effective parsed values. ``existing`` is the set being replaced
    (it matters only when tiered storage is switched off).
    """
    broker = broker or BrokerConfig()
    nulls = [name for name, value in configs.items() if value is None]
    if nulls:
        raise InvalidConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    hidden = broker.hidden_topic_configs  # a switched-off extension's names are unknown
    for name in configs:
        if name not in TOPIC_CONFIG_DEF or name in hidden:
            raise InvalidConfigError(f"Unknown topic config name: {name}")
    values = TOPIC_CONFIG_DEF.parse({**broker.log_config_defaults(), **configs})
    resolve_consumed_retention(values, configs)
    _check_compaction_lags(values)
    _check_consumed_retention(values, consumed_retention_key(configs))
    _check_remote_storage(values, broker, existing or {})
    return values


def _check_compaction_lags(values: Mapping[str, ConfigValue]) -> None:
    low, high = values["min.compaction.lag.ms"], values["max.compaction.lag.ms"]
    assert isinstance(low, int) and isinstance(high, int)
    if low > high:
        raise InvalidConfigError(
            "conflict topic config setting min.compaction.lag.ms "
            f"({low}) > max.compaction.lag.ms ({high})"
        )


def _check_consumed_retention(values: Mapping[str, ConfigValue], key: str | None) -> None:
    """KIP-68 (catalog KIP68-CFG-3): ``retention.commitoffset.ms`` within ``retention.ms``,
    checked as Kafka checks ``local.retention.ms`` (-2 always passes; with an unlimited
    ``retention.ms`` every value does). The effective value is checked, whichever
    unit set it (KIP68-CFG-5), and the refusal names that unit and its value."""
    retention, consumed = values["retention.ms"], values["retention.commitoffset.ms"]
    assert isinstance(retention, int) and isinstance(consumed, int)
    if retention == -1 or consumed == -2:
        return
    name = key or "retention.commitoffset.ms"
    given = str(values[name]) if key else str(consumed)
    if consumed == -1:
        reason = f"Value must not be -1 as retention.ms value is set as {retention}"
        raise invalid_value(name, given, reason)
    if consumed > retention:
        reason = f"Value must not be more than retention.ms property value: {retention}"
        raise invalid_value(name, given, reason)


def _check_remote_storage(
    values: Mapping[str, ConfigValue], broker: BrokerConfig, existing: Mapping[str, str]
) -> None:
    """Tiered storage rules; the reference broker has no remote tier to enable."""
    if values["remote.storage.enable"]:
        if not broker.get_bool("remote.log.storage.system.enable"):
            raise InvalidConfigError(
                "Tiered Storage functionality is disabled in the broker. "
                "Topic cannot be configured with remote log storage."
            )
        policy = values["cleanup.policy"]
        assert isinstance(policy, tuple)
        if any("compact" in p.lower() for p in policy):  # Kafka: policy.toString().contains
            raise InvalidConfigError("Remote log storage is unsupported for the compacted topics")
        return
    was_enabled = existing.get("remote.storage.enable", "false").lower() == "true"
    if was_enabled and not values["remote.log.delete.on.disable"]:
        raise InvalidConfigError(
            "It is invalid to disable remote storage without deleting remote data. "
            "If you want to keep the remote data and turn to read only, please set "
            "`remote.storage.enable=true,remote.log.copy.disable=true`. "
            "If you want to disable remote storage and delete all remote data, please set "
            "`remote.storage.enable=false,remote.log.delete.on.disable=true`."
        )


def _topic_not_list(name: str, op: AlterOp) -> InvalidConfigError:
    return InvalidConfigError(f"Can't {op.name} to key {name} because its type is not LIST.")


# -- brokers -----------------------------------------------------------------------------


def alter_broker_configs(
    broker: BrokerConfig, entries: Iterable[tuple[str, str | None]], *, per_broker: bool
) -> BrokerConfig:
    """Legacy AlterConfigs on BROKER "<id>" (``per_broker``) or "" (cluster default)."""
    new = _replacement(list(entries))
    return broker.with_dynamic(new, per_broker=per_broker)


def incremental_alter_broker_configs(
    broker: BrokerConfig, ops: Iterable[ConfigOp], *, per_broker: bool
) -> BrokerConfig:
    """IncrementalAlterConfigs on a BROKER resource; returns the new broker config."""
    ops = _checked_ops(list(ops))
    current = broker.dynamic_broker if per_broker else broker.dynamic_default
    new = _apply_ops(current, ops, BROKER_CONFIG_DEF, _broker_not_list)
    return broker.with_dynamic(new, per_broker=per_broker)


def _broker_not_list(name: str, op: AlterOp) -> InvalidConfigError:
    if name not in BROKER_CONFIG_DEF:
        return InvalidConfigError(f"Unknown config name: {name}")
    verb = "append" if op is AlterOp.APPEND else "subtract"
    return InvalidConfigError(f"Config value {verb} is not allowed for config key: {name}")


# -- shared steps ------------------------------------------------------------------------


def _replacement(entries: list[tuple[str, str | None]]) -> dict[str, str]:
    _check_duplicates([name for name, _ in entries])
    nulls = [name for name, value in entries if value is None]
    if nulls:
        raise InvalidRequestError("Null value not supported for : " + ", ".join(nulls))
    return {name: value for name, value in entries if value is not None}


def _checked_ops(ops: list[ConfigOp]) -> list[ConfigOp]:
    _check_duplicates([op.name for op in ops])
    for op in ops:
        if op.op not in AlterOp._value2member_map_:
            raise InvalidRequestError(f"Unknown operations type {int(op.op)}")
    nulls = [op.name for op in ops if op.op != AlterOp.DELETE and op.value is None]
    if nulls:
        raise InvalidRequestError("Null value not supported for : " + ", ".join(nulls))
    return ops


def _check_duplicates(names: list[str]) -> None:
    if len(set(names)) != len(names):
        raise InvalidRequestError("Error due to duplicate config keys")


def _apply_ops(
    current: Mapping[str, str],
    ops: list[ConfigOp],
    definitions: ConfigDef,
    not_list: Callable[[str, AlterOp], InvalidConfigError],
) -> dict[str, str]:
    new = dict(current)
    for config in ops:
        op = AlterOp(config.op)
        if op is AlterOp.SET:
            assert config.value is not None
            new[config.name] = config.value
        elif op is AlterOp.DELETE:
            new.pop(config.name, None)
        else:
            key = definitions.get(config.name)
            if key is None or key.type is not ConfigType.LIST:
                raise not_list(config.name, op)
            start = new.get(config.name, key.default_string())
            new[config.name] = _edit_list(start, config.value or "", op)
    return new


def _edit_list(start: str | None, operand: str, op: AlterOp) -> str:
    """``ConfigurationControlManager`` list editing on raw comma-joined strings."""
    parts = [part for part in _java_split(start or "") if part]
    for element in _java_split(operand):
        if op is AlterOp.APPEND and element not in parts:
            parts.append(element)
        elif op is AlterOp.SUBTRACT and element in parts:
            parts.remove(element)
    return ",".join(parts)


def _java_split(text: str) -> list[str]:
    """``String.split(",")``: trailing empty strings dropped; no comma gives [text]."""
    if "," not in text:
        return [text]
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts
