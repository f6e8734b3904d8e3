"""``lethe checkpoint read|write|validate``: Kafka's checkpoint text files.

``read FILE [--json] [--kind K]``   print the entries (``key: value`` lines, or one JSON object)
``write FILE --kind K --entry ...`` write atomically (``.tmp``, fsync, rename, fsync dir)
    ``--entry TOPIC PARTITION OFFSET`` (kind ``offsets``) or ``--entry EPOCH START_OFFSET``
    (kind ``leader-epoch``), repeatable; or ``--from-json FILE`` (``-`` = stdin) with a
    list of entry objects or the object ``read --json`` prints
``validate FILE...``               Kafka's strict reading rules; also ``partition.metadata``
                                   and ``meta.properties``

The kind follows from the file name (``replication-offset-checkpoint``,
``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``cleaner-offset-checkpoint`` → ``offsets``; ``leader-epoch-checkpoint`` →
``leader-epoch``); ``--kind`` overrides it. Exit status: 0; 1 when a file
fails validation (one line per problem, in Kafka's words, with line and
byte) or a directory stands where the file belongs (Kafka cannot read it);
2 for unusable input (unknown kind, malformed ``--entry``, a file that
does not exist or cannot be read, on stderr), in every action. Messages
about a file have the form ``FILE: byte POS: FIELD: message`` (byte 0 and
field ``file`` for the whole file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from lethe_formats.errors import FormatError, printable

from lethe_tools.inspect.checkpoint_io import (
    KINDS,
    CheckpointUsageError,
    Entries,
    entries_from_json,
    entries_from_values,
    kind_of,
    read_checkpoint,
    validate_file,
    write_checkpoint,
)
from lethe_tools.inspect.kinds import classify
from lethe_tools.inspect.misplaced import directory_problem
from lethe_tools.inspect.problems import WHOLE_FILE, Problem
from lethe_tools.render.checkpoint import checkpoint_json, checkpoint_lines
from lethe_tools.render.output import LineSink

__all__ = ["register", "run"]

EXIT_INVALID = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "checkpoint",
        help="read, write or validate checkpoint files",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="checkpoint_action", metavar="ACTION", required=True)
    read = actions.add_parser("read", help="print a checkpoint's entries")
    read.add_argument("file", metavar="FILE")
    read.add_argument("--json", action="store_true", help="one JSON object")
    read.add_argument("--kind", choices=KINDS, help="format, if the name does not tell")
    write = actions.add_parser("write", help="write a checkpoint atomically")
    write.add_argument("file", metavar="FILE")
    write.add_argument("--kind", choices=KINDS, help="format (default: from the file name)")
    source = write.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--entry",
        nargs="+",
        action="append",
        metavar="VALUE",
        help="TOPIC PARTITION OFFSET (offsets) or EPOCH START_OFFSET (leader-epoch)",
    )
    source.add_argument(
        "--from-json", metavar="JSON_FILE", help="entries as JSON; '-' reads standard input"
    )
    validate = actions.add_parser("validate", help="check files with Kafka's reading rules")
    validate.add_argument("files", nargs="+", metavar="FILE")
    validate.add_argument("--kind", choices=KINDS, help="format, if the names do not tell")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the action's runner."""
    runner = {"read": run_read, "write": run_write, "validate": run_validate}
    return runner[args.checkpoint_action](args)


def _usage(error: CheckpointUsageError) -> int:
    if error.file is not None:
        print(Problem(error.file, error.message, error.position, error.field), file=sys.stderr)
    else:
        print(f"lethe checkpoint: {printable(error.message)}", file=sys.stderr)
    return EXIT_USAGE


def _unreadable(path: str, error: OSError) -> int:
    """A file that cannot be opened: byte 0, field ``file``; exit status 2."""
    print(Problem(path, error.strerror or str(error), 0, WHOLE_FILE), file=sys.stderr)
    return EXIT_USAGE


def _directory(path: str) -> Problem | None:
    """The problem of a directory standing where the checkpoint file belongs (exit 1)."""
    if not os.path.isdir(path):
        return None
    return directory_problem(path, classify(path, strict=True).kind)


def run_read(args: argparse.Namespace) -> int:
    misplaced = _directory(args.file)
    if misplaced is not None:
        print(misplaced, file=sys.stderr)
        return EXIT_INVALID
    try:
        checkpoint = read_checkpoint(args.file, kind_of(args.file, args.kind))
    except CheckpointUsageError as error:
        return _usage(error)
    except FormatError as error:
        print(Problem.from_error(error, args.file), file=sys.stderr)
        return EXIT_INVALID
    except OSError as error:
        return _unreadable(args.file, error)
    out = LineSink(sys.stdout)
    if args.json:
        out.line(json.dumps(checkpoint_json(args.file, checkpoint), ensure_ascii=False))
    else:
        out.lines(checkpoint_lines(args.file, checkpoint))
    out.flush()
    return 0


def _entries(args: argparse.Namespace, kind: str) -> Entries:
    if args.entry is not None:
        return entries_from_values(kind, args.entry)
    try:
        if args.from_json == "-":
            document = json.load(sys.stdin)
        else:
            with open(args.from_json, encoding="utf-8") as handle:
                document = json.load(handle)
    except json.JSONDecodeError as error:
        raise CheckpointUsageError(
            f"invalid JSON: {error.msg} (line {error.lineno} column {error.colno})",
            file=args.from_json,
            position=len(error.doc[: error.pos].encode("utf-8", "surrogatepass")),
            field="JSON",
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        text = error.strerror if isinstance(error, OSError) else str(error)
        raise CheckpointUsageError(
            text or str(error), file=args.from_json, field=WHOLE_FILE
        ) from None
    return entries_from_json(kind, document)


def run_write(args: argparse.Namespace) -> int:
    misplaced = _directory(args.file)
    if misplaced is not None:
        print(misplaced, file=sys.stderr)
        return EXIT_INVALID
    try:
        kind = kind_of(args.file, args.kind)
        write_checkpoint(args.file, _entries(args, kind))
    except CheckpointUsageError as error:
        return _usage(error)
    except OSError as error:
        return _unreadable(error.filename or args.file, error)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    out = LineSink(sys.stdout)
    status = 0
    for path in args.files:
        misplaced = _directory(path)
        if misplaced is not None:
            out.line(str(misplaced))
            status = max(status, EXIT_INVALID)
            continue
        try:
            validate_file(path, kind_of(path, args.kind, validating=True))
        except CheckpointUsageError as error:
            out.flush()
            status = max(status, _usage(error))
        except FormatError as error:
            out.line(str(Problem.from_error(error, path)))
            status = max(status, EXIT_INVALID)
        except OSError as error:  # cannot be read at all: unusable input, as in read
            out.flush()
            status = max(status, _unreadable(path, error))
    out.flush()
    return status
