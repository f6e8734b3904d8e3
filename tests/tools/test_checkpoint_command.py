"""``lethe checkpoint read|write|validate`` on Kafka's checkpoint files.

Expected file contents and messages come from Kafka: the golden checkpoint
files themselves (written by CheckpointFile), the values the golden README
states, and CheckpointFile's error wording (kafka-facts 1.4).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from tools_support import Run

GOLDEN_CHECKPOINTS = sorted(
    p.relative_to(fixtures_root() / "golden").as_posix()
    for p in (fixtures_root() / "golden").rglob("*checkpoint")
)


def test_read_log_start_checkpoint(golden: Path, lethe: Callable[..., Run]) -> None:
    # README: it reads `0 / 2 / golden-delrec 0 19 / golden-delrec 2 30`
    run = lethe("checkpoint", "read", str(golden / "delete-records/log-start-offset-checkpoint"))
    assert run.lines == [
        "version: 0",
        "entries: 2",
        "topic: golden-delrec partition: 0 offset: 19",
        "topic: golden-delrec partition: 2 offset: 30",
    ]
    assert run.status == 0


def test_read_leader_epoch_checkpoint_as_json(golden: Path, lethe: Callable[..., Run]) -> None:
    # README: leader-epoch-checkpoint moves the start offset of epoch 0 to the log start (19)
    path = golden / "delete-records/golden-delrec-0/leader-epoch-checkpoint"
    run = lethe("checkpoint", "read", "--json", str(path))
    assert json.loads(run.out) == {
        "type": "checkpoint",
        "path": str(path),
        "kind": "leader-epoch",
        "version": 0,
        "entries": [{"epoch": 0, "start_offset": 19}],
    }


@pytest.mark.parametrize("name", GOLDEN_CHECKPOINTS)
def test_read_json_then_write_reproduces_the_golden_file_byte_for_byte(
    name: str, golden: Path, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    source = golden / name
    document = tmp_path / "entries.json"
    document.write_text(lethe("checkpoint", "read", "--json", str(source)).out)
    target = tmp_path / source.name
    run = lethe("checkpoint", "write", str(target), "--from-json", str(document))
    assert run.status == 0
    assert target.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [source.name, "entries.json"]
    )  # no .tmp


def test_write_entries_in_kafkas_format(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    target = tmp_path / "replication-offset-checkpoint"
    run = lethe(
        "checkpoint", "write", str(target), "--entry", "foo", "0", "42", "--entry", "bar", "3", "7"
    )
    assert run.status == 0
    assert target.read_text() == "0\n2\nfoo 0 42\nbar 3 7\n"  # kafka-facts 1.4 example


def test_write_leader_epochs_with_explicit_kind(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    target = tmp_path / "epochs"
    run = lethe("checkpoint", "write", str(target), "--kind", "leader-epoch", "--entry", "0", "19")
    assert (run.status, target.read_text()) == (0, "0\n1\n0 19\n")
    assert lethe("checkpoint", "read", "--kind", "leader-epoch", str(target)).lines == [
        "version: 0",
        "entries: 1",
        "epoch: 0 startOffset: 19",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--entry", "foo", "0"], "entry 'foo 0': expected TOPIC PARTITION OFFSET"),
        (["--entry", "foo", "x", "1"], "partition 'x' is not an integer"),
        (["--entry", "foo", "0", str(2**63)], f"offset {2**63} does not fit in"),
        (["--entry", "a b", "0", "1"], "topic 'a b' is empty or has whitespace"),
    ],
)
def test_write_rejects_bad_entries_and_writes_nothing(
    args: list[str], message: str, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    target = tmp_path / "cleaner-offset-checkpoint"
    run = lethe("checkpoint", "write", str(target), *args)
    assert run.status == 2
    assert message in run.err
    assert not target.exists()


def test_write_needs_a_kind_for_unknown_names(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    run = lethe("checkpoint", "write", str(tmp_path / "x"), "--entry", "a", "0", "1")
    assert run.status == 2
    assert "cannot tell the checkpoint format from the file name" in run.err


def test_validate_every_golden_text_file(golden: Path, lethe: Callable[..., Run]) -> None:
    files = [
        str(p)
        for p in golden.rglob("*")
        if p.name.endswith("checkpoint") or p.name in ("partition.metadata", "meta.properties")
    ]
    assert len(files) > 50
    run = lethe("checkpoint", "validate", *files)
    assert (run.status, run.out, run.err) == (0, "", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "1\n0\n",
            "line 1: byte 0: version: Unrecognised version:1, expected version: 0 in "
            "checkpoint file at: {path}",
        ),
        ("zero\n0\n", "line 1: byte 0: version: Malformed line in checkpoint file [{path}]: zero"),
        (
            "0\n1\nfoo 0\n",
            "line 3: byte 4: entry: Malformed line in checkpoint file [{path}]: foo 0",
        ),
        (
            "0\n2\nfoo 0 1\n",
            "line 2: byte 2: count: Expected [2] entries in checkpoint file "
            "[{path}], but found only [1]",
        ),
        ("0\n1\nfoo 0 x\n", 'line 3: byte 4: entry: For input string: "x"'),
    ],
)
def test_validate_reports_kafkas_reason(
    text: str, expected: str, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text(text)
    run = lethe("checkpoint", "validate", str(path))
    assert run.lines == [f"{path}: " + expected.format(path=path)]
    assert run.status == 1


def test_golden_checkpoints_are_all_covered() -> None:
    # 4 offset checkpoints in each of the 10 log dirs, 15 partition leader-epoch files
    assert len(GOLDEN_CHECKPOINTS) == 55


def test_validate_empty_file_is_valid(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    path = tmp_path / "cleaner-offset-checkpoint"
    path.write_bytes(b"")  # CheckpointFile reads an empty file as no entries
    assert lethe("checkpoint", "validate", str(path)).status == 0
    assert lethe("checkpoint", "read", str(path)).lines == [f"{path} is empty."]
