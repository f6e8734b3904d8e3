"""Hand-laid protocol bytes for the message tests: big-endian integers, classic
(int16-length) and compact (uvarint length + 1) strings, compact array counts."""

from __future__ import annotations

import struct

__all__ = ["carr", "cstr", "i16", "i32", "i64", "string"]


def i16(value: int) -> bytes:
    return struct.pack(">h", value)


def i32(value: int) -> bytes:
    return struct.pack(">i", value)


def i64(value: int) -> bytes:
    return struct.pack(">q", value)


def string(text: str) -> bytes:
    """A classic string: int16 length, then the bytes."""
    return i16(len(text)) + text.encode()


def cstr(text: str) -> bytes:
    """A compact string shorter than 127 bytes: length + 1 in one byte, then the bytes."""
    return bytes([len(text) + 1]) + text.encode()


def carr(count: int) -> bytes:
    """A compact array count below 127: count + 1 in one byte."""
    return bytes([count + 1])
