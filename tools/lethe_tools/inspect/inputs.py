"""The paths a file command is given, checked before it reads anything.

Why here: every lethe command answers a path it cannot use the same way, exit
status 2 and one line naming the path (the usage-error status), before any
output, so a script can tell "my input was wrong" (2) from "the files have
problems" (1). A path that does not exist, or names nothing Kafka writes (a
folder with no Kafka file in it, a file whose name is no Kafka file's), is such
an input. :class:`InputError` carries the message; ``lethe_tools.cli`` prints it
and exits 2.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from lethe_formats.errors import printable

from lethe_tools.inspect.kinds import Kind, classify
from lethe_tools.inspect.problems import WHOLE_FILE, Problem

__all__ = ["InputError", "dumpable_files", "require_existing", "require_kafka_files"]


class InputError(Exception):
    """A path the command cannot use (exit status 2)."""


def require_existing(paths: Iterable[str]) -> None:
    for path in paths:
        if not os.path.lexists(path):
            raise InputError(str(Problem(path, "No such file or directory", 0, WHOLE_FILE)))


def _folder(path: str) -> bool:
    """A folder to look into; one named like a Kafka file stands in that file's place
    (the commands report it as such, :mod:`.misplaced`)."""
    return os.path.isdir(path) and classify(path).kind is Kind.UNKNOWN


def _kafka_files(directory: str) -> Iterable[str]:
    """Files below ``directory`` named as Kafka names its files."""
    for folder, subdirs, names in os.walk(directory):
        subdirs.sort()
        for name in sorted(names):
            if classify(name, strict=True).kind is not Kind.UNKNOWN:
                yield os.path.join(folder, name)


def require_kafka_files(paths: Sequence[str]) -> None:
    """Every path exists and is, or holds, at least one file Kafka writes."""
    require_existing(paths)
    for path in paths:
        if _folder(path):
            if next(iter(_kafka_files(path)), None) is None:
                raise InputError(f"{printable(path)}: no Kafka log-dir file in this folder")
        elif classify(path).kind is Kind.UNKNOWN:
            raise InputError(f"{printable(path)}: not a Kafka log-dir file (by its name)")


def dumpable_files(paths: Sequence[str]) -> list[str]:
    """The files to dump: files as given (kafka-dump-log ignores a name it does not
    know, with a warning), a folder as the Kafka files directly in it (by name, in
    name order, which is offset order for segments); a folder holding none is an
    InputError."""
    require_existing(paths)
    files: list[str] = []
    for path in paths:
        if not _folder(path):
            files.append(path)
            continue
        names = sorted(os.listdir(path))
        found = [
            os.path.join(path, name)
            for name in names
            if classify(name, strict=True).kind is not Kind.UNKNOWN
            and not os.path.isdir(os.path.join(path, name))
        ]
        if not found:
            raise InputError(f"{printable(path)}: nothing lethe dump can print in this folder")
        files += found
    return files
