"""The audit benchmark harness on a tiny log dir: valid generated data, phases, result files.

The generated log dir is checked with lethe_formats' decoders and index
readers (CRC of every batch, contiguous offsets, index entries at batch
starts) and with ``lethe verify``; the whole script then runs once with a
single Spark master and must write audit.json/audit.md with its figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from lethe_formats.model import RecordBatch
from lethe_formats.records import decode_log
from lethe_formats.storage.index import read_offset_index

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
TINY = 2 * 1024 * 1024


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import audit_bench
    import audit_data

    return {"bench": audit_bench, "data": audit_data}


def test_generated_log_dir_is_valid_kafka_data(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    made = bench["data"].ensure_logdir(tmp_path, TINY)
    root = Path(made.path)
    assert made.log_bytes >= TINY
    records = 0
    parts = sorted(p for p in root.iterdir() if p.is_dir())
    assert len(parts) == len(bench["data"].TOPICS) * bench["data"].PARTITIONS
    for part in parts:
        expected = 0
        for log in sorted(part.glob("*.log")):
            batches = decode_log(log.read_bytes(), file=str(log), verify_crc=True)
            starts, at = {}, 0
            for batch in batches:
                assert isinstance(batch, RecordBatch)
                assert batch.header.base_offset == expected
                starts[at] = batch.header.last_offset
                at += batch.header.size_in_bytes
                expected = batch.header.last_offset + 1
                records += len(batch.records)
            for entry in read_offset_index(log.with_suffix(".index").read_bytes()):
                assert starts[entry.position] == int(log.stem) + entry.relative_offset
    assert records == made.records
    done = subprocess.run(
        ["lethe", "verify", str(root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_matching_log_dir_is_reused(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    first = bench["data"].ensure_logdir(tmp_path, TINY)
    log = next(Path(first.path).rglob("*.log"))
    before = log.stat().st_mtime_ns
    assert bench["data"].ensure_logdir(tmp_path, TINY) == first
    assert log.stat().st_mtime_ns == before


def test_phases_split_a_run_at_the_jobs_progress_lines(bench: dict[str, ModuleType]) -> None:
    lines = [
        (4.0, "lethe audit: 1 log dirs, 100 bytes of segments"),
        (5.0, "lethe audit: stage 0: 1/2 tasks"),
        (9.0, "lethe audit: decoded 77 rows into 5 Parquet files"),
        (9.1, "lethe audit: wrote partitions: 3 rows"),
        (13.0, "lethe audit: running checks"),
        (20.0, "lethe audit: report written to /x"),
    ]
    assert bench["bench"].phases(lines, 21.0) == {
        "start": 4.0,
        "decode": 5.0,
        "checks": 11.0,
        "stop": 1.0,
    }


@pytest.mark.slow
def test_whole_run_with_one_master_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = [sys.executable, str(BENCH_DIR / "audit_bench.py"), "--size-gib", "0.002"]
    command += ["--masters", "local[1]", "--data-dir", str(tmp_path / "data"), "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "audit.json").read_text())
    assert set(result["figures"]) == {"verify", "verify_deep", "audit_local1"}
    assert all(fig["value"] > 0 for fig in result["figures"].values())
    statuses = {row["figure"]: row["status"] for row in result["targets"]}
    assert statuses["audit_local2"] == "n/a"
    assert statuses["audit_local1"] in ("PASS", "MISS")
    phases = result["detail"]["local[1]"][0]["phases"]
    seen = "\n".join(result["detail"]["local[1]"][0]["stderr"])
    assert set(phases) >= {"start", "decode", "checks", "stop"}, seen
    assert "# Audit speed benchmark" in (out / "audit.md").read_text()
