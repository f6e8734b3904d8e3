"""The memory benchmark harness works end to end on a tiny run (no memory or timing
assertions: those are the benchmark's figures, not a test's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import memory_bench

    return memory_bench


def test_tiny_run_records_an_rss_series_and_the_load_it_served(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = [sys.executable, str(BENCH_DIR / "memory_bench.py"), "--seconds", "4"]
    command += ["--clients", "2", "--rate", "20", "--partitions", "1", "--sample-s", "0.5"]
    command += ["--out", str(out), "--work-dir", str(tmp_path / "work")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((out / "broker_memory.json").read_text())
    times = [sample["t"] for sample in result["series"]]
    assert len(times) == 8 and times == sorted(times)
    assert all(s["rss_mb"] >= s["anon_mb"] > 0 for s in result["series"])
    assert result["produced"] > 0 and result["log_bytes"] >= result["produced"] * 20
    assert result["status"] in {"PASS", "MISS"}
    assert (out / "broker_memory.svg").read_text().count("<polyline") == 2
    assert "RSS growth over the second half" in (out / "broker_memory.md").read_text()


def test_growth_compares_the_last_tenth_with_the_tenth_after_the_middle(bench: ModuleType) -> None:
    flat_then_up = [{"rss_mb": 50.0} for _ in range(50)] + [{"rss_mb": 50.0 + i} for i in range(50)]
    # the tenth after the middle: samples 50..59 (50..59 MB); the last: 90..99 (90..99 MB)
    assert bench.growth_mb(flat_then_up) == pytest.approx(40.0)
    assert bench.growth_mb([{"rss_mb": 7.0}] * 30) == 0.0
