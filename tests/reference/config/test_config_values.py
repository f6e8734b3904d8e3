"""Config values parse and print as Kafka's ConfigDef.parseType / convertToString do."""

from __future__ import annotations

import math

import pytest
from lethe_reference.config import ConfigType, InvalidConfigError
from lethe_reference.config.values import (
    java_double_str,
    java_str,
    java_trim,
    parse_value,
    to_config_string,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("FALSE", False), (" True ", True), ("tRuE", True)],
)
def test_booleans_are_case_insensitive_and_trimmed(raw: str, expected: bool) -> None:
    assert parse_value("preallocate", raw, ConfigType.BOOLEAN) is expected


@pytest.mark.parametrize("raw", ["yes", "1", "", "t"])
def test_other_boolean_text_is_refused_with_kafkas_message(raw: str) -> None:
    with pytest.raises(InvalidConfigError) as error:
        parse_value("preallocate", raw, ConfigType.BOOLEAN)
    assert error.value.message == (
        f"Invalid value {raw} for configuration preallocate: "
        "Expected value to be either true or false"
    )


@pytest.mark.parametrize(
    ("raw", "expected"), [("42", 42), ("+7", 7), ("-1", -1), (" 9 ", 9), ("007", 7)]
)
def test_integers_accept_a_sign_and_surrounding_whitespace(raw: str, expected: int) -> None:
    assert parse_value("segment.bytes", raw, ConfigType.INT) == expected


@pytest.mark.parametrize("raw", ["1e3", "1.0", "0x10", "1_000", "", "2147483648", "--1"])
def test_bad_int_is_not_a_number_of_type_int(raw: str) -> None:
    with pytest.raises(InvalidConfigError) as error:
        parse_value("segment.bytes", raw, ConfigType.INT)
    assert error.value.message == (
        f"Invalid value {raw} for configuration segment.bytes: Not a number of type INT"
    )


def test_int_range_is_32_bit_and_long_range_64_bit() -> None:
    assert parse_value("x", "2147483647", ConfigType.INT) == 2**31 - 1
    assert parse_value("x", "-2147483648", ConfigType.INT) == -(2**31)
    assert parse_value("x", "9223372036854775807", ConfigType.LONG) == 2**63 - 1
    with pytest.raises(InvalidConfigError, match="Not a number of type LONG"):
        parse_value("x", "9223372036854775808", ConfigType.LONG)
    with pytest.raises(InvalidConfigError, match="Not a number of type SHORT"):
        parse_value("x", "32768", ConfigType.SHORT)


def test_the_untrimmed_text_appears_in_the_message() -> None:
    with pytest.raises(InvalidConfigError) as error:
        parse_value("retention.ms", " abc ", ConfigType.LONG)
    assert error.value.message.startswith("Invalid value  abc  for configuration retention.ms:")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("0.5", 0.5), ("1", 1.0), (".5", 0.5), ("1.", 1.0), ("5e-1", 0.5), ("0.5d", 0.5),
     ("0.25F", 0.25), ("-0.0", -0.0), ("0x1.0p-1", 0.5), ("Infinity", math.inf)],
)  # fmt: skip
def test_doubles_follow_java_parse_double(raw: str, expected: float) -> None:
    assert parse_value("min.cleanable.dirty.ratio", raw, ConfigType.DOUBLE) == expected


def test_nan_parses_as_a_double() -> None:
    value = parse_value("min.cleanable.dirty.ratio", "NaN", ConfigType.DOUBLE)
    assert isinstance(value, float) and math.isnan(value)


@pytest.mark.parametrize("raw", ["inf", "nan", "1,5", "half", "1e", "0x1.0"])
def test_non_java_doubles_are_refused(raw: str) -> None:
    with pytest.raises(InvalidConfigError, match="Not a number of type DOUBLE"):
        parse_value("min.cleanable.dirty.ratio", raw, ConfigType.DOUBLE)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("delete", ("delete",)),
        ("compact,delete", ("compact", "delete")),
        (" compact ,  delete ", ("compact", "delete")),
        ("", ()),
        ("   ", ()),
        ("a,", ("a", "")),
        (",a", ("", "a")),
        ("a\t,\nb", ("a", "b")),
    ],
)
def test_lists_split_on_commas_with_whitespace(raw: str, expected: tuple[str, ...]) -> None:
    assert parse_value("cleanup.policy", raw, ConfigType.LIST) == expected


def test_strings_are_trimmed_java_style() -> None:
    assert parse_value("compression.type", "\t gzip \x00", ConfigType.STRING) == "gzip"
    assert java_trim("\u00a0x\u00a0") == "\u00a0x\u00a0"  # NBSP is above U+0020


def test_already_typed_values_pass_through() -> None:
    assert parse_value("x", 5, ConfigType.LONG) == 5
    assert parse_value("x", 1, ConfigType.DOUBLE) == 1.0
    assert parse_value("x", ["a", "b"], ConfigType.LIST) == ("a", "b")
    assert parse_value("x", None, ConfigType.INT) is None


@pytest.mark.parametrize(
    ("number", "text"),
    [(0.5, "0.5"), (1.0, "1.0"), (0.0, "0.0"), (-0.0, "-0.0"), (0.001, "0.001"),
     (1e-4, "1.0E-4"), (1.5e-5, "1.5E-5"), (9999999.0, "9999999.0"), (1e7, "1.0E7"),
     (12345678.9, "1.23456789E7"), (1.7976931348623157e308, "1.7976931348623157E308"),
     (-2.5e10, "-2.5E10"), (math.inf, "Infinity"), (-math.inf, "-Infinity"), (math.nan, "NaN")],
)  # fmt: skip
def test_doubles_print_as_java_double_to_string(number: float, text: str) -> None:
    assert java_double_str(number) == text


def test_describe_strings_of_each_type() -> None:
    assert to_config_string(True) == "true"
    assert to_config_string(9223372036854775807) == "9223372036854775807"
    assert to_config_string(1.0) == "1.0"
    assert to_config_string(("compact", "delete")) == "compact,delete"
    assert to_config_string(()) == ""
    assert to_config_string(None) is None


def test_java_str_renders_lists_like_java() -> None:
    assert java_str(("a", "b")) == "[a, b]"
    assert java_str(None) == "null"
    assert java_str(False) == "false"
