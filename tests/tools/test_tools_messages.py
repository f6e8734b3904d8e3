"""Every message of ``lethe verify``, ``dump`` and ``checkpoint`` names file, byte and field,
escapes control characters, and a directory in a file's place is a problem (issue 12 item 4).

Kafka lists only regular files when it loads a log dir but opens the indexes of
its segments, its checkpoints, ``partition.metadata`` and ``meta.properties``
by name: a directory there fails with an IOException and the log dir (for
``meta.properties`` the broker) does not come up; a directory named like a
``.log`` or ``.snapshot`` fails when Kafka creates that file
(``lethe_tools.inspect.misplaced``). The sweep damages every file of two golden
log dirs in many ways, control bytes and directories included, and checks the
form of every line the tools print, the absence of raw control characters, and
the exit statuses.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from lethe_formats.errors import printable
from lethe_formats.fixtures import fixtures_root
from tools_support import Run, mutate_bytes

#: FILE: [line N: ]byte POS: FIELD: message. The field never holds ": ".
LINE_FORM = re.compile(r"(?:line \d+: )?byte \d+: [^:]+(?::[^ ][^:]*)*: \S")
#: C0 controls, DEL and C1 controls: none may reach a terminal raw.
RAW_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: What kafka-dump-log itself prints on stderr (kept byte for byte, paths escaped).
KAFKA_NOTICES = (
    "Ignoring unknown file ",
    "Mismatches in :",
    "  Index offset: ",
    "Found timestamp mismatch in :",
    "  Index timestamp: ",
    "Found out of order timestamp in :",
    "The following indexed offsets are not found in the log.",
    "Indexed offset: ",
    "Non-consecutive offsets in ",
)
CHECKPOINTS = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "leader-epoch-checkpoint",
)
#: Every kind of file Kafka reads by name, as found in the delete-records log dir.
FILE_KINDS = {
    "segment": "golden-delrec-0/00000000000000000016.log",
    "offset index": "golden-delrec-0/00000000000000000016.index",
    "time index": "golden-delrec-0/00000000000000000016.timeindex",
    "producer snapshot": "golden-delrec-0/00000000000000000040.snapshot",
    "leader epoch checkpoint": "golden-delrec-0/leader-epoch-checkpoint",
    "partition.metadata": "golden-delrec-0/partition.metadata",
    "meta.properties": "meta.properties",
    **{name: name for name in CHECKPOINTS[:4]},
}
TXN_INDEX = "transactions/pass0/golden-txn-0/00000000000000000009.txnindex"


def assert_problem_lines(lines: list[str]) -> None:
    """Each line: FILE: [line N: ]byte POS: FIELD: message, nothing raw."""
    for line in lines:
        assert not RAW_CONTROL.search(line), repr(line)
        file, sep, rest = line.partition(": ")
        assert sep and file, line
        # the file name may itself hold ": " only if escaped names do; ours do not
        assert LINE_FORM.match(rest), line


def assert_dump_stderr(lines: list[str]) -> None:
    problems = [line for line in lines if not line.startswith(KAFKA_NOTICES)]
    assert_problem_lines(problems)
    for line in lines:
        assert not RAW_CONTROL.search(line), repr(line)


def replace_with_directory(path: Path) -> None:
    """The file becomes a directory (not empty: Kafka could not even delete it)."""
    path.unlink()
    path.mkdir()
    (path / "inside").write_bytes(b"x")


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    target = tmp_path / "logdir"
    shutil.copytree(fixtures_root() / "golden" / "delete-records", target)
    return target


# -- a directory in a file's place -------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(FILE_KINDS))
def test_a_directory_in_a_files_place_is_a_problem_at_byte_0(
    kind: str, log_dir: Path, lethe: Callable[..., Run]
) -> None:
    path = log_dir / FILE_KINDS[kind]
    replace_with_directory(path)
    expected_start = f"{path}: byte 0: file: is a directory where Kafka expects "
    walked = lethe("verify", str(log_dir))
    assert walked.status == 1
    assert [line for line in walked.lines if line.startswith(f"{path}:")] == [
        line for line in walked.lines if line.startswith(expected_start)
    ]
    assert any(line.startswith(expected_start) for line in walked.lines), walked.lines
    assert_problem_lines(walked.lines)
    direct = lethe("verify", str(path))
    assert (direct.status, len(direct.lines)) == (1, 1)
    assert direct.lines[0].startswith(expected_start)
    dumped = lethe("dump", str(path))
    assert dumped.status == 1
    assert dumped.err.splitlines()[-1].startswith(expected_start)


def test_a_directory_for_the_txn_index_is_a_problem(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    source = fixtures_root() / "golden" / TXN_INDEX
    partition = tmp_path / source.parent.name
    shutil.copytree(source.parent, partition)
    path = partition / source.name
    replace_with_directory(path)
    run = lethe("verify", str(partition))
    assert run.status == 1
    assert run.lines == [
        f"{path}: byte 0: file: is a directory where Kafka expects a transaction index file: "
        "Kafka cannot open it as a file (IOException) and the log dir fails to load"
    ]


def test_meta_properties_directory_says_kafka_does_not_start(
    log_dir: Path, lethe: Callable[..., Run]
) -> None:
    path = log_dir / "meta.properties"
    replace_with_directory(path)
    run = lethe("verify", str(path))
    assert run.lines == [
        f"{path}: byte 0: file: is a directory where Kafka expects the meta.properties file: "
        "Kafka cannot read it and does not start with this log dir"
    ]


def test_transient_names_as_directories_are_not_files_kafka_reads(
    log_dir: Path, lethe: Callable[..., Run]
) -> None:
    # Kafka only looks at .deleted/.cleaned/.swap names through isFile(): a directory is ignored
    (log_dir / "golden-delrec-0" / "00000000000000000099.log.deleted").mkdir()
    assert lethe("verify", str(log_dir)) == Run(0, "", "")


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_checkpoint_command_on_a_directory_exits_1_with_the_problem(
    name: str, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    path = tmp_path / name
    path.mkdir()
    for argv in (("read", str(path)), ("validate", str(path))):
        run = lethe("checkpoint", *argv)
        assert run.status == 1
        (line,) = (run.out + run.err).splitlines()
        assert line.startswith(f"{path}: byte 0: file: is a directory where Kafka expects ")
    kind = "leader-epoch" if name == "leader-epoch-checkpoint" else "offsets"
    entry = ("1", "0") if kind == "leader-epoch" else ("t", "0", "1")
    written = lethe("checkpoint", "write", str(path), "--entry", *entry)
    assert written.status == 1
    assert written.err.startswith(f"{path}: byte 0: file: is a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no .tmp left behind


@pytest.mark.parametrize("kind", ["offset index", "leader epoch checkpoint", "meta.properties"])
def test_a_fifo_in_a_files_place_is_a_problem_and_never_blocks(
    kind: str, log_dir: Path, lethe: Callable[..., Run]
) -> None:
    path = log_dir / FILE_KINDS[kind]
    path.unlink()
    os.mkfifo(path)  # opening it for reading would wait for a writer forever
    expected = f"{path}: byte 0: file: is a FIFO, not a regular file"
    walked = lethe("verify", str(log_dir))
    assert walked.status == 1
    assert expected in walked.lines
    assert lethe("verify", str(path)) == Run(1, expected + "\n", "")
    dumped = lethe("dump", str(path))
    assert (dumped.status, dumped.err.splitlines()[-1]) == (1, expected)


# -- escaping ----------------------------------------------------------------------------


def test_control_bytes_from_a_checkpoint_are_escaped(
    log_dir: Path, lethe: Callable[..., Run]
) -> None:
    path = log_dir / "replication-offset-checkpoint"
    path.write_bytes(b"0\n1\nevil\x1b]0;pwned\x07 0\r\n")
    for run in (lethe("verify", str(path)), lethe("checkpoint", "validate", str(path))):
        assert run.status == 1
        assert run.lines == [
            f"{path}: line 3: byte 4: entry: Malformed line in checkpoint file [{path}]: "
            "evil\\x1b]0;pwned\\x07 0"
        ]


def test_control_bytes_in_file_names_are_escaped(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    partition = tmp_path / "evil\x1b[2J\r-0"
    shutil.copytree(fixtures_root() / "golden" / "delete-records" / "golden-delrec-0", partition)
    log = partition / "00000000000000000016.log"
    log.write_bytes(log.read_bytes()[:-3])  # a torn tail
    shown = printable(str(log))
    assert "\\x1b[2J\\x0d" in shown
    run = lethe("verify", str(tmp_path))
    assert run.status == 1
    assert run.lines and all(line.startswith(printable(str(partition))) for line in run.lines)
    assert_problem_lines(run.lines)
    dumped = lethe("dump", str(log))
    assert dumped.status == 0  # kafka-dump-log reports a torn tail on stdout, exit 0
    assert dumped.out.splitlines()[0] == f"Dumping {shown}"
    assert_dump_stderr(dumped.err.splitlines())
    assert not RAW_CONTROL.search(dumped.out.replace("\n", ""))


def test_a_missing_path_names_byte_0_and_the_field(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    path = tmp_path / "no\x1bpe"
    run = lethe("verify", str(path))
    assert (run.status, run.out, run.err) == (
        2,
        "",
        f"lethe verify: {printable(str(path))}: byte 0: file: No such file or directory\n",
    )
    dumped = lethe("dump", str(path))
    assert (dumped.status, dumped.out, dumped.err) == (
        2,
        "",
        f"lethe dump: {printable(str(path))}: byte 0: file: No such file or directory\n",
    )
    read = lethe("checkpoint", "read", str(path), "--kind", "offsets")
    assert (read.status, read.err) == (
        2,
        f"{printable(str(path))}: byte 0: file: No such file or directory\n",
    )


# -- the sweep ---------------------------------------------------------------------------

CONTROL_RUNS = (b"\x1b[2J", b"\x1b]0;x\x07", b"\r\n", b"\x9b31m", b"\x00", b"\x7f")
MUTATIONS = ("flip", "truncate", "zero", "insert", "control", "empty", "directory")
#: ``mutate_bytes`` does flip, truncate, zero and insert; control runs go in here.


def mutate(path: Path, how: str, rng: random.Random) -> None:
    if how == "directory":
        replace_with_directory(path)
        return
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "control" and data:
        at = rng.randrange(len(data))
        path.write_bytes(data[:at] + rng.choice(CONTROL_RUNS) + data[at:])
    else:
        path.write_bytes(mutate_bytes(data, how, rng))


def sweep_files() -> list[str]:
    root = fixtures_root() / "golden" / "delete-records"
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    return [n for n in names if not n.endswith((".json", ".txt", ".md"))]


#: Files of other golden partitions: compressed batches, a transaction index, compaction.
OTHER_PARTITION_FILES = (
    "codecs/golden-codecs-0/00000000000000000000.log",
    "codecs/golden-codecs-0/00000000000000000022.log",
    "codecs/golden-codecs-0/00000000000000000022.timeindex",
    "codecs/golden-codecs-0/00000000000000000037.snapshot",
    TXN_INDEX,
    "transactions/pass0/golden-txn-0/00000000000000000009.log",
    "compaction/pass1/golden-compact-0/00000000000000000000.log",
)


@pytest.mark.parametrize("how", MUTATIONS)
@pytest.mark.parametrize("name", sweep_files())
def test_sweep_every_line_names_file_byte_and_field(
    name: str, how: str, log_dir: Path, lethe: Callable[..., Run]
) -> None:
    check_mutated(log_dir, log_dir / name, how, lethe)


@pytest.mark.parametrize("how", MUTATIONS)
@pytest.mark.parametrize("source", OTHER_PARTITION_FILES)
def test_sweep_other_partitions(
    source: str, how: str, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    original = fixtures_root() / "golden" / source
    partition = tmp_path / original.parent.name
    shutil.copytree(original.parent, partition)
    check_mutated(partition, partition / original.name, how, lethe)


def check_mutated(root: Path, path: Path, how: str, lethe: Callable[..., Run]) -> None:
    """Damage ``path`` (seeded by its name), then run every tool over it and ``root``."""
    mutate(path, how, random.Random(f"{path.name}/{how}"))
    verified = lethe("verify", str(root))
    assert verified.err == ""
    assert verified.status == (1 if verified.lines else 0)
    assert_problem_lines(verified.lines)
    assert not any("a lethe bug" in line for line in verified.lines), verified.lines
    if how == "directory":
        assert verified.status == 1
    single = lethe("verify", str(path))
    assert single.status == (1 if single.lines else 0)
    assert_problem_lines(single.lines)
    dumped = lethe("dump", str(path))
    assert dumped.status in (0, 1)
    assert_dump_stderr(dumped.err.splitlines())
    assert not RAW_CONTROL.search(dumped.out.replace("\n", "")), dumped.out[-400:]
    if path.name in CHECKPOINTS:
        checked = lethe("checkpoint", "validate", str(path))
        assert checked.status in (0, 1)
        assert checked.status == (1 if checked.lines else 0)
        assert_problem_lines(checked.lines)
