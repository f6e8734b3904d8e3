"""The side-by-side benchmark works end to end on a tiny lethe-only run, and turns
Kafka's perf tool output and paired runs into the figures it reports (no timing
assertions: throughput is the benchmark's figure, not a test's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"

# The summary lines Kafka 4.0's tools print (ProducerPerformance's printTotal,
# ConsumerPerformance's header and printf with --hide-header unset).
PRODUCER_OUTPUT = "\n".join(
    [
        "98234 records sent, 19646.8 records/sec (19.19 MB/sec), 1234.5 ms avg latency, "
        "1500.0 ms max latency.",
        "200000 records sent, 21052.6 records/sec (20.56 MB/sec), 1302.11 ms avg latency, "
        "2250.00 ms max latency, 1220 ms 50th, 2100 ms 95th, 2200 ms 99th, 2240 ms 99.9th.",
    ]
)
CONSUMER_OUTPUT = "\n".join(
    [
        "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
        "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec",
        "2026-11-27 21:20:01:123, 2026-11-27 21:20:09:456, 195.3125, 23.4382, 200000, "
        "24000.9601, 1912, 6421, 30.4178, 31147.8",
    ]
)


@pytest.fixture
def modules(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import bench_kafka_process
    import kafka_compare_bench

    return {"process": bench_kafka_process, "main": kafka_compare_bench}


def test_tool_summaries_are_read_from_kafkas_output(modules: dict[str, ModuleType]) -> None:
    process = modules["process"]
    assert process.producer_summary(PRODUCER_OUTPUT, 200_000) == {
        "records_per_s": 21052.6,
        "mb_per_s": 20.56,
        "avg_latency_ms": 1302.11,
    }
    assert process.consumer_summary(CONSUMER_OUTPUT, 200_000) == {
        "mb_per_s": 23.4382,
        "records_per_s": 24000.9601,
        "rebalance_ms": 1912.0,
        "fetch_ms": 6421.0,
        "fetch_mb_per_s": 30.4178,
    }
    with pytest.raises(process.BenchError, match="no summary"):
        process.producer_summary(PRODUCER_OUTPUT, 300_000)
    with pytest.raises(process.BenchError, match="200000/300000"):
        process.consumer_summary(CONSUMER_OUTPUT, 300_000)


def test_ratios_pair_each_lethe_run_with_the_kafka_run_beside_it(
    modules: dict[str, ModuleType],
) -> None:
    figures = {("lethe", 0): 50.0, ("kafka", 0): 100.0, ("lethe", 1): 90.0, ("kafka", 1): 100.0}
    figures |= {("lethe", 2): 30.0, ("kafka", 2): 40.0}
    runs = [
        {"pair": pair, "broker": broker, "workload": "py_produce", "figures": {"mb_per_s": value}}
        for (broker, pair), value in figures.items()
    ]
    (row,) = modules["main"].summarize(runs, ["lethe", "kafka"])
    assert row["ratios"] == [0.5, 0.9, 0.75]
    assert row["ratio"] == {"min": 0.5, "median": 0.75, "max": 0.9, "n": 3}
    assert row["lethe"] == {"min": 30.0, "median": 50.0, "max": 90.0, "n": 3}


def test_smoke_run_measures_lethe_alone_and_writes_both_files(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = [sys.executable, str(BENCH_DIR / "kafka_compare_bench.py"), "--smoke"]
    command += ["--out", str(out), "--work-dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((out / "kafka_compare.json").read_text())
    assert [(r["workload"], r["broker"]) for r in result["runs"]] == [
        ("py_produce", "lethe"),
        ("py_consume", "lethe"),
        ("py_consume_1mib", "lethe"),
    ]
    assert all(r["figures"]["mb_per_s"] > 0 for r in result["runs"])
    # the broker process's CPU over each run (/proc), beside the client's rate
    assert all(r["figures"]["broker_cpu_s"] >= 0 for r in result["runs"])
    assert [row["figure"] for row in result["summary"]] == [
        "mb_per_s",
        "mb_per_s",
        "mb_per_s",
        "broker_cpu_s",
        "broker_cpu_s",
        "broker_cpu_s",
    ]
    assert result["settings"]["kafka"] is None
    assert result["settings"]["shared_overrides"] == {"group.initial.rebalance.delay.ms": "0"}
    assert all("ratio" not in row for row in result["summary"])
    text = (out / "kafka_compare.md").read_text()
    assert "# lethe broker (no Kafka given)" in text
    assert "--override group.initial.rebalance.delay.ms=0" in text
