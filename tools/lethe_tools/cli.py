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

#: Subcommand modules, in the order ``lethe --help`` lists them.
COMMAND_MODULES = ("dump", "verify", "checkpoint", "fixtures")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lethe",
        description=(
            "Kafka record-deletion and retention: file tools, reference broker, conformance."
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"lethe_tools.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
