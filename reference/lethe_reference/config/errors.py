"""Typed configuration errors, worded as Kafka words them.

Theory of operation
-------------------
Kafka reports a bad configuration in two ways, and clients show the message
verbatim, so lethe keeps both the kind and the wording:

* ``ConfigException`` / ``InvalidConfigurationException`` become the error
  ``INVALID_CONFIG`` (code 40). A bad value reads
  ``Invalid value <value> for configuration <name>: <reason>``
  (``org.apache.kafka.common.config.ConfigException``); an unknown topic config
  reads ``Unknown topic config name: <name>``.
* A malformed request (duplicate keys, null values where a value is needed)
  becomes ``INVALID_REQUEST`` (code 42).

Each class names its Kafka error in ``error_name``; the protocol error-code
table is the one place that turns names into numeric codes.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["ConfigError", "InvalidConfigError", "InvalidRequestError", "invalid_value"]


class ConfigError(Exception):
    """Base of configuration errors; ``message`` is what the client is shown."""

    error_name: ClassVar[str] = "INVALID_CONFIG"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidConfigError(ConfigError):
    """A config name or value Kafka rejects: ``INVALID_CONFIG`` (40)."""

    error_name: ClassVar[str] = "INVALID_CONFIG"


class InvalidRequestError(ConfigError):
    """A malformed config request: ``INVALID_REQUEST`` (42)."""

    error_name: ClassVar[str] = "INVALID_REQUEST"


def invalid_value(name: str, value: str, reason: str | None = None) -> InvalidConfigError:
    """Kafka's ``ConfigException(name, value, message)`` wording.

    ``value`` is already rendered as Java's ``toString`` would render it
    (see :func:`lethe_reference.config.values.java_str`).
    """
    text = f"Invalid value {value} for configuration {name}"
    return InvalidConfigError(text if reason is None else f"{text}: {reason}")
