"""Damaged files of every kind never crash ``lethe verify`` or ``lethe dump``.

Golden files are damaged deterministically (bit flips, truncation, zeroed or
inserted bytes); verify must answer with problem lines only (exit 0 or 1, no
"unexpected" fence line, nothing on stderr) and dump must finish with exit 0 or
1 and no traceback.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from tools_support import MUTATIONS, Run, mutate_bytes

SOURCES = [
    "codecs/golden-codecs-0/00000000000000000000.log",
    "codecs/golden-codecs-0/00000000000000000022.log",
    "codecs/golden-codecs-0/00000000000000000000.index",
    "codecs/golden-codecs-0/00000000000000000000.timeindex",
    "codecs/golden-codecs-0/00000000000000000037.snapshot",
    "codecs/golden-codecs-0/leader-epoch-checkpoint",
    "codecs/golden-codecs-0/partition.metadata",
    "transactions/pass0/golden-txn-0/00000000000000000009.txnindex",
    "transactions/pass0/golden-txn-0/00000000000000000009.log",
    "compaction/pass1/golden-compact-0/00000000000000000000.log",
    "delete-records/replication-offset-checkpoint",
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("how", MUTATIONS)
@pytest.mark.parametrize("source", SOURCES)
def test_damaged_file_gives_problem_lines_not_a_crash(
    source: str, how: str, seed: int, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    original = fixtures_root() / "golden" / source
    partition = tmp_path / original.parent.name
    shutil.copytree(original.parent, partition, ignore=shutil.ignore_patterns("*.json", "*.txt"))
    target = partition / original.name
    rng = random.Random(f"{source}:{how}:{seed}")
    target.write_bytes(mutate_bytes(original.read_bytes(), how, rng))

    run = lethe("verify", "--deep", str(tmp_path))
    assert run.status in (0, 1)
    assert run.err == ""
    assert not [line for line in run.lines if "unexpected" in line]
    assert all(": " in line for line in run.lines)

    dump = lethe("dump", "--print-data-log", str(target))
    assert dump.status in (0, 1)
    assert "Traceback" not in dump.err
    assert dump.lines[0] == f"Dumping {target}"
