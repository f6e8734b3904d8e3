"""A corrupt log dir: every fault is a problems row (file, position, field), and the job finishes.

A copy of ``fixtures/golden/codecs`` is damaged in six ways at once; batch
positions come from Kafka's ``dump.txt`` and field offsets from the v2 batch
layout (crc at byte 17 of a batch). The job must write every table and
count the problems; the CLI's exit status for that is tested in
test_audit_cli.py.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from audit_support import batch_lines, dump_sections, table_rows
from conftest import GOLDEN, NOW_MS
from lethe_formats.crc import crc32c

CASE = GOLDEN / "codecs"
PARTITION = "golden-codecs-0"
FIRST, SECOND = "00000000000000000000", "00000000000000000022"


def _positions(name: str) -> list[int]:
    lines = dump_sections(CASE / "dump.txt")[(CASE / PARTITION / f"{name}.log").resolve()]
    return [int(batch["position"]) for batch in batch_lines(lines)]


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("damaged") / "codecs"
    shutil.copytree(CASE, root)
    part = root / PARTITION
    # 1. flip a byte inside the records of the second batch of the first segment
    first = bytearray((part / f"{FIRST}.log").read_bytes())
    first[_positions(FIRST)[1] + 70] ^= 0x5A
    # 6. the first batch (uncompressed, 6 records) claims 7 records, with a valid CRC
    end = _positions(FIRST)[1]
    struct.pack_into(">i", first, 57, 7)
    struct.pack_into(">I", first, 17, crc32c(bytes(first[21:end])))
    (part / f"{FIRST}.log").write_bytes(bytes(first))
    # 2. tear the second segment 30 bytes into its second batch
    second = (part / f"{SECOND}.log").read_bytes()
    (part / f"{SECOND}.log").write_bytes(second[: _positions(SECOND)[1] + 30])
    # 3. an offset index with a partial entry (not a multiple of 8 bytes)
    index = (part / f"{FIRST}.index").read_bytes()
    (part / f"{FIRST}.index").write_bytes(index + b"\x00\x01\x02")
    # 4. a checkpoint whose entry count is not a number
    (root / "log-start-offset-checkpoint").write_text("0\nmany\n")
    # 5. a directory that is not a partition dir
    (root / "not a partition").mkdir()
    return root


@pytest.fixture(scope="module")
def audited(spark: Any, damaged: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from lethe_tools.audit.job import run_job

    out = tmp_path_factory.mktemp("damaged-out")
    result = run_job(spark, [str(damaged)], str(out), NOW_MS)
    return out, result


def _problems(audited: Any) -> list[dict[str, Any]]:
    return table_rows(audited[0], "problems")


def test_the_job_finishes_and_writes_every_table(audited: Any) -> None:
    out, result = audited
    assert result.problems == len(_problems(audited)) >= 5
    for name in ("partitions", "segments", "batches", "records", "indexes", "checkpoints"):
        assert (out / name).is_dir()
        assert result.rows[name] > 0, name


def test_a_flipped_byte_is_a_checksum_problem_at_the_batch_crc(audited: Any, damaged: Path) -> None:
    path = str(damaged / PARTITION / f"{FIRST}.log")
    at = _positions(FIRST)[1]
    rows = [p for p in _problems(audited) if p["file"] == path and p["kind"] == "ChecksumError"]
    assert [(p["position"], p["field"], p["stage"]) for p in rows] == [(at + 17, "crc", "segment")]
    batches = [b for b in table_rows(audited[0], "batches") if b["file"] == path]
    assert [b["position"] for b in batches if not b["crc_ok"]] == [at]
    segment = next(s for s in table_rows(audited[0], "segments") if s["file"] == path)
    assert segment["crc_failures"] == 1


def test_a_torn_segment_is_a_truncation_problem_where_its_last_batch_starts(
    audited: Any, damaged: Path
) -> None:
    path = str(damaged / PARTITION / f"{SECOND}.log")
    at = _positions(SECOND)[1]
    rows = [p for p in _problems(audited) if p["file"] == path]
    assert [(p["kind"], p["position"], p["field"]) for p in rows] == [
        ("TruncatedError", at, "entry")
    ]
    segment = next(s for s in table_rows(audited[0], "segments") if s["file"] == path)
    assert segment["valid_bytes"] == at and segment["batch_count"] == 1
    assert segment["scan_error"] is not None


def test_a_partial_index_entry_is_an_index_problem(audited: Any, damaged: Path) -> None:
    path = str(damaged / PARTITION / f"{FIRST}.index")
    size = (damaged / PARTITION / f"{FIRST}.index").stat().st_size
    rows = [p for p in _problems(audited) if p["file"] == path]
    assert [(p["kind"], p["position"], p["stage"]) for p in rows] == [
        ("CorruptIndexError", size - size % 8, "index")
    ]


def test_an_unreadable_checkpoint_and_a_stray_directory_are_problems(
    audited: Any, damaged: Path
) -> None:
    by_file = {p["file"]: p for p in _problems(audited)}
    checkpoint = by_file[str(damaged / "log-start-offset-checkpoint")]
    assert checkpoint["stage"] == "checkpoint" and "line 2" in checkpoint["message"]
    stray = by_file[str(damaged / "not a partition")]
    assert (stray["kind"], stray["stage"], stray["field"]) == (
        "FileNameError",
        "discover",
        "directory name",
    )


def test_records_that_do_not_decode_are_a_problem_even_with_a_valid_crc(
    audited: Any, damaged: Path
) -> None:
    path = str(damaged / PARTITION / f"{FIRST}.log")
    end = _positions(FIRST)[1]
    rows = [p for p in _problems(audited) if p["file"] == path and p["stage"] == "records"]
    assert len(rows) == 1
    assert 61 <= rows[0]["position"] <= end  # the 7th record would start at the end
    batches = [b for b in table_rows(audited[0], "batches") if b["file"] == path]
    assert [(b["records_count"], b["crc_ok"]) for b in batches if b["position"] == 0] == [(7, True)]
    records = [r for r in table_rows(audited[0], "records") if r["file"] == path]
    assert [r for r in records if r["batch_position"] == 0] == []
