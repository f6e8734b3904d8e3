"""``lethe dump`` prints exactly what Kafka 4.0's kafka-dump-log printed for every golden file.

Every ``### bin/kafka-dump-log.sh`` command of every golden dump.txt (all
cases, all passes) is replayed as ``lethe dump`` with the same arguments,
from the folder holding dump.txt so the relative paths are the same; stdout
must equal the recorded output line for line, and stderr must be the
recorded stderr section (Kafka prints absolute paths there; the recording
removed the directory prefix, so the same prefix is removed from ours).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from golden_commands import GoldenCommand, golden_commands
from lethe_tools.cli import main

#: Flags lethe dump takes over unchanged from kafka-dump-log.
SUPPORTED_FLAGS = {"--deep-iteration", "--print-data-log"}
#: Decoder variants of the __consumer_offsets / __transaction_state dumps. Decoding
#: the group and transaction coordinator records is outside lethe dump's scope
#: (those partitions are compared through their plain, decoder-less dumps, which
#: are replayed like every other file). These exact commands are excluded here.
EXCLUDED_FLAGS = {"--offsets-decoder", "--transaction-log-decoder"}

COMMANDS = golden_commands()
REPLAYED = [c for c in COMMANDS if not EXCLUDED_FLAGS & set(c.args)]


def lethe_args(command: GoldenCommand) -> list[str]:
    """``--files X`` becomes the positional X; the other flags are kept."""
    args = list(command.args)
    at = args.index("--files")
    files = args[at + 1].split(",")
    del args[at : at + 2]
    return ["dump", *files, *args]


def test_every_recorded_command_is_replayed_or_explicitly_excluded() -> None:
    assert len(COMMANDS) == 169  # every header line of the 10 golden dump.txt files
    for command in COMMANDS:
        flags = {a for a in command.args if a.startswith("--")} - {"--files"}
        unexpected = flags - SUPPORTED_FLAGS - EXCLUDED_FLAGS
        assert not unexpected, f"{command.id}: a dump.txt command kind this test does not know"
        assert command.args.count("--files") == 1, command.id
    excluded = [c for c in COMMANDS if EXCLUDED_FLAGS & set(c.args)]
    assert len(excluded) == 4  # three --offsets-decoder, one --transaction-log-decoder


def test_replayed_commands_cover_every_kind_of_file() -> None:
    suffixes = {Path(lethe_args(c)[1]).suffix for c in REPLAYED}
    assert suffixes == {".log", ".index", ".timeindex", ".txnindex", ".snapshot"}


@pytest.mark.parametrize("command", REPLAYED, ids=[c.id for c in REPLAYED])
def test_dump_matches_kafka_dump_log(
    command: GoldenCommand,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.chdir(command.folder)
    status = main(lethe_args(command))
    captured = capsysbinary.readouterr()
    assert captured.out.split(b"\n") == command.stdout.split(b"\n")
    prefix = (os.getcwd() + os.sep).encode()
    assert captured.err.replace(prefix, b"").split(b"\n") == command.stderr.split(b"\n")
    assert status == 0
