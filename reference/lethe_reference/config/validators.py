"""Config validators with Kafka's rules and Kafka's messages.

Theory of operation
-------------------
A validator is called with the config name and the *parsed* value (after
:func:`~lethe_reference.config.values.parse_value`) and raises
:class:`~lethe_reference.config.errors.InvalidConfigError` worded as the Kafka
validator it mirrors. Kafka runs the validator on defaults too, and a ``null``
reaching a range check is itself an error (``Value must be non-null``).

=====================  ==================================================  =======================
validator              Kafka source                                        message after ``: ``
=====================  ==================================================  =======================
``Range.at_least``     ``ConfigDef.Range.atLeast``                         Value must be at least N
``Range.between``      ``ConfigDef.Range.between``                         ... / Value must be no
                                                                           more than M
``ValidString``        ``ConfigDef.ValidString.in``                        String must be one of:
                                                                           a, b
``ValidList``          ``ConfigDef.ValidList.in`` (each element;            (as ValidString, naming
                       an empty list passes)                               the bad element)
``GzipLevel``          ``CompressionType.GZIP.levelValidator``             Value must be between 1
                                                                           and 9 or equal to -1
``ThrottledReplicas``  ``ThrottledReplicaListValidator``                   <name> must be the
                                                                           literal '*' or ...
=====================  ==================================================  =======================

Bounds print as Java prints the ``Number`` they were declared with: ``between(0,
1)`` for min.cleanable.dirty.ratio says ``no more than 1``, not ``1.0``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lethe_reference.config.errors import invalid_value
from lethe_reference.config.values import ConfigValue, java_str, java_trim

__all__ = ["GzipLevel", "Range", "ThrottledReplicas", "ValidList", "ValidString", "Validator"]

Validator = Callable[[str, ConfigValue], None]


@dataclass(frozen=True, slots=True)
class Range:
    """Inclusive numeric bounds; either may be absent."""

    low: int | float | None = None
    high: int | float | None = None

    @classmethod
    def at_least(cls, low: int | float) -> Range:
        return cls(low, None)

    @classmethod
    def between(cls, low: int | float, high: int | float) -> Range:
        return cls(low, high)

    def __call__(self, name: str, value: ConfigValue) -> None:
        if value is None:
            raise invalid_value(name, "null", "Value must be non-null")
        assert isinstance(value, int | float) and not isinstance(value, bool)
        # Java compares as doubles; NaN passes both checks, as it does in Kafka.
        if self.low is not None and float(value) < float(self.low):
            raise invalid_value(name, java_str(value), f"Value must be at least {self.low}")
        if self.high is not None and float(value) > float(self.high):
            raise invalid_value(name, java_str(value), f"Value must be no more than {self.high}")


@dataclass(frozen=True, slots=True)
class ValidString:
    """The value must be one of ``options`` (case-sensitive)."""

    options: tuple[str, ...]

    def __call__(self, name: str, value: ConfigValue) -> None:
        if value not in self.options:
            reason = "String must be one of: " + ", ".join(self.options)
            raise invalid_value(name, java_str(value), reason)


@dataclass(frozen=True, slots=True)
class ValidList:
    """Every element must be one of ``options``; duplicates and ``[]`` pass."""

    options: tuple[str, ...]

    def __call__(self, name: str, value: ConfigValue) -> None:
        assert isinstance(value, tuple)
        check = ValidString(self.options)
        for element in value:
            check(name, element)


@dataclass(frozen=True, slots=True)
class GzipLevel:
    """gzip levels: 1..9, or -1 (``Deflater.DEFAULT_COMPRESSION``)."""

    def __call__(self, name: str, value: ConfigValue) -> None:
        assert isinstance(value, int)
        if value > 9 or (value < 1 and value != -1):
            reason = "Value must be between 1 and 9 or equal to -1"
            raise invalid_value(name, java_str(value), reason)


_REPLICA = re.compile(r"([0-9]+:[0-9]+)?")


@dataclass(frozen=True, slots=True)
class ThrottledReplicas:
    """``*`` or a list of ``partitionId:brokerId`` (empty elements allowed)."""

    def __call__(self, name: str, value: ConfigValue) -> None:
        assert isinstance(value, tuple)
        proposed = [java_trim(element) for element in value]
        if all(_REPLICA.fullmatch(e) for e in proposed) or "".join(proposed) == "*":
            return
        reason = (
            f"{name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
        )
        raise invalid_value(name, java_str(value), reason)
