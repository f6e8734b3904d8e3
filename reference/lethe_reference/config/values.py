"""Config value types: parsing and printing exactly as Kafka's ``ConfigDef`` does.

Theory of operation
-------------------
Kafka stores every config as a string (topic overrides in the metadata log,
broker configs in ``server.properties``) and parses it on use with
``ConfigDef.parseType``; DescribeConfigs prints the parsed value back with
``ConfigDef.convertToString``. Clients see both directions, so lethe copies their
rules instead of Python's:

==========  ==========================  ==================================
type        parse (after Java trim)     print
==========  ==========================  ==================================
BOOLEAN     ``true``/``false``, any case ``true`` / ``false``
STRING      the trimmed text            as is
INT/SHORT/  ``[+-]?[0-9]+`` in 32/16/   decimal
LONG        64-bit range
DOUBLE      ``Double.parseDouble``      ``Double.toString`` (``1.0``,
                                        ``1.0E-4``, ``1.7976931348623157E308``)
LIST        empty -> ``[]``, else split elements joined by ``,``
            on ``\\s*,\\s*`` (empty
            elements kept)
CLASS/      the trimmed text            as is
PASSWORD
==========  ==========================  ==================================

A value that fails to parse is ``Invalid value <raw> for configuration <name>:``
followed by ``Not a number of type INT`` (numbers) or ``Expected value to be
either true or false`` (booleans), with ``<raw>`` the text as given, untrimmed.

Parsed Python values: ``bool``, ``int``, ``float``, ``str`` and ``tuple[str, ...]``
for lists; ``None`` for a config with no value. :class:`ConfigType` numbers are the
``config_type`` ids of DescribeConfigs v3+.
"""

from __future__ import annotations

import enum
import math
import re
from decimal import Decimal

from lethe_reference.config.errors import InvalidConfigError, invalid_value

__all__ = [
    "ConfigType",
    "ConfigValue",
    "java_double_str",
    "java_str",
    "java_trim",
    "parse_value",
    "to_config_string",
]

ConfigValue = bool | int | float | str | tuple[str, ...] | None


class ConfigType(enum.IntEnum):
    """Config types, numbered as DescribeConfigsResponse.ConfigType."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


_INT_RANGE = {
    ConfigType.SHORT: (-(2**15), 2**15 - 1),
    ConfigType.INT: (-(2**31), 2**31 - 1),
    ConfigType.LONG: (-(2**63), 2**63 - 1),
}
_INTEGER = re.compile(r"[+-]?[0-9]+")
# Java's Double.parseDouble: decimal or hex significand, optional f/F/d/D suffix.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")
_HEX = re.compile(
    r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?"
)
_SPECIAL = {
    "NaN": math.nan,
    "+NaN": math.nan,
    "-NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
}
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")


def java_trim(text: str) -> str:
    """``String.trim()``: strip every char <= U+0020 (not Unicode whitespace)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def parse_value(name: str, value: object, kind: ConfigType) -> ConfigValue:
    """``ConfigDef.parseType``: a string is parsed, an already typed value kept."""
    if value is None:
        return None
    if isinstance(value, str):
        return _parse_text(name, value, kind)
    return _check_typed(name, value, kind)


def _parse_text(name: str, raw: str, kind: ConfigType) -> ConfigValue:
    text = java_trim(raw)
    if kind is ConfigType.BOOLEAN:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise invalid_value(name, raw, "Expected value to be either true or false")
    if kind in _INT_RANGE:
        low, high = _INT_RANGE[kind]
        if _INTEGER.fullmatch(text) and low <= int(text) <= high:
            return int(text)
        raise invalid_value(name, raw, f"Not a number of type {kind.name}")
    if kind is ConfigType.DOUBLE:
        number = _parse_double(text)
        if number is None:
            raise invalid_value(name, raw, "Not a number of type DOUBLE")
        return number
    if kind is ConfigType.LIST:
        return () if not text else tuple(_LIST_SEPARATOR.split(text))
    return text


def _parse_double(text: str) -> float | None:
    if text in _SPECIAL:
        return _SPECIAL[text]
    if _DECIMAL.fullmatch(text):
        body = text[:-1] if text[-1] in "fFdD" else text
        return float(body)
    match = _HEX.fullmatch(text)
    if match:
        number = float.fromhex("0x" + match.group(2))
        return -number if match.group(1) == "-" else number
    return None


def _check_typed(name: str, value: object, kind: ConfigType) -> ConfigValue:
    if kind is ConfigType.BOOLEAN and isinstance(value, bool):
        return value
    if kind in _INT_RANGE and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is ConfigType.DOUBLE and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is ConfigType.LIST and isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    expected = {
        ConfigType.BOOLEAN: "Expected value to be either true or false",
        ConfigType.LIST: "Expected a comma separated list.",
    }.get(kind, f"Expected value of type {kind.name}, but it was a {type(value).__name__}")
    raise InvalidConfigError(
        f"Invalid value {java_str(value)} for configuration {name}: {expected}"
    )


def java_double_str(number: float) -> str:
    """``Double.toString``: shortest digits, scientific outside [1e-3, 1e7)."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    if 1e-3 <= abs(number) < 1e7:
        text = repr(number)  # positional in this range; shortest round-trip digits
        return text if "." in text else text + ".0"
    sign = "-" if number < 0 else ""
    _, digits, exponent = Decimal(repr(abs(number))).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    scientific = len(digits) - 1 + exponent
    return f"{sign}{text[0]}.{text[1:] or '0'}E{scientific}"


def java_str(value: object) -> str:
    """Java's ``toString`` of a parsed value, as it appears inside messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def to_config_string(value: ConfigValue) -> str | None:
    """``ConfigDef.convertToString``: how DescribeConfigs prints a parsed value."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return ",".join(value)
    return java_str(value)
