"""``lethe verify PATH... [--deep]``: check segments, indexes and checkpoints.

PATH is a file, a partition directory, a log directory or any folder above
them (walked recursively). Checked: batch CRCs and framing (torn tails),
offsets increasing across and inside batches, ``.index``/``.timeindex``
entries pointing at real batches with the right offsets and timestamps,
``.txnindex`` sanity, KIP-534 delete horizons, producer snapshots, and the
checkpoint files (Kafka's strict reading rules, then their offsets against
the partitions' ranges when the log dir is given). ``--deep`` also decodes
every record. ``--summary`` ends with ``verified N files: M problems``.
Prints one line per problem, ``<file>: byte <pos>: <field>:
<message>`` (``line <n>`` for text files), and exits 1 if there was any, 0
if everything is consistent, 2 (one line on stderr, nothing checked) when a
PATH does not exist or holds no file Kafka writes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lethe_tools.inspect.inputs import require_kafka_files
from lethe_tools.inspect.problems import Problems
from lethe_tools.inspect.verify_tree import VerifyOptions, verify_paths
from lethe_tools.render.output import LineSink

__all__ = ["register", "run"]

EXIT_PROBLEMS = 1


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check log segments, indexes and checkpoint files for consistency",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    parser.add_argument(
        "--deep", action="store_true", help="decode every record, not only delete-horizon batches"
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="end with one line: files checked and problems found",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_kafka_files(args.paths)
    problems = Problems()
    checked = verify_paths(args.paths, VerifyOptions(deep=args.deep), problems)
    out = LineSink(sys.stdout)
    out.lines([str(problem) for problem in problems])
    if args.summary:
        count = len(problems)
        out.lines([f"verified {checked} files: {count} problem{'' if count == 1 else 's'}"])
    out.flush()
    return EXIT_PROBLEMS if problems else 0
