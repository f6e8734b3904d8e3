"""The conformance benchmark harness works end to end on a tiny run (no timing assertions).

One scenario, one run per command: both the pytest plugin (two xdist workers)
and ``lethe conformance run`` must report exactly that scenario, passed, and
the results files must carry both figures, the target row and the scenario's
share of the time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
SCENARIO = "kip107-list-offsets-duplicate-partition"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The harness module, imported the way ``python benchmarks/conformance_bench.py`` does."""
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import conformance_bench

    return conformance_bench


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("conformance-results")
    command = [sys.executable, str(BENCH_DIR / "conformance_bench.py"), "--repeat", "1"]
    command += ["--scenario", SCENARIO, "--out", str(out), "--note", "harness test"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, json.loads((out / "conformance.json").read_text())


def test_tiny_run_times_both_commands_on_exactly_the_chosen_scenario(
    tiny_run: tuple[Path, dict[str, Any]],
) -> None:
    _, result = tiny_run
    pytest_runs = result["figures"]["pytest_xdist"]["runs"]
    cli_runs = result["figures"]["cli"]["runs"]
    assert [(r["exit_status"], r["outcomes"]) for r in pytest_runs] == [(0, {"passed": 1})]
    assert [(r["exit_status"], r["outcomes"]) for r in cli_runs] == [(0, {"pass": 1})]
    assert result["figures"]["pytest_xdist"]["median"] == pytest_runs[0]["seconds"] > 0
    assert all(r["cpu_seconds"] > 0 for r in pytest_runs + cli_runs)
    assert [row["scenario"] for row in result["slowest"]] == [SCENARIO]


def test_tiny_run_writes_the_target_row_notes_and_markdown(
    tiny_run: tuple[Path, dict[str, Any]],
) -> None:
    out, result = tiny_run
    (row,) = result["targets"]
    assert row["required_max_seconds"] == 60.0
    assert row["status"] == ("PASS" if row["measured_seconds"] < 60.0 else "MISS")
    assert "harness test" in result["notes"]
    assert any("not the full suite" in note for note in result["notes"])
    assert "--out" not in result["command"] and "harness test" not in result["command"]
    markdown = (out / "conformance.md").read_text()
    assert f"`{SCENARIO}`" in markdown and f"**{row['status']}**" in markdown


def test_pytest_summary_counts_are_read_from_the_last_summary_line(bench: ModuleType) -> None:
    stdout = "....s\n[gw0] note in passing\n4 passed, 1 skipped, 2 xfailed in 12.31s\n"
    assert bench.pytest_outcomes(stdout) == {"passed": 4, "skipped": 1, "xfailed": 2}
    assert bench.pytest_outcomes("") == {}


def test_the_median_of_three_runs_is_the_figure(bench: ModuleType) -> None:
    runs = [bench.Run(9.0, 0), bench.Run(3.0, 0), bench.Run(5.0, 1)]
    assert bench.Measured("x", "x", "x", runs).median == 5.0


def test_a_run_that_did_not_finish_fails_the_benchmark(bench: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(bench.BenchError, match="exited 2"):
        bench._timed([sys.executable, "-c", "raise SystemExit(2)"], tmp_path)
