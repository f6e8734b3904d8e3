"""``lethe dump FILE...|--files F1,F2 [--deep-iteration] [--print-data-log] [--json]``.

Prints Kafka log-dir files the way ``bin/kafka-dump-log.sh --files FILE``
does (the same bytes on stdout, the same warnings on stderr) for ``.log``,
``.index``, ``.timeindex``, ``.txnindex`` and ``.snapshot``; checkpoints,
``partition.metadata`` and ``meta.properties`` as ``key: value`` lines.
``--json`` writes one JSON object per line instead (bytes as ``{"utf8": ..}``
or ``{"hex": ..}``). A folder stands for the Kafka files directly in it, in name order. Exit
status 0, 1 when a file could not be read or decoded completely (each
problem is one line on stderr), 2 when a path does not exist or a folder
holds nothing to dump (one line on stderr, nothing printed).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lethe_tools.inspect.dump import DumpOptions, DumpRenderer, dump_files
from lethe_tools.inspect.inputs import dumpable_files
from lethe_tools.render.dump_text import TextDumpRenderer
from lethe_tools.render.jsonl import JsonDumpRenderer

__all__ = ["register", "run"]

EXIT_PROBLEM = 1
EXIT_USAGE = 2


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of bytes")
    return value


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dump",
        help="print segment, index, snapshot and checkpoint files like kafka-dump-log",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="files to dump, in order; a folder: the Kafka files in it",
    )
    parser.add_argument(
        "--files",
        dest="listed",
        action="append",
        default=[],
        metavar="FILES",
        help="comma-separated files to dump (kafka-dump-log's form), before any FILE",
    )
    parser.add_argument(
        "--deep-iteration",
        action="store_true",
        help="print every record, not only the batch headers",
    )
    parser.add_argument(
        "--print-data-log",
        action="store_true",
        help="print keys and values (implies --deep-iteration)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--max-bytes",
        type=_positive,
        default=None,
        metavar="N",
        help="read at most N bytes of each .log file (as kafka-dump-log's --max-bytes)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    listed = [name for text in args.listed for name in text.split(",") if name]
    if not listed and not args.files:
        print("lethe dump: give FILE... or --files FILES", file=sys.stderr)
        return EXIT_USAGE
    files = dumpable_files([*listed, *args.files])
    options = DumpOptions(
        deep=args.deep_iteration or args.print_data_log,
        print_data=args.print_data_log,
        max_bytes=args.max_bytes,
    )
    renderer: DumpRenderer
    if args.json:
        renderer = JsonDumpRenderer(options, sys.stdout, sys.stderr)
    else:
        renderer = TextDumpRenderer(options, sys.stdout, sys.stderr)
    report = dump_files(files, options, renderer)
    return EXIT_PROBLEM if report.failed else 0
