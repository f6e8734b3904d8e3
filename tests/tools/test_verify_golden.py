"""``lethe verify`` finds nothing wrong in what Kafka 4.0 wrote.

Every golden capture (each case, each compaction/transaction pass) is a log
dir left by a cleanly stopped broker, so every check must pass on it: a check
that trips here is a wrong check, not a finding.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from tools_support import Run

CAPTURES = sorted(
    path.parent.relative_to(fixtures_root() / "golden").as_posix()
    for path in (fixtures_root() / "golden").rglob("meta.properties")
)
GOLDEN_FILES = sorted(
    path.relative_to(fixtures_root() / "golden").as_posix()
    for path in (fixtures_root() / "golden").rglob("*")
    if path.is_file()
    and (
        (
            path.suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
            and path.name[0].isdigit()
        )
        or path.name.endswith("checkpoint")
        or path.name in ("partition.metadata", "meta.properties")
    )
)


def test_every_capture_is_listed() -> None:
    # codecs, delete-records, consumer-offsets; compaction pass0-2; transactions pass0-3
    # (the wire case recorded frames, not a log dir)
    assert len(CAPTURES) == 10


@pytest.mark.parametrize("capture", CAPTURES)
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_golden_log_dir_verifies_clean(
    capture: str, deep: bool, golden: Path, lethe: Callable[..., Run]
) -> None:
    run = lethe("verify", *(["--deep"] if deep else []), str(golden / capture))
    assert run.out == ""
    assert run.err == ""
    assert run.status == 0


def test_all_golden_dirs_at_once_verify_clean(golden: Path, lethe: Callable[..., Run]) -> None:
    run = lethe("verify", str(golden))
    assert (run.status, run.out) == (0, "")


@pytest.mark.parametrize("relative", GOLDEN_FILES)
def test_each_golden_file_alone_verifies_clean(
    relative: str, golden: Path, lethe: Callable[..., Run]
) -> None:
    run = lethe("verify", str(golden / relative))
    assert (run.status, run.out) == (0, "")
