"""The ``lethe`` command: argparse front end that dispatches to one module per subcommand.

Each module in ``lethe_tools.commands`` exposes ``register(subparsers)`` which adds
its parser and sets ``func`` (``argparse.Namespace -> int`` exit status). The CLI
stays thin: parse, call the library, render. A ``FormatError`` that escapes a
command is printed as one line naming file, byte position and field, never as a
traceback, and the exit status is 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from lethe_formats.errors import FormatError

__all__ = ["build_parser", "main"]

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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``lethe`` parser; with ``command``, only that subcommand is registered.

    Registering one subcommand imports only its module: ``lethe verify`` then
    starts without loading the dump renderers or the fixture generator, which
    matters for whole-process figures on short runs.
    """
    parser = argparse.ArgumentParser(
        prog="lethe",
        description=(
            "Kafka record-deletion and retention: file tools, reference broker, conformance."
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES if command is None else (command,):
        module = importlib.import_module(f"lethe_tools.commands.{name.replace('-', '_')}")
        module.register(subparsers)
    return parser


def _chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named first on the command line, if it is a known one."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMAND_MODULES else None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_command(arguments))
    args = parser.parse_args(arguments)
    try:
        status: int = args.func(args)
    except FormatError as error:
        print(f"lethe {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `lethe dump ... | head` closes stdout early; that is not an error.
        sys.stderr.close()
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
