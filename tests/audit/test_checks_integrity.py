"""Check integrity: CRC failures, wrong index entries, unexplained offset gaps, problems.

Copies of golden codecs, damaged in known ways: a flipped bit in batch 0's
producerId (a CRC-32C mismatch, the batch still decodes), an ``.index``
entry moved 3 bytes into its batch, and the gzip batch (offsets 6..10) cut out
of a segment of this non-compacted topic. Expected findings come from walking
the files with lethe_formats (entry_bounds, index readers, crc32c);
unchanged golden and fixture log dirs must give none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from audit_support import table_rows
from checks_support import Env, integrity, logdirs, make_env, rows, under
from conftest import GOLDEN, LOGS
from lethe_tools.audit.checks import integrity as check
from lethe_tools.inspect.problems import Problems
from lethe_tools.inspect.verify_tree import VerifyOptions, verify_paths


@pytest.fixture(scope="module")
def env(spark: Any, audit_out: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory) -> Env:
    return make_env(spark, audit_out, tmp_path_factory.mktemp("checks"))


@pytest.fixture(scope="module")
def found(env: Env) -> list[dict[str, Any]]:
    return rows(check.findings(env.tables, env.logs))


def _kinds(found: list[dict[str, Any]], logdir: Path) -> set[tuple[str, str, int]]:
    return {
        (str(r["message"]).split(":")[0], str(r["file"]), int(r["offset"]))
        for r in under(found, logdir)
        if not str(r["message"]).startswith("problem:")
    }


def test_flipped_byte_is_a_crc_finding_and_a_problems_row(
    env: Env, found: list[dict[str, Any]]
) -> None:
    damaged = env.dirs["crc-and-index"]
    expected = integrity(damaged)
    assert ("crc", str(damaged / "golden-codecs-0" / f"{0:020d}.log"), 0) in expected
    assert _kinds(found, damaged) == expected
    problems = under(table_rows(env.out, "problems"), damaged)
    # the crc field of batch 0: bytes 17..20 of a v2 batch (kafka-facts 3.1)
    assert [
        (Path(str(p["file"])).name, p["position"], p["field"], p["kind"]) for p in problems
    ] == [(f"{0:020d}.log", 17, "crc", "ChecksumError")]
    assert any(
        str(r["message"]).startswith("problem: ChecksumError") for r in under(found, damaged)
    )


def test_moved_index_entry_is_an_offset_index_finding(
    env: Env, found: list[dict[str, Any]]
) -> None:
    damaged = env.dirs["crc-and-index"]
    index = str(damaged / "golden-codecs-0" / f"{22:020d}.index")
    entries = [r for r in under(found, damaged) if r["file"] == index]
    assert [r["position"] for r in entries] == [0]  # entry 0, byte 0 of the index
    assert "not a batch start" in str(entries[0]["message"])


def test_a_batch_cut_from_a_non_compacted_log_is_a_gap(
    env: Env, found: list[dict[str, Any]]
) -> None:
    cut = env.dirs["gap"]
    expected = integrity(cut)
    assert _kinds(found, cut) == expected
    gaps = [r for r in under(found, cut) if str(r["message"]).startswith("gap")]
    assert [(r["offset"], r["message"]) for r in gaps] == [
        (11, "gap: offsets 6..10 are missing outside the cleaned part")
    ]


def test_unchanged_log_dirs_have_nothing_wrong(found: list[dict[str, Any]]) -> None:
    for root in (GOLDEN, LOGS):
        for logdir in logdirs(root):
            assert integrity(logdir) == set(), logdir
            assert under(found, logdir.resolve()) == [], logdir


def test_job_integrity_result_on_the_fixtures_is_clean(env: Env) -> None:
    result = env.audit.findings.check("integrity")
    assert result.count == 0 and not result.found
    assert all(value == 0 for value in result.metrics.values())


def _verify_places(logdir: Path) -> set[tuple[str, int]]:
    """(file, entry number or batch) of what single-process ``lethe verify`` reports."""
    problems = Problems()
    verify_paths([str(logdir)], VerifyOptions(deep=False), problems)
    places = set()
    for problem in problems:
        size = {".index": 8, ".timeindex": 12}.get(Path(problem.file).suffix)
        position = problem.position or 0
        places.add((problem.file, position // size if size else 0))
    return places


def _audit_places(found: list[dict[str, Any]], logdir: Path) -> set[tuple[str, int]]:
    places = set()
    for row in under(found, logdir):
        if str(row["message"]).startswith("problem:"):
            continue
        size = {".index": 8, ".timeindex": 12}.get(Path(str(row["file"])).suffix)
        places.add((str(row["file"]), int(row["position"]) // size if size else 0))
    return places


@pytest.mark.parametrize("name", ["crc-and-index", "gap"])
def test_index_and_crc_findings_are_where_lethe_verify_reports_problems(
    name: str, env: Env, found: list[dict[str, Any]]
) -> None:
    logdir = env.dirs[name]
    # lethe verify does not judge offset gaps: those are the audit's own
    gaps = {(f, 0) for kind, f, _ in integrity(logdir) if kind == "gap"}
    assert _audit_places(found, logdir) - gaps == _verify_places(logdir)
