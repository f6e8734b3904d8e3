"""The audit benchmark harness on a tiny log dir: valid generated data, phases, result files.

The generated log dir is checked with lethe_formats' decoders and index
readers (CRC of every batch, contiguous offsets, index entries at batch
starts) and with ``lethe verify``. The marginal arithmetic (extra bytes over
extra seconds, noise as n/a, targets judged on it with the whole-process rows
kept for reference) is pinned on made-up timings. The whole script then runs
once at two tiny sizes with a single Spark master and must write
audit.json/audit.md with its whole-process and marginal figures.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from lethe_formats.model import RecordBatch
from lethe_formats.records import decode_log
from lethe_formats.storage.index import read_offset_index

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
TINY = 2 * 1024 * 1024
GB = 1_000_000_000


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


def test_profile_samples_partitions_spread_over_the_whole_plan(
    bench: dict[str, ModuleType], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One file per input partition, so the tiny dir has a long plan; a quarter of its
    # bytes must come from partitions spread evenly over the plan, not from its head.
    from lethe_tools.audit import datasource

    monkeypatch.setattr(datasource, "_DEFAULT_PARTITION_BYTES", 1)
    made = bench["data"].ensure_logdir(tmp_path, TINY)
    root = Path(made.path)
    plan = datasource.KafkaLogReader(
        {"level": "write", "out": "-", "paths": datasource.absolute([str(root)])}
    ).partitions()
    parts, covered = bench["bench"]._profile_parts(root, made.log_bytes // 4)
    indexes = [part.index for part in parts]
    steps = {later - earlier for earlier, later in itertools.pairwise(indexes)}
    assert len(plan) >= 16 and len(parts) >= 2
    assert indexes[0] == 0 and len(steps) == 1 and steps != {1}  # evenly spaced, not the head
    assert indexes[-1] >= len(plan) // 2
    logs = [item for part in parts for item in part.items if item.kind == "log"]
    assert covered == sum(item.size for item in logs) > 0


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


def test_marginal_rate_is_extra_bytes_over_extra_seconds(bench: dict[str, ModuleType]) -> None:
    rate = bench["bench"].marginal_rate
    assert rate(2 * GB, 10.0, 6 * GB, 18.0) == pytest.approx(500.0)
    assert rate(2 * GB, 10.0, 6 * GB, 9.5) is None  # noise: the larger dir was faster
    assert rate(2 * GB, 10.0, 6 * GB, 10.0) is None
    assert rate(6 * GB, 10.0, 6 * GB, 18.0) is None


def _audit(seconds: float, start: float, decode: float) -> dict[str, Any]:
    phases = {"start": start, "decode": decode, "stop": round(seconds - start - decode, 2)}
    return {"seconds": seconds, "phases": phases}


SMALL = {
    "verify": [{"seconds": 11.0}, {"seconds": 10.0}],
    "local[1]": [_audit(30.0, 9.0, 20.0)],
    "local[2]": [_audit(20.0, 9.0, 10.0)],
}
LARGE = {
    "verify": [{"seconds": 18.0}],
    "local[1]": [_audit(29.0, 9.0, 19.0)],  # faster than on the small dir: noise
    "local[2]": [_audit(28.0, 9.5, 17.5)],
}


def test_marginal_figures_use_the_best_runs_and_report_noise_as_na(
    bench: dict[str, ModuleType],
) -> None:
    figures, rows = bench["bench"].marginal_figures(SMALL, LARGE, (2 * GB, 6 * GB), "6 - 2")
    assert figures["verify_marginal"].value == pytest.approx(4000 / 8)
    assert figures["audit_local2_marginal"].value == pytest.approx(4000 / 8)
    assert figures["audit_local2_per_core_marginal"].value == pytest.approx(250.0)
    assert "audit_local1_marginal" not in figures
    assert rows["audit_local1_marginal"]["value"] is None
    assert rows["audit_local2_marginal"]["phases"] == {"start": 0.5, "decode": 7.5, "stop": 0.0}
    assert rows["audit_local2_marginal"]["label"] == (
        "lethe audit --master local[2], marginal (6 - 2)"
    )


def test_targets_are_judged_on_marginal_figures_with_whole_process_rows_for_reference(
    bench: dict[str, ModuleType],
) -> None:
    module = bench["bench"]
    figures = module.whole_figures(LARGE, 6 * GB)
    figures.update(module.marginal_figures(SMALL, LARGE, (2 * GB, 6 * GB), "6 - 2")[0])
    rows = {row["figure"]: row for row in module.targets(figures, True)}
    # marginal: local[2]/2 = 250 MB/s against 0.5 x verify's 500; local[1] is n/a
    assert rows["audit_local2_per_core_marginal"]["status"] == "PASS"
    assert rows["audit_local2_marginal"]["status"] == "n/a"
    assert rows["audit_local1_marginal"]["status"] == "n/a"
    # whole process: verify 6000/18, local[1] 6000/29, local[2] 6000/28 MB/s
    assert rows["audit_local1"]["status"] == "PASS"
    assert rows["audit_local2"]["status"] == "MISS"
    assert rows["audit_local2_per_core"]["status"] == "MISS"
    for name in ("audit_local1", "audit_local2", "audit_local2_per_core"):
        assert rows[name]["target"].endswith("(whole process, for reference)")
        assert rows[name]["informational"] is True
        assert rows[name + "_marginal"]["informational"] is False
    alone = module.targets(module.whole_figures(LARGE, 6 * GB), False)
    assert {row["figure"] for row in alone} == {
        "audit_local1",
        "audit_local2",
        "audit_local2_per_core",
    }
    assert not any(row["informational"] for row in alone)


def test_markdown_shows_a_noisy_marginal_figure_as_na_and_explains_the_method(
    bench: dict[str, ModuleType],
) -> None:
    module = bench["bench"]
    figures = module.whole_figures(LARGE, 6 * GB)
    extra, rows = module.marginal_figures(SMALL, LARGE, (2 * GB, 6 * GB), "6 GiB - 2 GiB")
    figures.update(extra)
    data = {"log_bytes": 6 * GB, "segments": 1, "records": 1, "batches": 1, "path": "/d"}
    machine = {"cpu_count": 2, "python": "3", "loadavg_before": [], "loadavg_after": []}
    result = {
        "started": "now",
        "command": "c",
        "repeat": 1,
        "data": data,
        "base_data": {**data, "log_bytes": 2 * GB},
        "machine": {**machine, "wall_seconds": 1, "other_cpu_seconds": None},
        "figures": {name: asdict(fig) for name, fig in figures.items()},
        "marginal": rows,
        "targets": module.targets(figures, True),
        "notes": [],
    }
    text = module.markdown(result)
    assert "| lethe audit --master local[1], marginal (6 GiB - 2 GiB) | n/a |" in text
    assert "| lethe verify, marginal (6 GiB - 2 GiB) | 500.0 | 4,000 | 8.00 |" in text
    assert "difference between the best times" in text
    assert "(whole process, for reference)" in text


@pytest.mark.slow
def test_whole_run_with_one_master_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = [sys.executable, str(BENCH_DIR / "audit_bench.py")]
    command += ["--size-gib", "0.004", "--base-gib", "0.002", "--masters", "local[1]"]
    command += ["--data-dir", str(tmp_path / "data"), "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["0.002gib", "0.004gib"]
    result = json.loads((out / "audit.json").read_text())
    whole = {"verify", "verify_deep", "audit_local1"}
    assert set(result["marginal"]) == {name + "_marginal" for name in whole}
    assert result["data"]["log_bytes"] > result["base_data"]["log_bytes"]
    measured = {name for name, row in result["marginal"].items() if row["value"] is not None}
    assert set(result["figures"]) == whole | measured
    assert all(fig["value"] > 0 for fig in result["figures"].values())
    statuses = {row["figure"]: row["status"] for row in result["targets"]}
    assert statuses["audit_local2"] == statuses["audit_local2_marginal"] == "n/a"
    assert statuses["audit_local1"] in ("PASS", "MISS")
    assert statuses["audit_local1_marginal"] in ("PASS", "MISS", "n/a")
    phases = result["detail"]["local[1]"][0]["phases"]
    seen = "\n".join(result["detail"]["local[1]"][0]["stderr"])
    assert set(phases) >= {"start", "decode", "checks", "stop"}, seen
    assert set(result["detail"]["base_runs"]) == {"verify", "verify_deep", "local[1]"}
    scaling = result["detail"]["task_scaling"]
    if len(os.sched_getaffinity(0)) >= 2:  # one CPU, then two at once, same partitions
        assert scaling["bytes"] > 0
        assert scaling["one_cpu_s"] > 0 and scaling["two_cpus_s"] > 0
        # both processes did the whole work: twice the bytes in the slower one's time
        assert scaling["ratio"] == pytest.approx(
            2 * scaling["one_cpu_s"] / scaling["two_cpus_s"], abs=0.02 + 0.01 * scaling["ratio"]
        )
        assert scaling["two_cpus_mb_s"] == pytest.approx(
            2 * scaling["bytes"] / 1e6 / scaling["two_cpus_s"], rel=0.02
        )
    else:
        assert scaling is None
    text = (out / "audit.md").read_text()
    assert "# Audit speed benchmark" in text
    if scaling:
        assert f"{scaling['ratio']}x: what this machine's two CPUs give this code" in text
    assert "lethe audit --master local[1], marginal (0.004 GiB - 0.002 GiB)" in text
