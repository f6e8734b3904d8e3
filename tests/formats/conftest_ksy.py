"""Shared support for the Kaitai tests: compiled specs, fixture files, kafka-dump-log output.

The specs are compiled once per test session by the real Kaitai compiler
(Node, ``npm ci --prefix formats/kaitai``) into a temporary directory. Test
modules import the ``kaitai_specs`` fixture from here; the compiled result is
cached at module level so importing the fixture into several modules still
compiles only once.

``dump_sections`` reads the golden ``dump.txt`` files: each
``### bin/kafka-dump-log.sh --files <path> <args>`` line starts the verbatim
output of one command. Lines are split at ``\\n`` only, because payloads may
hold ``\\r``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.ksy import (
    KaitaiSpecs,
    KaitaiUnavailableError,
    compile_specs,
    load_compiled,
)

_COMPILED: dict[str, KaitaiSpecs] = {}

SEGMENT_NAME = re.compile(r"^\d{20}\.(log|index|timeindex|txnindex)$")
OFFSET_CHECKPOINTS = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
LOG_ARGS = "--deep-iteration --print-data-log"


@pytest.fixture(scope="session")
def kaitai_specs(tmp_path_factory: pytest.TempPathFactory) -> KaitaiSpecs:
    """The specs compiled by the real Kaitai compiler, loaded (once per session)."""
    if "specs" not in _COMPILED:
        out_dir = tmp_path_factory.mktemp("kaitai-compiled")
        try:
            compile_specs(out_dir)
        except KaitaiUnavailableError as error:
            pytest.fail(f"cannot compile the Kaitai specs: {error}")
        _COMPILED["specs"] = load_compiled(out_dir)
    return _COMPILED["specs"]


def golden_dir() -> Path:
    return fixtures_root() / "golden"


def files_under(root: Path, suffix: str) -> list[Path]:
    """Segment files (20-digit base offset names) with ``suffix`` below ``root``."""
    return sorted(
        path
        for path in root.rglob(f"*.{suffix}")
        if SEGMENT_NAME.match(path.name) and path.is_file()
    )


def named_files_under(root: Path, names: tuple[str, ...]) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.name in names and path.is_file())


def relative_id(path: Path) -> str:
    """A short test id: the path below fixtures/."""
    return str(path.relative_to(fixtures_root()))


@dataclass(frozen=True)
class DumpSection:
    """One kafka-dump-log command and its standard output lines."""

    file: Path
    args: str
    lines: tuple[str, ...]


def dump_sections() -> dict[tuple[Path, str], DumpSection]:
    """Every command section of every golden dump.txt, keyed by (file, extra args)."""
    sections: dict[tuple[Path, str], DumpSection] = {}
    for dump in sorted(golden_dir().rglob("dump.txt")):
        current: tuple[Path, str] | None = None
        lines: list[str] = []
        for line in dump.read_bytes().decode("utf-8").split("\n"):
            if line.startswith("### "):
                if current is not None:
                    sections[current] = DumpSection(current[0], current[1], tuple(lines))
                current, lines = _section_key(dump.parent, line), []
            elif current is not None:
                lines.append(line)
        if current is not None:
            sections[current] = DumpSection(current[0], current[1], tuple(lines))
    return {key: value for key, value in sections.items() if key[0] != Path()}


def _section_key(folder: Path, header: str) -> tuple[Path, str]:
    match = re.match(r"### bin/kafka-dump-log\.sh --files (\S+)\s*(.*)$", header)
    if match is None:  # a "### (stderr ...)" block: not a command
        return Path(), header
    return (folder / match.group(1)).resolve(), match.group(2).strip()


def fields(line: str) -> dict[str, str]:
    """``key: value`` pairs of a batch or index line (every value is one token)."""
    return dict(re.findall(r"(\w+): (\S+)", line))


RECORD_LINE = re.compile(
    r"^\| offset: (?P<offset>-?\d+) (?P<tstype>CreateTime|LogAppendTime|NoTimestampType): "
    r"(?P<timestamp>-?\d+) keySize: (?P<keySize>-?\d+) valueSize: (?P<valueSize>-?\d+) "
    r"sequence: (?P<sequence>-?\d+) headerKeys: \[(?P<headerKeys>[^\]]*)\](?P<rest>.*)$"
)


# --- hand-built entries (layouts from kafka-facts sections 3.1, 3.2 and 3.4) -------------


def varint(value: int) -> bytes:
    """Zig-zag base-128, low group first (written here, not taken from lethe)."""
    raw = (value << 1) ^ (value >> 63)
    raw &= (1 << 64) - 1
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def _sized(data: bytes | None) -> bytes:
    return varint(-1) if data is None else varint(len(data)) + data


def record_bytes(
    offset_delta: int,
    key: bytes | None,
    value: bytes | None,
    *,
    timestamp_delta: int = 0,
    headers: tuple[tuple[bytes, bytes | None], ...] = (),
) -> bytes:
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta) + _sized(key) + _sized(value)
    body += varint(len(headers))
    for hkey, hvalue in headers:
        body += _sized(hkey) + _sized(hvalue)
    return varint(len(body)) + body


def v2_batch(
    base_offset: int,
    records: bytes,
    count: int,
    *,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    base_timestamp: int = 1_700_000_000_000,
    max_timestamp: int = 1_700_000_000_000,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    leader_epoch: int = 0,
    crc: int | None = None,
) -> bytes:
    """A magic-2 batch with a correct CRC-32C unless ``crc`` is given."""
    import struct

    from lethe_formats.crc import crc32c

    lod = count - 1 if last_offset_delta is None else last_offset_delta
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        lod,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )
    after_crc += records
    checksum = crc32c(after_crc) if crc is None else crc
    body = struct.pack(">ibI", leader_epoch, 2, checksum) + after_crc
    return struct.pack(">qi", base_offset, len(body)) + body


def legacy_entry(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int = 1,
    attributes: int = 0,
    timestamp: int = 1_700_000_000_000,
) -> bytes:
    """A magic 0/1 log entry with a correct CRC32 (zlib)."""
    import struct
    import zlib

    def sized(data: bytes | None) -> bytes:
        return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data

    covered = struct.pack(">bB", magic, attributes)
    if magic == 1:
        covered += struct.pack(">q", timestamp)
    covered += sized(key) + sized(value)
    message = struct.pack(">I", zlib.crc32(covered)) + covered
    return struct.pack(">qi", offset, len(message)) + message
