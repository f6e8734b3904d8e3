"""The commands recorded in the golden ``dump.txt`` files, as bytes.

Each dump.txt is a series of ``### bin/kafka-dump-log.sh <args>`` lines, each
followed by that command's verbatim stdout and, when there was any, a
``### (stderr of the command above; ...)`` line and its stderr (with the
absolute directory prefix removed). Payloads printed by ``--print-data-log``
may hold raw newlines and control bytes, so the text is kept as bytes and
split on ``\\n`` only; a section ends where the next ``### `` header starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import main

__all__ = [
    "GoldenCommand",
    "assert_replays",
    "golden_commands",
    "golden_root",
    "recorded_commands",
]

_COMMAND = b"### bin/kafka-dump-log.sh "
_STDERR = b"### (stderr of the command above"


def golden_root() -> Path:
    return fixtures_root() / "golden"


@dataclass
class GoldenCommand:
    """One kafka-dump-log run: where it ran, its arguments, stdout and stderr bytes."""

    folder: Path
    args: list[str]
    stdout: bytes = b""
    stderr: bytes = b""
    _in_stderr: bool = field(default=False, repr=False)

    @property
    def id(self) -> str:
        root = golden_root()
        base = root if self.folder.is_relative_to(root) else fixtures_root()
        case = self.folder.relative_to(base).as_posix()
        return f"{case}:{' '.join(self.args)}"


def _parse(path: Path) -> list[GoldenCommand]:
    commands: list[GoldenCommand] = []
    for line in path.read_bytes().splitlines(keepends=True):
        if line.startswith(_COMMAND):
            args = line[len(_COMMAND) :].decode("utf-8").split()
            commands.append(GoldenCommand(path.parent, args))
        elif line.startswith(_STDERR):
            commands[-1]._in_stderr = True
        elif commands[-1]._in_stderr:
            commands[-1].stderr += line
        else:
            commands[-1].stdout += line
    return commands


def recorded_commands(path: Path) -> list[GoldenCommand]:
    """The commands of one recording file (any folder under fixtures/)."""
    return _parse(path)


def golden_commands(name: str = "dump.txt") -> list[GoldenCommand]:
    """Every command of every ``name`` file (all cases, all passes), in file order:
    ``dump.txt`` recorded with each case, ``dump-options.txt`` the options those
    do not use, recorded later with kafka-dump-log 4.0.0 on the same files."""
    commands: list[GoldenCommand] = []
    for path in sorted(golden_root().rglob(name)):
        commands += _parse(path)
    return commands


def assert_replays(command: GoldenCommand, args: list[str], capsysbinary: Any) -> None:
    """``lethe dump ARGS`` run in the recording's folder (the caller has chdir'ed there)
    prints the recorded stdout and stderr bytes (stderr without the folder prefix)
    and exits 0."""
    status = main(["dump", *args])
    captured = capsysbinary.readouterr()
    assert captured.out.split(b"\n") == command.stdout.split(b"\n")
    prefix = (os.getcwd() + os.sep).encode()
    assert captured.err.replace(prefix, b"").split(b"\n") == command.stderr.split(b"\n")
    assert status == 0
