"""Discovery lists log dirs and files without opening any, with Kafka's naming rules.

Expected layouts come from the golden README (which cases have which
partitions and segments) and from the directories themselves.
"""

from __future__ import annotations

import builtins
import io
import mmap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import GOLDEN
from lethe_tools.audit.discover import discover, find_logdirs


def test_discovery_never_opens_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"discovery opened {args[:1]}")

    for target, name in ((builtins, "open"), (io, "open"), (mmap, "mmap")):
        monkeypatch.setattr(target, name, refuse)
    inventory = discover([str(GOLDEN)])
    assert Counter(item.kind for item in inventory.items)["log"] > 20


def test_a_folder_of_log_dirs_gives_each_log_dir() -> None:
    found = [Path(logdir).relative_to(GOLDEN) for logdir, _ in find_logdirs(str(GOLDEN))]
    # README: compaction and transactions were captured per pass; wire holds no log dir;
    # consumer-groups/kafka holds one partition dir with its segment and nothing else.
    assert [str(p) for p in found] == [
        "codecs",
        "compaction/pass0",
        "compaction/pass1",
        "compaction/pass2",
        "consumer-groups/kafka",
        "consumer-offsets",
        "delete-records",
        "transactions/pass0",
        "transactions/pass1",
        "transactions/pass2",
        "transactions/pass3",
    ]


def test_delete_records_items_follow_the_files_kafka_left() -> None:
    root = GOLDEN / "delete-records"
    items = discover([str(root)]).items
    logs = sorted((i.partition, i.base_offset, i.is_active) for i in items if i.kind == "log")
    # README: "The segments left were p0 [16, 24, 32], p1 [24, 32], p2 [24]".
    assert logs == [
        (0, 16, False), (0, 24, False), (0, 32, True),
        (1, 24, False), (1, 32, True),
        (2, 24, True),
    ]  # fmt: skip
    checkpoints = sorted(Path(i.path).name for i in items if i.kind == "checkpoint")
    assert checkpoints == sorted(p.name for p in root.glob("*-checkpoint"))
    partitions = [i for i in items if i.kind == "partition"]
    assert [(p.topic, p.partition) for p in partitions] == [("golden-delrec", n) for n in range(3)]
    assert all(p.partition_info and p.partition_info.has_metadata for p in partitions)


def test_a_partition_dir_alone_is_audited_with_its_parent_as_log_dir() -> None:
    part = GOLDEN / "delete-records" / "golden-delrec-1"
    inventory = discover([str(part)])
    assert inventory.logdirs == [str(part.parent)]
    assert {i.partition for i in inventory.items} == {1}
    assert not [i for i in inventory.items if i.kind == "checkpoint"]


def test_unparsable_names_and_missing_paths_become_problem_items(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    (logdir / "orders-0").mkdir(parents=True)
    (logdir / "meta.properties").write_text("version=1\n")
    (logdir / "orders-0" / "42.log").write_bytes(b"")  # Kafka writes 20 digits
    (logdir / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    (logdir / "orders-0" / "00000000000000000000.log.tmp").write_bytes(b"")  # ignored
    (logdir / "no_dash").mkdir()
    items = discover([str(logdir), str(tmp_path / "missing")]).items
    problems = sorted((Path(i.path).name, i.error, i.field) for i in items if i.kind == "problem")
    assert problems == [
        ("42.log", "FileNameError", "base offset"),
        ("missing", "FormatError", "path"),
        ("no_dash", "FileNameError", "directory name"),
    ]
    assert [Path(i.path).name for i in items if i.kind == "log"] == ["00000000000000000000.log"]
