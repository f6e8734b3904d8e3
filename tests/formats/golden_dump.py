"""Reader for the golden ``dump.txt`` files (verbatim kafka-dump-log output).

A dump.txt is a series of commands, each introduced by
``### bin/kafka-dump-log.sh --files <relative path> [options]`` and followed by
that command's standard output; a ``### (stderr ...)`` line introduces the
standard error of the command above it. Values printed with
``--print-data-log`` may contain raw newlines, so a line of a ``.log`` dump that
does not start like one of kafka-dump-log's own lines continues the previous
one. Lines are split on ``\\n`` only (``str.splitlines`` would also split on the
control characters found in binary payloads).

``parse_dump`` maps each dumped file to the output of its *first* command (the
plain dump; decoder variants such as ``--offsets-decoder`` come later and are
available from ``parse_dump_commands``). ``fields`` splits a batch or record
line into its ``key: value`` pairs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DumpCommand", "fields", "parse_dump", "parse_dump_commands", "record_lines"]

_COMMAND = "### bin/kafka-dump-log.sh "
_STDERR = "### (stderr"
_LOG_LINE_STARTS = (
    "Dumping ",
    "Log starting offset: ",
    "baseOffset: ",
    "offset: ",
    "| ",
    "Found ",
)
_NAME = re.compile(r"([A-Za-z]+): ")


@dataclass
class DumpCommand:
    """One kafka-dump-log run: its arguments, the file, stdout and stderr lines."""

    args: list[str]
    file: str
    lines: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    @property
    def is_log(self) -> bool:
        return self.file.endswith(".log")


def parse_dump_commands(path: str | Path) -> list[DumpCommand]:
    """Every command of a dump.txt, in order."""
    text = Path(path).read_bytes().decode("utf-8", errors="surrogateescape")
    commands: list[DumpCommand] = []
    in_stderr = False
    for line in text.split("\n"):
        if line.startswith(_COMMAND):
            args = line[len(_COMMAND) :].split(" ")
            commands.append(DumpCommand(args, args[args.index("--files") + 1]))
            in_stderr = False
        elif line.startswith(_STDERR):
            in_stderr = True
        elif commands:
            _append(commands[-1], line, in_stderr)
    for command in commands:
        while command.lines and command.lines[-1] == "":
            command.lines.pop()
        while command.stderr and command.stderr[-1] == "":
            command.stderr.pop()
    return commands


def _append(command: DumpCommand, line: str, in_stderr: bool) -> None:
    if in_stderr:
        command.stderr.append(line)
    elif command.is_log and command.lines and not line.startswith(_LOG_LINE_STARTS):
        command.lines[-1] += "\n" + line
    else:
        command.lines.append(line)


def parse_dump(path: str | Path) -> dict[str, list[str]]:
    """Dumped file (path relative to the dump.txt folder) -> its first dump's lines."""
    out: dict[str, list[str]] = {}
    for command in parse_dump_commands(path):
        out.setdefault(command.file, command.lines)
    return out


def record_lines(lines: list[str]) -> list[list[str]]:
    """Group a ``.log`` dump's lines: each batch line followed by its record lines."""
    groups: list[list[str]] = []
    for line in lines:
        if line.startswith(("baseOffset: ", "offset: ")):
            groups.append([line])
        elif line.startswith("| ") and groups:
            groups[-1].append(line)
    return groups


def fields(line: str) -> dict[str, str]:
    """``key: value`` pairs of a batch or record line (``| `` prefix allowed).

    Values are single tokens except ``headerKeys: [...]``; ``key:`` and
    ``payload:`` (printed data, may hold spaces) end the metadata: their text
    is returned as-is under "key" / "payload" (key split at the first
    " payload: ", which is exact for the golden data). A legacy record line's
    stray ``}`` after its crc is dropped.
    """
    text = line[2:] if line.startswith("| ") else line
    out: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        match = _NAME.match(text, pos)
        if match is None:
            raise ValueError(f"unparsable dump line at {pos}: {line!r}")
        name = match.group(1)
        start = match.end()
        if name in ("key", "payload"):
            _data_fields(text[match.start() :], out)
            break
        end = text.index("]", start) + 1 if text.startswith("[", start) else _token_end(text, start)
        out[name] = text[start:end].rstrip("}")
        pos = end + 1
    return out


def _token_end(text: str, start: int) -> int:
    end = text.find(" ", start)
    return len(text) if end < 0 else end


def _data_fields(text: str, out: dict[str, str]) -> None:
    if text.startswith("key: "):
        body = text[len("key: ") :]
        key, sep, payload = body.partition(" payload: ")
        out["key"] = key
        if sep:
            out["payload"] = payload
    else:
        out["payload"] = text[len("payload: ") :]
