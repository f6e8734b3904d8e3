"""Decoding errors name where the fault is and map to Kafka's error codes."""

from __future__ import annotations

import pytest
from lethe_formats.errors import (
    CheckpointError,
    ChecksumError,
    CorruptIndexError,
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
    VarintError,
    kafka_error_code,
    printable,
)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        # Numeric codes from org.apache.kafka.common.protocol.Errors.
        (CorruptRecordError("x"), 2),  # CORRUPT_MESSAGE
        (ChecksumError(1, 2), 2),
        (TruncatedError("x"), 2),
        (VarintError("x"), 2),
        (UnsupportedMagicError("x"), 2),
        (InvalidRecordError("x"), 87),  # INVALID_RECORD
        (UnsupportedCompressionError("x"), 76),  # UNSUPPORTED_COMPRESSION_TYPE
        (CorruptIndexError("x"), 56),  # KAFKA_STORAGE_ERROR
        (CheckpointError("x"), 56),
    ],
)
def test_each_error_maps_to_kafkas_code(error: FormatError, code: int) -> None:
    assert kafka_error_code(error) == code


def test_checksum_error_uses_kafkas_wording() -> None:
    error = ChecksumError(673181555, 1, file="a.log", position=17, field="crc")
    assert str(error) == (
        "a.log: byte 17: crc: Record is corrupt (stored crc = 673181555, computed crc = 1)"
    )


def test_reanchoring_adds_the_slice_offset_and_keeps_the_original() -> None:
    inner = TruncatedError("data ends inside keyLength", position=5, field="keyLength")
    outer = inner.at(file="00000000000000000022.log", offset=1000)
    assert (outer.file, outer.position, outer.field) == (
        "00000000000000000022.log",
        1005,
        "keyLength",
    )
    assert isinstance(outer, TruncatedError)
    assert (inner.file, inner.position) == (None, 5)


def test_text_file_errors_name_the_line() -> None:
    error = CheckpointError("Malformed line", file="cp", line=3)
    assert error.location() == "cp: line 3"


def test_printable_escapes_every_non_printable_character() -> None:
    assert printable("plain text, spaces & ünïcödé") == "plain text, spaces & ünïcödé"
    raw = "a\x1b[31mb\r\n\x00\x7f\x9b\u200b\U000e0001"
    assert printable(raw) == "a\\x1b[31mb\\x0d\\x0a\\x00\\x7f\\x9b\\u200b\\U000e0001"
    # a byte of a non-UTF-8 file name (decoded with surrogateescape) is shown as that byte
    assert printable(b"bad\xffname".decode("utf-8", "surrogateescape")) == "bad\\xffname"


def test_format_error_text_escapes_file_field_and_message() -> None:
    error = FormatError("value \x1b]0;x\x07", file="f\x1b", position=3, field="k\r")
    assert str(error) == "f\\x1b: byte 3: k\\x0d: value \\x1b]0;x\\x07"
    assert error.message == "value \x1b]0;x\x07"  # the raw value stays for programs
