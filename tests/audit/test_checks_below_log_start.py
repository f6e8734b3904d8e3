"""Check below-log-start: batches and records on disk below the log start offset.

Expected values come from the golden delete-records case (Kafka's low
watermarks 19/24/30, README + ``log-start-offset-checkpoint``) and from
decoding the segments with lethe_formats directly (checks_support).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from checks_support import (
    Env,
    below_log_start,
    logdirs,
    make_env,
    reclaimable_segments,
    rows,
    under,
)
from conftest import GOLDEN, LOGS
from lethe_tools.audit.checks import below_log_start as check

DELREC = (GOLDEN / "delete-records").resolve()


@pytest.fixture(scope="module")
def env(spark: Any, audit_out: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory) -> Env:
    return make_env(spark, audit_out, tmp_path_factory.mktemp("checks"))


@pytest.fixture(scope="module")
def found(env: Env) -> list[dict[str, Any]]:
    return rows(check.findings(env.tables, env.logs))


def _as_expected(found: list[dict[str, Any]], logdir: Path) -> list[tuple[str, int, int, int]]:
    return sorted((r["file"], r["offset"], r["records"], r["bytes"]) for r in under(found, logdir))


def test_golden_delete_records_batches_below_the_low_watermarks(
    found: list[dict[str, Any]],
) -> None:
    expected = [(b.file, b.offset, b.records, b.bytes) for b in below_log_start(DELREC)]
    assert _as_expected(found, DELREC) == expected
    # Kafka's low watermarks p0=19, p1=24 (a segment base: nothing left below), p2=30
    by_partition = {(r["partition"], r["offset"]) for r in under(found, DELREC)}
    assert by_partition == {(0, 16), (2, 24), (2, 28)}
    assert sum(r["records"] for r in under(found, DELREC)) == 3 + 4 + 2  # 16..18, 24..29


def test_a_start_moved_to_a_segment_base_makes_that_segment_reclaimable(env: Env) -> None:
    moved = env.dirs["delrec-moved"]
    assert _as_expected(rows(check.findings(env.tables, env.logs)), moved) == [
        (b.file, b.offset, b.records, b.bytes) for b in below_log_start(moved)
    ]
    segments = under(rows(check.reclaimable_segments(env.tables, env.logs)), moved)
    assert {r["file"]: r["size"] for r in segments} == reclaimable_segments(moved)
    assert [Path(str(r["file"])).parent.name for r in segments] == ["golden-delrec-1"]


def test_nothing_below_the_start_where_it_equals_the_first_base_offset(
    found: list[dict[str, Any]],
) -> None:
    for case in ("codecs", "compaction", "transactions", "consumer-offsets"):
        root = (GOLDEN / case).resolve()
        assert under(found, root) == []
        assert all(below_log_start(d) == [] for d in logdirs(root))


def test_job_figures_equal_the_single_process_decoding(env: Env) -> None:
    result = env.audit.findings.check("below-log-start")
    expected = [b for root in (GOLDEN, LOGS) for d in logdirs(root) for b in below_log_start(d)]
    assert expected, "the golden delete-records case has batches below its start"
    assert (result.count, result.records, result.bytes) == (
        len(expected),
        sum(b.records for b in expected),
        sum(b.bytes for b in expected),
    )
    reclaimable = sum(
        size
        for root in (GOLDEN, LOGS)
        for d in logdirs(root)
        for size in reclaimable_segments(d).values()
    )
    assert result.metrics["segment_bytes_reclaimable"] == reclaimable
