"""The broker benchmark harness works end to end on a tiny run (no timing assertions).

The expected counts and bytes are what the command line asked for (2,000
records of 1,024-byte values with 8-byte keys per throughput phase; the
fixed-rate phases ``rate x seconds`` records); the consumer's figures come from
what librdkafka handed back, so producer, broker and consumer must all agree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from array import array
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
RECORDS, VALUE_SIZE, KEY_SIZE = 2000, 1024, 8
RATE, RATE_SECONDS = 1000, 0.5
REPEAT = 2


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    """The harness modules, imported the way ``python benchmarks/broker_bench.py`` does."""
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import bench_broker_profile
    import broker_bench

    return {"main": broker_bench, "profile": bench_broker_profile}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One tiny benchmark run against a real ``lethe broker`` process; its results dir."""
    out = tmp_path_factory.mktemp("broker-results")
    command = [sys.executable, str(BENCH_DIR / "broker_bench.py"), "--records", str(RECORDS)]
    command += ["--rate", str(RATE), "--rate-seconds", str(RATE_SECONDS), "--no-profile"]
    command += ["--repeat", str(REPEAT)]
    command += ["--out", str(out), "--work-dir", str(tmp_path_factory.mktemp("broker-work"))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, json.loads((out / "broker.json").read_text())


def test_tiny_run_consumes_exactly_the_records_and_bytes_it_produced(
    tiny_run: tuple[Path, dict[str, Any]],
) -> None:
    _, result = tiny_run
    phases = result["phases"]
    for name in (
        "produce_acks1",
        "produce_acksall",
        "consume",
        "consume_fetch_1mib",
        "consume_fetch_16mib",
        "produce_acks1#2",
        "consume_fetch_16mib#2",
    ):
        assert (
            phases[name]["records"],
            phases[name]["value_bytes"],
            phases[name]["key_bytes"],
        ) == (RECORDS, RECORDS * VALUE_SIZE, RECORDS * KEY_SIZE), name
    for name in ("latency_acks1", "latency_acksall"):
        assert phases[name]["records"] == RATE * RATE_SECONDS
    assert phases["produce_acks1"]["log_bytes"] > RECORDS * (VALUE_SIZE + KEY_SIZE)
    assert phases["produce_acksall"]["acks"] == "all"
    assert [phases[name]["max_partition_fetch_bytes"] for name in phases if "fetch" in name] == [
        1 << 20,
        16 << 20,
    ] * REPEAT
    assert "produce_acks1#3" not in phases


def test_a_figure_is_the_lower_median_of_its_runs_with_their_spread(
    tiny_run: tuple[Path, dict[str, Any]],
) -> None:
    _, result = tiny_run
    phases, figures = result["phases"], result["figures"]
    for name in ("produce_acksall", "consume"):
        rates = sorted(phases[run]["mb_per_s"] for run in (name, f"{name}#2"))
        figure = figures[f"{name}_mb"]
        assert figure["runs"] == rates
        assert figure["value"] == rates[0]  # the lower of two: a run that happened
        assert f"median of {REPEAT} runs" in figure["note"]


def test_tiny_run_reports_every_target_and_latency(tiny_run: tuple[Path, dict[str, Any]]) -> None:
    out, result = tiny_run
    statuses = [row["status"] for row in result["targets"]]
    assert len(statuses) == 3 and set(statuses) <= {"PASS", "MISS"}
    for key in ("latency_max_acks1_p99", "latency_acksall_p99", "consume_mb", "produce_acks1_rec"):
        assert result["figures"][key]["value"] > 0
    latency = result["phases"]["latency_acks1"]["latency"]
    assert 0 < latency["p50"] <= latency["p99"] <= latency["max"]
    assert result["profiles"] == {}
    table = (out / "broker.md").read_text()
    assert table.count("**PASS**") + table.count("**MISS**") == 3
    assert "Not profiled in this run." in table


def test_render_adds_notes_and_keeps_the_figures(tiny_run: tuple[Path, dict[str, Any]]) -> None:
    out, result = tiny_run
    command = [sys.executable, str(BENCH_DIR / "broker_bench.py"), "--render"]
    command += [str(out / "broker.json"), "--note", "profile read by hand"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    again = json.loads((out / "broker.json").read_text())
    assert again["figures"] == result["figures"]
    assert again["notes"] == [*result["notes"], "profile read by hand"]
    assert "- profile read by hand" in (out / "broker.md").read_text()


def test_latency_percentiles_are_nearest_rank(bench: dict[str, ModuleType]) -> None:
    run = bench["main"].clients.ProduceRun(100)
    run.latency_s = array("d", [ms / 1000 for ms in range(100, 0, -1)])
    run.rdkafka_latency_s = array("d", [0.001] * 100)
    figures = bench["main"]._percentiles(run)
    assert (figures["p50"], figures["p99"], figures["max"]) == (0.05, 0.099, 0.1)
    assert figures["p99.9"] == 0.1
    assert figures["rdkafka_p99"] == 0.001


ROOT = "<module> (lethe:8);_pump (lethe_reference/server/app.py:136)"
RAW = (
    f"{ROOT};frame (lethe_formats/protocol/framing.py:34) 30\n"
    f"{ROOT};select (selectors.py:468) 10\n"
    "<module> (lethe:8);_pump (lethe_reference/server/app.py:140);"
    "frame (lethe_formats/protocol/framing.py:35) 10\n"
)


def test_profile_summary_folds_lines_and_drops_entry_wrappers(
    bench: dict[str, ModuleType],
) -> None:
    summary = bench["profile"].summarise(RAW, rate=100)
    assert (summary["samples"], summary["busy_seconds"]) == (50, 0.5)
    shares = {
        name: {row["name"]: row["share"] for row in summary[name]}
        for name in ("self", "inclusive", "areas")
    }
    frame = "frame (lethe_formats/protocol/framing.py)"
    assert shares["self"] == {frame: 0.8, "select (selectors.py)": 0.2}
    assert shares["areas"] == {"lethe_formats/protocol": 0.8, "selectors": 0.2}
    # _pump is in every sample (an entry wrapper) and <module> is not lethe code
    assert shares["inclusive"] == {frame: 0.8}
