"""``lethe dump`` prints exactly what Kafka 4.0's kafka-dump-log printed for every golden file.

Every ``### bin/kafka-dump-log.sh`` command of every golden dump.txt (all
cases, all passes, the ``__consumer_offsets`` and ``__transaction_state``
decoders included) is replayed as ``lethe dump`` with the very same arguments
(``--files A,B`` as Kafka takes them), and again with the files given
positionally, from the folder holding dump.txt so the relative paths are the
same; stdout must equal the recorded output byte for byte, and stderr must be
the recorded stderr section (Kafka prints absolute paths there; the recording
removed the directory prefix, so the same prefix is removed from ours).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_commands import GoldenCommand, assert_replays, golden_commands

#: Every flag the recorded commands use; all are kafka-dump-log's own.
RECORDED_FLAGS = {
    "--deep-iteration",
    "--print-data-log",
    "--offsets-decoder",
    "--transaction-log-decoder",
}

COMMANDS = golden_commands()


def positional_args(command: GoldenCommand) -> list[str]:
    """``--files X,Y`` becomes the positional X Y; the other flags are kept."""
    args = list(command.args)
    at = args.index("--files")
    files = args[at + 1].split(",")
    del args[at : at + 2]
    return [*files, *args]


def test_every_recorded_command_is_replayed() -> None:
    assert len(COMMANDS) == 171  # every header line of the 11 golden dump.txt files
    for command in COMMANDS:
        flags = {a for a in command.args if a.startswith("--")} - {"--files"}
        assert flags <= RECORDED_FLAGS, f"{command.id}: a command kind this test does not know"
        assert command.args.count("--files") == 1, command.id
    decoded = [
        c for c in COMMANDS if {"--offsets-decoder", "--transaction-log-decoder"} & set(c.args)
    ]
    assert len(decoded) == 5  # four --offsets-decoder, one --transaction-log-decoder


def test_replayed_commands_cover_every_kind_of_file() -> None:
    suffixes = {Path(positional_args(c)[0]).suffix for c in COMMANDS}
    assert suffixes == {".log", ".index", ".timeindex", ".txnindex", ".snapshot"}


@pytest.mark.parametrize("form", ["kafka", "positional"])
@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_dump_matches_kafka_dump_log(
    command: GoldenCommand,
    form: str,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.chdir(command.folder)
    args = command.args if form == "kafka" else positional_args(command)
    assert_replays(command, args, capsysbinary)
