"""The Kafka error table: every Kafka 4.0 code, Kafka's names and retriable flags,
and exceptions that never lose a code."""

from __future__ import annotations

import re

import pytest
from lethe_formats.errors import KAFKA_ERROR_CODES, FormatError, kafka_error_code
from lethe_formats.protocol.broker_errors import (
    KafkaError,
    UnknownKafkaError,
    error_class,
    error_for_code,
    raise_for_code,
)
from lethe_formats.protocol.error_codes import ErrorCode, error_name, is_retriable, known_code
from lethe_formats.protocol.exceptions import MalformedMessageError, UnsupportedVersionError
from wire_golden import wire_dir


def test_table_has_every_code_from_minus_one_to_129_without_gaps() -> None:
    assert sorted(member.value for member in ErrorCode) == list(range(-1, 130))


@pytest.mark.parametrize(
    ("code", "name", "retriable"),
    [
        (-1, "UNKNOWN_SERVER_ERROR", False),
        (0, "NONE", False),
        (1, "OFFSET_OUT_OF_RANGE", False),
        (2, "CORRUPT_MESSAGE", True),
        (3, "UNKNOWN_TOPIC_OR_PARTITION", True),
        (6, "NOT_LEADER_OR_FOLLOWER", True),
        (7, "REQUEST_TIMED_OUT", True),
        (29, "TOPIC_AUTHORIZATION_FAILED", False),
        (35, "UNSUPPORTED_VERSION", False),
        (42, "INVALID_REQUEST", False),
        (44, "POLICY_VIOLATION", False),
        (56, "KAFKA_STORAGE_ERROR", True),
        (76, "UNSUPPORTED_COMPRESSION_TYPE", False),
        (87, "INVALID_RECORD", False),
        (109, "OFFSET_MOVED_TO_TIERED_STORAGE", False),
        (129, "REBOOTSTRAP_REQUIRED", False),
    ],
)
def test_codes_carry_kafkas_names_and_retriable_flags(
    code: int, name: str, retriable: bool
) -> None:
    assert ErrorCode[name] == code
    assert error_name(code) == name
    assert is_retriable(code) is retriable


def test_every_error_named_in_the_golden_exchanges_matches_the_table() -> None:
    text = (wire_dir() / "README").read_text()
    seen = set(re.findall(r"resp errors: (-?\d+) (\w+)", text))
    assert len(seen) >= 6
    for code, name in seen:
        assert error_name(int(code)) == name


def test_every_error_but_none_has_a_default_message() -> None:
    assert ErrorCode.NONE.message == ""
    assert all(member.message for member in ErrorCode if member is not ErrorCode.NONE)
    assert (
        ErrorCode.POLICY_VIOLATION.message
        == "Request parameters do not satisfy the configured policy."
    )


def test_exception_class_carries_the_wire_metadata() -> None:
    klass = error_class(ErrorCode.OFFSET_OUT_OF_RANGE)
    assert klass.__name__ == "OffsetOutOfRangeError"
    assert (klass.code, klass.name, klass.retriable) == (1, "OFFSET_OUT_OF_RANGE", False)
    error = error_for_code(1)
    assert isinstance(error, klass)
    assert isinstance(error, KafkaError)
    assert error.message == ErrorCode.OFFSET_OUT_OF_RANGE.message
    assert error_for_code(44, "compact topic").message == "compact topic"
    assert error_class(44) is error_class(ErrorCode.POLICY_VIOLATION)


def test_raising_and_catching_by_code() -> None:
    with pytest.raises(error_class(ErrorCode.NOT_LEADER_OR_FOLLOWER)) as caught:
        raise_for_code(6)
    assert caught.value.retriable
    raise_for_code(0)  # NONE raises nothing


def test_unknown_code_is_kept_not_rewritten() -> None:
    assert known_code(9999) is None
    assert error_name(9999) == "UNKNOWN_ERROR_CODE(9999)"
    assert not is_retriable(9999)
    error = error_for_code(9999)
    assert isinstance(error, UnknownKafkaError)
    assert error.code == 9999
    assert error_class(9999) is type(error)
    assert error_class(-7).code == -7


def test_code_zero_is_not_an_error() -> None:
    with pytest.raises(ValueError, match="NONE"):
        error_class(0)


def test_format_error_mapping_uses_table_members() -> None:
    assert all(isinstance(code, ErrorCode) for code in KAFKA_ERROR_CODES.values())
    assert kafka_error_code(FormatError("x")) == ErrorCode.CORRUPT_MESSAGE
    assert kafka_error_code(UnsupportedVersionError("x")) == ErrorCode.UNSUPPORTED_VERSION
    assert kafka_error_code(MalformedMessageError("x")) == ErrorCode.INVALID_REQUEST
