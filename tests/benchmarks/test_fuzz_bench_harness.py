"""The protocol fuzzer: its frames, and a short bounded run against ``lethe broker``.

The bounded run (3,000 fuzzed frames over 4 connections, no timing asserted) is
issue 12's fuzzer target in small: the broker process must still run after
every batch, answer the liveness probe after every batch and every stall, print
no traceback, stop cleanly on SIGTERM, and leave a log dir ``lethe verify``
finds clean. Memory is sampled but not judged here (too few samples).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
FRAMES, BATCH = 3000, 250


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``fuzz_frames``, imported the way ``python benchmarks/fuzz_bench.py`` does."""
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import fuzz_frames

    return fuzz_frames


@pytest.fixture(scope="module")
def bounded_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("fuzz-results")
    command = [sys.executable, str(BENCH_DIR / "fuzz_bench.py"), "--frames", str(FRAMES)]
    command += ["--batch", str(BATCH), "--workers", "4", "--seed", "7"]
    command += ["--target-frames", str(FRAMES), "--rss-growth-mib", "1000000"]
    command += ["--out", str(out), "--work-dir", str(tmp_path_factory.mktemp("fuzz-work"))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    result = json.loads((out / "fuzz.json").read_text())
    assert done.returncode == 0, (done.stderr[-3000:], result["targets"])
    return out, result


def test_bounded_run_sends_every_frame_without_crash_hang_or_traceback(
    bounded_run: tuple[Path, dict[str, Any]],
) -> None:
    _, result = bounded_run
    assert result["frames"] == FRAMES
    assert sum(result["outcomes"].values()) == FRAMES
    assert sum(result["strategies"].values()) == FRAMES
    assert result["failure"] is None
    assert (result["crashed"], result["stop_error"]) == (False, "")
    assert result["stderr"]["tracebacks"] == 0
    assert result["verify"]["exit_status"] == 0, result["verify"]
    # one sample before the first batch and one after each
    assert len(result["rss_samples"]) == FRAMES // BATCH + 1
    assert all(sample["rss_kib"] > 0 for sample in result["rss_samples"])


def test_bounded_run_exercises_every_strategy_and_both_connection_outcomes(
    bounded_run: tuple[Path, dict[str, Any]], frames: ModuleType
) -> None:
    _, result = bounded_run
    assert set(result["strategies"]) == set(frames.STRATEGIES)
    # frames the broker answered (connection kept) and frames it closed the connection on
    assert result["outcomes"]["answered"] > 0
    assert result["outcomes"]["closed"] > 0
    assert result["outcomes"]["cut"] == result["strategies"]["cut"]
    assert result["connections"] > result["outcomes"]["closed"]


def test_bounded_run_writes_the_report(bounded_run: tuple[Path, dict[str, Any]]) -> None:
    out, result = bounded_run
    rows = {row["target"]: row["status"] for row in result["targets"]}
    assert set(rows.values()) == {"PASS"}
    assert len(rows) == 6
    markdown = (out / "fuzz.md").read_text()
    assert f"{FRAMES:,} fuzzed frames" in markdown
    assert "| fuzzed frames | >= 3,000 | 3000 | **PASS** |" in markdown


def test_the_corpus_holds_golden_frames_and_every_advertised_api_version(
    frames: ModuleType,
) -> None:
    from lethe_formats.protocol.registry import supported_versions

    golden = frames.golden_frames()
    assert len(golden) == 118  # the request frames of fixtures/golden/wire/frames.jsonl
    for _, frame in golden:
        assert struct.unpack(">i", frame[:4])[0] == len(frame) - 4
    built = Counter(label.rsplit(":", 1)[0] for label, _ in frames.encoder_frames())
    expected = {
        f"encoder:{key}v{version}"
        for key, low, high in supported_versions(extensions=True)
        for version in range(low, high + 1)
    }
    assert set(built) == expected
    assert set(built.values()) == {2}  # default and filled body


def test_mutations_are_a_pure_function_of_the_seed(frames: ModuleType) -> None:
    corpus = frames.corpus()
    first = [frames.Mutator(3, corpus).next() for _ in range(200)]
    again = [frames.Mutator(3, corpus).next() for _ in range(200)]
    other = [frames.Mutator(4, corpus).next() for _ in range(200)]
    assert first == again
    assert first != other


def test_mutation_shapes(frames: ModuleType) -> None:
    mutator = frames.Mutator(5, frames.corpus())
    seen: dict[str, list[Any]] = {}
    while len(seen) < len(frames.STRATEGIES) or min(len(v) for v in seen.values()) < 20:
        fuzzed = mutator.next()
        seen.setdefault(fuzzed.strategy, []).append(fuzzed)
    for fuzzed in seen["cut"]:
        assert not fuzzed.complete
        assert (
            len(fuzzed.data) < 4 or struct.unpack(">i", fuzzed.data[:4])[0] > len(fuzzed.data) - 4
        )
    for fuzzed in seen["oversize"]:
        size = struct.unpack(">i", fuzzed.data[:4])[0]
        assert fuzzed.oversize and (size < 0 or size > 104_857_600 or size == 1 << 30)
    for name in ("flip", "overwrite", "truncate", "extend", "splice", "random_body"):
        for fuzzed in seen[name]:
            assert fuzzed.complete and not fuzzed.oversize
            assert struct.unpack(">i", fuzzed.data[:4])[0] == len(fuzzed.data) - 4, name


def test_requests_for_many_partitions_are_recognised(frames: ModuleType) -> None:
    from lethe_formats.protocol.envelope import encode_request
    from lethe_formats.protocol.framing import frame
    from lethe_formats.protocol.headers import RequestHeader
    from lethe_formats.protocol.messages.create_partitions import (
        CreatePartitionsRequest,
        CreatePartitionsTopic,
    )
    from lethe_formats.protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest

    topics = CreateTopicsRequest(topics=(CreatableTopic(name="a", num_partitions=5000),))
    create = frame(encode_request(RequestHeader(19, 7, 1, "t"), topics))
    grow = CreatePartitionsRequest(topics=(CreatePartitionsTopic(name="a", count=300),))
    more = frame(encode_request(RequestHeader(37, 3, 1, "t"), grow))
    assert frames.partitions_requested(create) == 5000
    assert frames.partitions_requested(more) == 300
    assert frames.partitions_requested(create[:-3]) == 0  # undecodable: nothing is created
    # the broker decodes the body's prefix and ignores trailing bytes, so must the filter
    extended = struct.pack(">i", len(create) - 4 + 5) + create[4:] + b"junk!"
    assert frames.partitions_requested(extended) == 5000
    assert frames.partitions_requested(frames.probe_frame(1)) == 0
