"""Config definitions: one :class:`ConfigKey` per name, grouped in a :class:`ConfigDef`.

Theory of operation
-------------------
This is Kafka's ``ConfigDef`` reduced to what the broker needs: a key has a name,
a :class:`~lethe_reference.config.values.ConfigType`, a default (already parsed;
``None`` for "no value", :data:`NO_DEFAULT` for "required") and an optional
validator. :meth:`ConfigDef.parse` turns a mapping of raw values (strings from a
properties file or a request, or values another config already parsed) into
parsed values for *every* key, in definition order:

1. a value given for the key is parsed with ``parse_value``; otherwise the
   default is used (a missing required key is an error);
2. the key's validator runs on the result, default or not.

Definition order matters because Kafka stops at the first bad value: with two
bad values in one request, the one defined first is reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from lethe_reference.config.errors import InvalidConfigError
from lethe_reference.config.validators import Validator
from lethe_reference.config.values import ConfigType, ConfigValue, parse_value, to_config_string

__all__ = ["NO_DEFAULT", "ConfigDef", "ConfigKey"]


class _NoDefault:
    """Marker type of :data:`NO_DEFAULT`."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One config: name, type, parsed default and validator."""

    name: str
    type: ConfigType
    default: ConfigValue | _NoDefault = None
    validator: Validator | None = None

    @property
    def sensitive(self) -> bool:
        """Passwords are never echoed (``KafkaConfig.maybeSensitive``)."""
        return self.type is ConfigType.PASSWORD

    @property
    def has_default(self) -> bool:
        return not isinstance(self.default, _NoDefault)

    def default_string(self) -> str | None:
        """The default as DescribeConfigs prints it; None without a default."""
        if isinstance(self.default, _NoDefault):
            return None
        return to_config_string(self.default)

    def parse(self, raw: object) -> ConfigValue:
        """Parse and validate one given value."""
        value = parse_value(self.name, raw, self.type)
        self.validate(value)
        return value

    def validate(self, value: ConfigValue) -> None:
        if self.validator is not None:
            self.validator(self.name, value)


class ConfigDef:
    """An ordered set of :class:`ConfigKey`; see the module docstring."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[ConfigKey]) -> None:
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            if key.name in self._keys:
                raise ValueError(f"Configuration {key.name} is defined twice.")
            self._keys[key.name] = key

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __iter__(self) -> Iterator[ConfigKey]:
        return iter(self._keys.values())

    def __len__(self) -> int:
        return len(self._keys)

    def names(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def key(self, name: str) -> ConfigKey:
        return self._keys[name]

    def get(self, name: str) -> ConfigKey | None:
        return self._keys.get(name)

    def parse(self, raw: Mapping[str, object]) -> dict[str, ConfigValue]:
        """Parsed values of every key (given or default), validated in order."""
        parsed: dict[str, ConfigValue] = {}
        for key in self._keys.values():
            if key.name in raw:
                parsed[key.name] = key.parse(raw[key.name])
            elif isinstance(key.default, _NoDefault):
                raise InvalidConfigError(
                    f'Missing required configuration "{key.name}" which has no default value.'
                )
            else:
                key.validate(key.default)
                parsed[key.name] = key.default
        return parsed

    def defaults(self) -> dict[str, ConfigValue]:
        """Keys that have a non-null default, with that default."""
        return {
            k.name: k.default
            for k in self._keys.values()
            if k.default is not None and not isinstance(k.default, _NoDefault)
        }
