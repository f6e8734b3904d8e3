"""The formats benchmark harness works end to end on a tiny segment (no timing assertions).

The record counts every reader must find are what the generator produced
(its batch-size schedule and per-record specs), and kafka-python / aiokafka
are independent readers of the same bytes, so agreement among them is a
check on lethe rather than lethe checking itself.
"""

from __future__ import annotations

import importlib
import itertools
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
#: kafka-python reads its protocol schemas with a deprecated importlib API at import.
pytestmark = [
    pytest.mark.filterwarnings("ignore:open_text is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:read_text is deprecated:DeprecationWarning"),
]

READER_COUNTS = ("lethe_c", "lethe_python", "kafka_python", "aiokafka", "scan_headers")


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    """The harness modules, imported the way ``python benchmarks/formats_bench.py`` does."""
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import bench_data
    import bench_readers
    import bench_report
    import bench_timing

    return {
        "data": bench_data,
        "readers": bench_readers,
        "report": bench_report,
        "timing": bench_timing,
    }


def test_harness_run_on_2mib_segment_writes_results_with_agreeing_readers(tmp_path: Path) -> None:
    out, data = tmp_path / "results", tmp_path / "data"
    command = [sys.executable, str(BENCH_DIR / "formats_bench.py"), "--size-mib", "2"]
    command += ["--repeat", "1", "--construct-mib", "0.25", "--out", str(out)]
    done = subprocess.run(
        [*command, "--data-dir", str(data)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "formats.json").read_text())
    segment = result["segment"]
    assert segment["size"] >= 2 * 1024 * 1024
    assert segment["size"] == (data / "bench-0" / "00000000000000000000.log").stat().st_size
    assert {name: result["counts"][name] for name in READER_COUNTS} == dict.fromkeys(
        READER_COUNTS, segment["records"]
    )
    assert 0 < result["counts"]["construct_slice"] < segment["records"]
    for key in ("cpu_count", "python", "lethe_implementation", "aiokafka_c", "other_cpu_seconds"):
        assert key in result["machine"]
    statuses = [row["status"] for row in result["targets"]]
    assert statuses and set(statuses) <= {"PASS", "MISS"}
    table = (out / "formats.md").read_text()
    assert table.count("**PASS**") + table.count("**MISS**") == len(statuses)


def test_generated_record_count_follows_the_batch_size_schedule(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    segment = bench["data"].ensure_segment(tmp_path, 200_000)
    sizes = list(itertools.islice(bench["data"].batch_sizes(), segment.batches))
    assert segment.records == sum(sizes)
    assert all(100 <= size <= 200 for size in sizes)
    assert segment.size >= 200_000


def test_segment_is_reused_when_intact_and_rebuilt_when_changed(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    first = bench["data"].ensure_segment(tmp_path, 100_000)
    path = Path(first.path)
    stamp = path.stat().st_mtime_ns
    assert bench["data"].ensure_segment(tmp_path, 100_000) == first
    assert path.stat().st_mtime_ns == stamp
    raw = bytearray(path.read_bytes())
    raw[100] ^= 0xFF
    path.write_bytes(bytes(raw))
    rebuilt = bench["data"].ensure_segment(tmp_path, 100_000)
    assert rebuilt.sha256 == first.sha256
    assert path.read_bytes() != bytes(raw)


def test_every_reader_sees_the_generated_records(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    segment = bench["data"].ensure_segment(tmp_path, 60_000)
    data = Path(segment.path).read_bytes()
    counts = {name: reader(data) for name, reader in bench["readers"].READERS.items()}
    assert counts == dict.fromkeys(bench["readers"].READERS, segment.records)
    memory_records = importlib.import_module("kafka.record").MemoryRecords(data)
    first = next(iter(memory_records.next_batch()))
    spec = bench["data"].record_spec(0)
    assert (first.offset, first.timestamp, first.key, first.value) == (
        0,
        spec.timestamp,
        spec.key,
        spec.value,
    )
    assert len(spec.value) == 100
    assert [(k.encode(), v) for k, v in first.headers] == [(h.key, h.value) for h in spec.headers]


def test_best_of_rejects_runs_that_disagree(bench: dict[str, ModuleType]) -> None:
    results = iter([10, 9])
    with pytest.raises(bench["timing"].BenchError):
        bench["timing"].best_of(2, lambda: next(results))


def test_targets_pass_at_the_threshold_and_miss_below_it(bench: dict[str, ModuleType]) -> None:
    report = bench["report"]
    figures = {
        "fast": report.Figure("fast", "fast", 5.0, "M records/s", 1.0),
        "slow": report.Figure("slow", "slow", 1.0, "M records/s", 1.0),
    }
    targets = [
        report.Target("fast", "fixed, met exactly", 5.0),
        report.Target("fast", "5 x slow", relative_to="slow", factor=5.0),
        report.Target("fast", "6 x slow", relative_to="slow", factor=6.0),
        report.Target("missing", "no figure", 1.0),
    ]
    rows = report.evaluate(targets, figures)
    assert [row["status"] for row in rows] == ["PASS", "PASS", "MISS", "n/a"]
    assert rows[2]["required"] == 6.0
