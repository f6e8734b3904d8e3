"""Author the format cases in ``fixtures/formats/`` (``python -m ...authoring [--check]``).

Theory of operation
-------------------
The cases are data, committed to the repository; this script is how they were
made and how anyone can check that they still follow from their sources. It
never imports ``lethe_formats``: expected values come either from Kafka's own
files and output (golden segments held to ``dump.txt`` and ``case.json``, see
:mod:`.authoring_golden`) or from field values that the script itself encodes
with ``struct`` (:mod:`.authoring_built`, :mod:`.authoring_text`). Invalid
cases are valid ones with one documented change (:mod:`.authoring_invalid`,
:mod:`.authoring_invalid_files`).

``--check`` rewrites nothing: it reports every case file that differs from
what the script would write, is missing, or is not the script's, and exits 1
if there is any. Output is deterministic (no clock, fixed compression
settings, members in a fixed order), so a clean checkout always checks clean.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from lethe_conformance.formats.authoring_built import built_batches, built_records
from lethe_conformance.formats.authoring_built_files import (
    built_control_records,
    built_indexes,
    built_segments,
)
from lethe_conformance.formats.authoring_cases import Authored
from lethe_conformance.formats.authoring_golden import (
    golden_batches,
    golden_control_records,
    golden_segments,
)
from lethe_conformance.formats.authoring_golden_files import (
    golden_checkpoints,
    golden_indexes,
    golden_snapshots,
)
from lethe_conformance.formats.authoring_invalid import (
    batch_invalid,
    control_invalid,
    record_invalid,
)
from lethe_conformance.formats.authoring_invalid_files import (
    index_invalid,
    segment_invalid,
    snapshot_invalid,
)
from lethe_conformance.formats.authoring_text import checkpoint_cases, partition_metadata_cases
from lethe_conformance.formats.cases import default_fixtures_root

__all__ = ["author", "check", "main", "render", "write"]


def author(fixtures: Path) -> list[Authored]:
    """Every case, valid ones first, in a stable order."""
    cases = [
        *golden_batches(fixtures),
        *built_batches(),
        *built_records(),
        *golden_control_records(fixtures),
        *built_control_records(),
        *golden_segments(fixtures),
        *built_segments(),
        *golden_indexes(fixtures),
        *built_indexes(),
        *golden_snapshots(fixtures),
        *golden_checkpoints(fixtures),
        *checkpoint_cases(),
        *partition_metadata_cases(),
    ]
    by_stem = {case.stem: case for case in cases}
    assert len(by_stem) == len(cases), "two cases share a file name"
    derived = [
        *batch_invalid(
            by_stem["record-batch/valid/codec-none-headers-and-nulls"],
            by_stem["record-batch/valid/codec-gzip"],
            by_stem["record-batch/valid/built-two-records"],
        ),
        *record_invalid(by_stem["record/valid/plain"]),
        *control_invalid(by_stem["control-record/valid/commit"]),
        *segment_invalid(by_stem),
        *index_invalid(by_stem),
        *snapshot_invalid(by_stem),
    ]
    everything = cases + derived
    assert len({case.stem for case in everything}) == len(everything), "duplicate file name"
    descriptions = [case.case["description"] for case in everything]
    assert len(set(descriptions)) == len(descriptions), "descriptions must be unique"
    return everything


def render(case: Authored) -> str:
    """The file text of a case."""
    return json.dumps(case.case, indent=2, ensure_ascii=False) + "\n"


def _existing(cases_dir: Path) -> set[Path]:
    return {p for p in cases_dir.glob("*/*/*.json")}


def check(fixtures: Path, cases: Sequence[Authored]) -> list[str]:
    """Differences between the committed case files and ``cases``."""
    cases_dir = fixtures / "formats"
    problems = []
    wanted = {cases_dir / f"{case.stem}.json": render(case) for case in cases}
    for path, text in wanted.items():
        if not path.exists():
            problems.append(f"missing: {path.relative_to(fixtures)}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"differs: {path.relative_to(fixtures)}")
    for path in sorted(_existing(cases_dir) - set(wanted)):
        problems.append(f"not authored: {path.relative_to(fixtures)}")
    return problems


def write(fixtures: Path, cases: Sequence[Authored]) -> int:
    """Write every case file and remove stale ones; returns the number written."""
    cases_dir = fixtures / "formats"
    wanted = {cases_dir / f"{case.stem}.json": render(case) for case in cases}
    for path in _existing(cases_dir) - set(wanted):
        path.unlink()
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return len(wanted)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--fixtures", type=Path, default=None, help="fixtures/ directory")
    args = parser.parse_args(argv)
    fixtures = args.fixtures or default_fixtures_root()
    cases = author(fixtures)
    if args.check:
        problems = check(fixtures, cases)
        for problem in problems:
            print(problem)
        print(f"{len(cases)} cases, {len(problems)} problems")
        return 1 if problems else 0
    print(f"wrote {write(fixtures, cases)} cases to {fixtures / 'formats'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
