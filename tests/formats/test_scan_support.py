"""Shared helpers for the fast-path tests: golden dump parsing, hand-made batches,
and the fixture that runs a test once per implementation (C and pure Python).

Hand-made batches follow kafka-facts.md §3.1/3.2 byte for byte; they let a
test place one specific fault (a 6-byte varint, a negative length) where a
builder would refuse to put it.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from golden_dump import fields, parse_dump, record_lines
from lethe_formats.crc import crc32c
from lethe_formats.fixtures import fixtures_root
from lethe_formats.records import scan
from lethe_formats.varint import encode_varint, encode_varlong

GOLDEN = fixtures_root() / "golden"
SEGMENT_NAME = re.compile(r"^\d{20}\.log$")
IMPLEMENTATIONS = ["python", "c"]


def golden_logs() -> list[Path]:
    """Every segment file Kafka wrote under fixtures/golden."""
    return sorted(p for p in GOLDEN.rglob("*.log") if SEGMENT_NAME.match(p.name))


def golden_id(path: Path) -> str:
    return str(path.relative_to(GOLDEN))


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test with the module-level switch set to C, then to pure Python."""
    previous = scan.set_implementation(request.param)
    assert scan.implementation() == request.param
    yield request.param
    scan.set_implementation(previous)


def dump_batches(log: Path) -> list[tuple[dict[str, str], list[dict[str, str]]]]:
    """(batch line fields, record line fields) as kafka-dump-log printed them,
    read with the shared dump.txt parser (tests/formats/golden_dump.py)."""
    dump = next(p / "dump.txt" for p in log.parents if (p / "dump.txt").exists())
    lines = parse_dump(dump)[str(log.relative_to(dump.parent))]
    return [(fields(group[0]), [fields(r) for r in group[1:]]) for group in record_lines(lines)]


def record_bytes(
    *,
    attributes: bytes = b"\x00",
    timestamp_delta: bytes = b"\x00",
    offset_delta: bytes = b"\x00",
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: list[tuple[bytes, bytes | None]] | None = None,
    raw_tail: bytes | None = None,
    length: int | None = None,
) -> bytes:
    """One magic-2 record; raw byte fields let a test plant malformed varints."""
    body = attributes + timestamp_delta + offset_delta
    for item in (key, value):
        body += encode_varint(-1) if item is None else encode_varint(len(item)) + item
    if raw_tail is not None:
        body += raw_tail
    else:
        body += encode_varint(len(headers or []))
        for hkey, hvalue in headers or []:
            body += encode_varint(len(hkey)) + hkey
            body += encode_varint(-1) if hvalue is None else encode_varint(len(hvalue)) + hvalue
    return encode_varint(len(body) if length is None else length) + body


def batch_bytes(
    records: bytes,
    count: int,
    *,
    base_offset: int = 0,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    base_timestamp: int = 1_700_000_000_000,
) -> bytes:
    """A magic-2 batch around ``records`` with a correct CRC-32C."""
    lod = count - 1 if last_offset_delta is None else last_offset_delta
    after_crc = struct.pack(
        ">hiqqqhii", attributes, lod, base_timestamp, base_timestamp, -1, -1, -1, count
    )
    covered = after_crc + records
    head = struct.pack(">qiib", base_offset, len(covered) + 9, -1, 2)
    return head + struct.pack(">I", crc32c(covered)) + covered


def small_segment() -> bytes:
    """Three uncompressed batches (1, 2 and 1 records, one with headers)."""
    first = batch_bytes(record_bytes(key=b"a", value=b"1"), 1, base_offset=0)
    second = batch_bytes(
        record_bytes(key=None, value=b"22", headers=[(b"h", b"x"), (b"n", None)])
        + record_bytes(offset_delta=encode_varint(1), timestamp_delta=encode_varlong(-5)),
        2,
        base_offset=1,
    )
    third = batch_bytes(record_bytes(key=b"c", value=None), 1, base_offset=3)
    return first + second + third
