"""The ``lethe`` command: argparse front end that dispatches to one module per subcommand.

Each module in ``lethe_tools.commands`` exposes ``register(subparsers)`` which adds
its parser and sets ``func`` (``argparse.Namespace -> int`` exit status). The CLI
stays thin: parse, call the library, render. A ``FormatError`` that escapes a
command is printed as one line naming file, byte position and field, never as a
traceback, and the exit status is 2.

Exit statuses, the same in every lethe command: 0 nothing wrong, 1 problems
found (a failed check, a corrupt file, a failed gate), 2 a usage error or
input that cannot be used (a missing path, a folder with no Kafka file).
``lethe topics`` and ``lethe delete-records`` are the exceptions: as drop-ins
for ``kafka-topics.sh`` / ``kafka-delete-records.sh`` they exit as those do.

``lethe --help`` lists the subcommands from :data:`SUMMARIES` without importing
their modules (the broker and the kit take most of a second to import); a
subcommand's own ``--help`` imports only that module. Help texts are the
modules' docstrings with the reST markup taken out (:func:`plain`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from importlib import metadata

from lethe_formats.errors import FormatError

from lethe_tools.inspect.inputs import InputError

__all__ = ["SUMMARIES", "build_parser", "main", "plain"]

#: Subcommands, in the order ``lethe --help`` lists them; the module of a
#: name is ``lethe_tools.commands.<name with "-" as "_">``.
COMMAND_MODULES = (
    "dump",
    "verify",
    "checkpoint",
    "fixtures",
    "delete-records",
    "consumed-retention",
    "topics",
    "broker",
    "conformance",
    "audit",
)

#: The one-line help of each subcommand, as its module registers it (a test keeps
#: the two equal); a subcommand missing here is imported to list it.
SUMMARIES = {
    "dump": "print segment, index, snapshot and checkpoint files like kafka-dump-log",
    "verify": "check log segments, indexes and checkpoint files for consistency",
    "checkpoint": "read, write or validate checkpoint files",
    "fixtures": "generate the fixture log directories from their specs",
    "delete-records": "delete records below an offset (kafka-delete-records.sh)",
    "consumed-retention": "trim records every consuming group committed past (KIP-68 option 2)",
    "topics": "list, describe, create, delete and alter topics (kafka-topics.sh, KIP-694)",
    "broker": "run the reference broker in the foreground",
    "conformance": "run the conformance suite against a broker (default: the embedded one)",
    "audit": "audit Kafka log dirs with Spark: Parquet tables, checks, report",
}

_ROLE = re.compile(r":[a-z]+:`~?([^`]*)`")


def plain(text: str) -> str:
    """Help text without reST markup: ``x`` and :role:`x` become x."""
    return _ROLE.sub(r"\1", text).replace("``", "")


def _version() -> str:
    try:
        return metadata.version("lethe")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def _tidy(parser: argparse.ArgumentParser) -> None:
    """Every (sub)parser gets a description, free of markup: its help line if it has none."""
    if parser.description:
        parser.description = plain(parser.description)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, child in action.choices.items():
                if not child.description and helps.get(name):
                    child.description = str(helps[name])
                _tidy(child)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``lethe`` parser; with ``command``, only that subcommand is registered.

    Registering one subcommand imports only its module: ``lethe verify`` then
    starts without loading the dump renderers or the fixture generator, which
    matters for whole-process figures on short runs. Without ``command`` (the
    listing of ``lethe --help``) the subcommands in :data:`SUMMARIES` are listed
    without importing anything.
    """
    parser = argparse.ArgumentParser(
        prog="lethe",
        description=(
            "Kafka record-deletion and retention: file tools, reference broker, conformance."
        ),
    )
    parser.add_argument("--version", action="version", version=f"lethe {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES if command is None else (command,):
        if command is None and name in SUMMARIES:
            subparsers.add_parser(name, help=SUMMARIES[name])
            continue
        module = importlib.import_module(f"lethe_tools.commands.{name.replace('-', '_')}")
        module.register(subparsers)
    _tidy(parser)
    return parser


def _chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named first on the command line, if it is a known one."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMAND_MODULES else None


def _discard_stdout() -> None:
    try:
        fileno = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (captured by a test): nothing will be flushed
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_command(arguments))
    args = parser.parse_args(arguments)
    try:
        status: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the exit-time flush
    except FormatError as error:
        print(f"lethe {args.command}: {error}", file=sys.stderr)
        return 2
    except InputError as error:
        print(f"lethe {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `lethe dump ... | head` closes stdout early; that is not an error. What is
        # still buffered for stdout would fail again in the interpreter's exit-time
        # flush (exit status 120), so stdout now points at /dev/null.
        _discard_stdout()
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
