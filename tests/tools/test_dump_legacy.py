"""``lethe dump`` and ``lethe verify`` on magic 0/1 (pre-0.11) message sets.

The golden files hold only magic 2 data, so these segments are built here
byte by byte from the layout in kafka-facts 3.4 (``offset | size | crc |
magic | attributes | [timestamp] | key | value``, CRC32 over magic..value;
a compressed wrapper's value is the compressed inner message set, v1 inner
offsets relative), and the expected lines follow kafka-dump-log's layout
in kafka-facts 3.7, including the stray ``}`` after a legacy record's crc.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

from tools_support import Run

TS = 1795289000000


def message(
    offset: int,
    magic: int,
    attributes: int,
    key: bytes | None,
    value: bytes | None,
    *,
    timestamp: int = TS,
) -> tuple[bytes, int]:
    """One log entry and its CRC32."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for blob in (key, value):
        body += struct.pack(">i", -1) if blob is None else struct.pack(">i", len(blob)) + blob
    crc = zlib.crc32(body)
    entry = struct.pack(">I", crc) + body
    return struct.pack(">qi", offset, len(entry)) + entry, crc


def test_uncompressed_v0_and_v1_messages(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    v0, crc0 = message(0, 0, 0, b"k0", b"zero")
    v1, crc1 = message(1, 1, 0, None, b"one")
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(v0 + v1)
    run = lethe("dump", "--print-data-log", str(log))
    assert run.lines == [
        f"Dumping {log}",
        "Log starting offset: 0",
        f"offset: 0 position: 0 NoTimestampType: -1 size: {len(v0)} magic: 0 "
        f"compresscodec: none crc: {crc0} isvalid: true",
        f"| offset: 0 NoTimestampType: -1 keySize: 2 valueSize: 4 isValid: true crc: {crc0}}}"
        " key: k0 payload: zero",
        f"offset: 1 position: {len(v0)} CreateTime: {TS} size: {len(v1)} magic: 1 "
        f"compresscodec: none crc: {crc1} isvalid: true",
        f"| offset: 1 CreateTime: {TS} keySize: -1 valueSize: 3 isValid: true crc: {crc1}}}"
        " payload: one",
    ]
    assert lethe("verify", "--deep", str(log)).status == 0


def test_gzip_v1_wrapper_with_relative_inner_offsets(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    inner = [
        message(i, 1, 0, f"k{i}".encode(), f"v{i}".encode(), timestamp=TS + i) for i in range(3)
    ]
    wrapped, crc = message(
        12, 1, 0x01, None, gzip.compress(b"".join(e for e, _ in inner)), timestamp=TS + 2
    )
    log = tmp_path / "00000000000000000010.log"
    log.write_bytes(wrapped)
    run = lethe("dump", "--deep-iteration", str(log))
    assert run.lines == [
        f"Dumping {log}",
        "Log starting offset: 10",
        f"offset: 12 position: 0 CreateTime: {TS + 2} size: {len(wrapped)} magic: 1 "
        f"compresscodec: gzip crc: {crc} isvalid: true",
        *[
            f"| offset: {10 + i} CreateTime: {TS + i} keySize: 2 valueSize: 2 isValid: true "
            f"crc: {inner[i][1]}}}"
            for i in range(3)
        ],
    ]
    assert lethe("verify", "--deep", str(log)).lines == []


def test_log_append_time_wrapper_overrides_inner_timestamps(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    inner = [message(i, 1, 0, None, b"x") for i in range(2)]
    wrapped, _ = message(
        1, 1, 0x09, None, gzip.compress(b"".join(e for e, _ in inner)), timestamp=TS + 500
    )
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(wrapped)
    run = lethe("dump", "--deep-iteration", str(log))
    assert [line.split(" keySize")[0] for line in run.lines[3:]] == [
        f"| offset: 0 LogAppendTime: {TS + 500}",
        f"| offset: 1 LogAppendTime: {TS + 500}",
    ]


def test_corrupt_inner_message_crc_is_found_by_deep_verify(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    good, _ = message(0, 1, 0, None, b"a")
    bad = bytearray(message(1, 1, 0, None, b"b")[0])
    stored = struct.unpack_from(">I", bad, 12)[0]
    bad[-1] ^= 0xFF  # value byte changed after the CRC was computed
    computed = zlib.crc32(bytes(bad[16:]))
    wrapped, _ = message(1, 1, 0x01, None, gzip.compress(good + bytes(bad)))
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(wrapped)
    assert lethe("verify", str(log)).lines == []  # the wrapper's own CRC is fine
    deep = lethe("verify", "--deep", str(log))
    assert deep.lines == [
        f"{log}: byte 0: inner[1].crc: inner message 1 (offset 1): Record is corrupt "
        f"(stored crc = {stored}, computed crc = {computed})"
    ]
    assert deep.status == 1
    # kafka-dump-log does not stop on it: the record line says isValid: false
    dump = lethe("dump", "--deep-iteration", str(log))
    assert dump.lines[-1].startswith("| offset: 1 CreateTime: ")
    assert dump.lines[-1].endswith(f" isValid: false crc: {stored}}}")
    assert dump.status == 0
