"""The codec benchmark harness runs end to end on a few iterations (no timing assertions).

It must measure all four steps with both codecs, and it fails by itself when
the fast path and the Construct path disagree or the 1 MiB record set is copied.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
CASES = {
    "produce_request_decode",
    "produce_response_encode",
    "fetch_request_decode",
    "fetch_response_encode",
}


def test_tiny_codec_run_writes_both_paths_of_every_step(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = [sys.executable, str(BENCH_DIR / "codec_bench.py"), "--iterations", "10"]
    command += ["--repeat", "1", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    result = json.loads((out / "codec.json").read_text())
    assert set(result["cases"]) == CASES
    for row in result["cases"].values():
        assert row["construct_us"] > 0
        assert row["fast_us"] > 0
    share = result["produce_share"]
    assert share["construct_us"] == (
        result["cases"]["produce_request_decode"]["construct_us"]
        + result["cases"]["produce_response_encode"]["construct_us"]
    )
    assert "| Fetch v16 response encode (1 MiB records) |" in (out / "codec.md").read_text()
