"""The audit's C-walked tables equal its record-by-record tables, on good and damaged logs.

The record-by-record path is the one test_audit_tables.py holds to
``decode_log`` and kafka-dump-log; the walker must change the speed only.
Damage: random bytes flipped anywhere (CRCs then fail), and bytes flipped in
a batch's records section with the CRC recomputed, so the walker's own record
checks meet malformed varints, lengths and counts. No Spark is needed: these
are the functions a task runs.
"""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import LOGS
from crc32c import crc32c
from lethe_tools.audit import decode, fastpath
from lethe_tools.audit.arrow import to_table
from lethe_tools.audit.discover import discover
from lethe_tools.audit.rows import Tables

DAMAGEABLE = ("codecs-v2", "tombstones", "transactions", "kip87", "delete-horizon", "legacy-v1")


def _tables(paths: list[str], walker: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, pa.Table]:
    if not walker:
        monkeypatch.setattr(decode._SegmentDecoder, "_walkable", lambda self: False)
    out = Tables()
    for item in discover(paths).items:
        for _ in decode.decode_item(item, "all", out):
            pass
    monkeypatch.undo()
    return {columns.table: to_table(columns) for columns in out.all()}


def _assert_same(paths: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, pa.Table]:
    walked = _tables(paths, True, monkeypatch)
    full = _tables(paths, False, monkeypatch)
    for table, rows in full.items():
        assert walked[table].equals(rows), (table, paths)
    return walked


def test_every_fixture_log_dir_gives_the_same_tables_both_ways(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = [str(path) for path in sorted(LOGS.iterdir()) if path.is_dir() and path.name != "specs"]
    walked_batches = [0]
    walk = fastpath.walk

    def counting(data: object, position: int) -> fastpath.Walked:
        walked = walk(data, position)
        walked_batches[0] += len(walked.batches)
        return walked

    monkeypatch.setattr(fastpath, "walk", counting)
    walked = _tables(paths, True, monkeypatch)
    assert walked_batches[0] > 50  # the walker really took most batches
    full = _tables(paths, False, monkeypatch)
    for table, rows in full.items():
        assert walked[table].equals(rows), table


def _batches(data: bytes) -> list[tuple[int, int]]:
    position, found = 0, []
    while position + 61 <= len(data):
        length = struct.unpack_from(">i", data, position + 8)[0]
        if data[position + 16] != 2 or length < 49:
            break
        found.append((position, length + 12))
        position += length + 12
    return found


def _copy(name: str, target: Path) -> Path:
    shutil.copytree(LOGS / name, target)
    logs = sorted(path for path in target.rglob("*.log") if path.stat().st_size)
    return logs[0]


@pytest.mark.parametrize("seed", range(40))
def test_flipped_bytes_give_the_same_tables_and_problems(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chooser = random.Random(seed)
    log = _copy(chooser.choice(DAMAGEABLE), tmp_path / "logs")
    data = bytearray(log.read_bytes())
    for _ in range(chooser.choice((1, 2, 5))):
        data[chooser.randrange(len(data))] = chooser.randrange(256)
    if chooser.random() < 0.25:
        data = data[: chooser.randrange(len(data))]
    log.write_bytes(bytes(data))
    _assert_same([str(tmp_path / "logs")], monkeypatch)


@pytest.mark.parametrize("seed", range(60))
def test_damaged_records_under_a_good_crc_give_the_same_tables_and_problems(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chooser = random.Random(1000 + seed)
    name = chooser.choice([name for name in DAMAGEABLE if name != "legacy-v1"])
    log = _copy(name, tmp_path / "logs")
    data = bytearray(log.read_bytes())
    position, size = chooser.choice(_batches(bytes(data)))
    for _ in range(chooser.choice((1, 2, 3))):
        at = chooser.randrange(position + 57, position + size)  # recordsCount and records
        data[at] = chooser.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, chooser.randrange(256)))
    struct.pack_into(
        ">I", data, position + 17, crc32c(bytes(data[position + 21 : position + size]))
    )
    log.write_bytes(bytes(data))
    walked = _assert_same([str(tmp_path / "logs")], monkeypatch)
    assert walked["segments"].num_rows >= 1


def test_discard_drops_chunked_rows_as_well_as_listed_ones() -> None:
    """A data source level that returns one table drops the others' rows, chunks included."""
    from lethe_tools.audit.arrow import listed_batch

    out = Tables()
    paths = [str(LOGS / "tombstones")]
    for item in discover(paths).items:
        for _ in decode.decode_item(item, "all", out):
            pass
    batches = out.batches
    assert batches.chunks and batches.count > 0  # the walker's rows arrived as chunks
    batches.add((None,) * len(batches.names))
    batches.add_chunk(0, batches.chunks[0].slice(0, 0), listed_batch)
    batches.discard()
    assert batches.count == 0 and batches.listed == 0
    assert batches.take_chunks() == [] and all(not v for v in batches.take()[0].values())
