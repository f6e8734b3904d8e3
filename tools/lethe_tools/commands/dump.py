"""``lethe dump FILE... [--deep-iteration] [--print-data-log] [--json] [--max-bytes N]``.

Prints Kafka log-dir files the way ``bin/kafka-dump-log.sh --files FILE``
does (the same bytes on stdout, the same warnings on stderr) for ``.log``,
``.index``, ``.timeindex``, ``.txnindex`` and ``.snapshot``; checkpoints,
``partition.metadata`` and ``meta.properties`` as ``key: value`` lines.
``--json`` writes one JSON object per line instead (bytes as ``{"utf8": ..}``
or ``{"hex": ..}``). Exit status 0, or 1 when a file could not be read or
decoded completely (each problem is one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lethe_tools.inspect.dump import DumpOptions, DumpRenderer, dump_files
from lethe_tools.render.dump_text import TextDumpRenderer
from lethe_tools.render.jsonl import JsonDumpRenderer

__all__ = ["register", "run"]

EXIT_PROBLEM = 1


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
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to dump, in order")
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
    report = dump_files(args.files, options, renderer)
    return EXIT_PROBLEM if report.failed else 0
