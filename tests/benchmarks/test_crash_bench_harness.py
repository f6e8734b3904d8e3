"""The kill -9 loop harness works end to end on a tiny run (no timing assertions).

Two crash cycles of a real ``lethe broker`` process with an idempotent
confluent-kafka producer: every record the command line asked for is produced
and acknowledged, none is lost or read twice, and ``lethe verify`` passes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
CYCLES, RECORDS = 2, 60


def test_tiny_crash_loop_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = [sys.executable, str(BENCH_DIR / "crash_bench.py"), "--cycles", str(CYCLES)]
    command += ["--records", str(RECORDS), "--port", "0", "--out", str(out)]
    command += ["--work-dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    result = json.loads((out / "crash.json").read_text())
    tally = result["tally"]
    assert (tally["cycles"], tally["produced"], tally["acked"]) == (
        CYCLES,
        CYCLES * RECORDS,
        CYCLES * RECORDS,
    )
    faults = ("lost", "duplicates", "misplaced", "verify_failures", "failed_deliveries")
    assert [tally[key] for key in faults] == [0] * len(faults)
    assert result["pass"] is True
    assert all(name.endswith(".snapshot") for name in result["snapshots"])
    assert "| kill -9 cycles | 2 |" in (out / "crash.md").read_text()
