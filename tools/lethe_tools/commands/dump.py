"""``lethe dump FILE...|--files F1,F2 [OPTIONS]``: kafka-dump-log, byte for byte.

Prints Kafka log-dir files the way ``bin/kafka-dump-log.sh --files FILE``
does (the same bytes on stdout, the same warnings on stderr) for ``.log``,
``.index``, ``.timeindex``, ``.txnindex`` and ``.snapshot``, with Kafka 4.0's
options: ``--deep-iteration``, ``--print-data-log``, ``--max-bytes``,
``--skip-record-metadata``, ``--verify-index-only``, ``--index-sanity-check``,
``--offsets-decoder`` (``__consumer_offsets``), ``--transaction-log-decoder``
(``__transaction_state``), ``--cluster-metadata-decoder`` (``__cluster_metadata``,
and its ``.checkpoint`` snapshots), and ``--key-decoder-class`` / ``--value-decoder-class``
as a Python callable ``module:function`` (bytes in, printed with ``str()``);
the remote-log-metadata and share-group decoders are not implemented
(exit 2). Checkpoints, ``partition.metadata``, ``meta.properties``
and ``.kafka_cleanshutdown`` print as ``key: value`` lines. ``--json`` writes
one JSON object per line instead (bytes as ``{"utf8": ..}`` or ``{"hex": ..}``,
never through a decoder). A folder stands for the Kafka files directly in it, in name order. Exit
status 0, 1 when a file could not be read or decoded completely (each
problem is one line on stderr), 2 for a usage error, a path that does not
exist or a folder holding nothing to dump (one line on stderr, nothing printed).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lethe_tools.inspect.decoders import (
    JAVA_STRING_DECODER,
    DecoderError,
    RecordParser,
    cluster_metadata_parser,
    decoder_parser,
    offsets_parser,
    transaction_log_parser,
)
from lethe_tools.inspect.dump import DumpOptions, DumpRenderer, dump_files
from lethe_tools.inspect.inputs import dumpable_files
from lethe_tools.render.dump_text import TextDumpRenderer
from lethe_tools.render.jsonl import JsonDumpRenderer

__all__ = ["register", "run"]

EXIT_PROBLEM = 1
EXIT_USAGE = 2
#: kafka-dump-log decoders lethe does not implement (tiered storage's metadata topic,
#: share groups): refused rather than printed wrongly.
UNSUPPORTED_DECODERS = (
    "--remote-log-metadata-decoder",
    "--share-group-state-decoder",
)


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
    flags = {
        "--verify-index-only": "check index entries against the log without printing them",
        "--index-sanity-check": "only Kafka's startup sanity check of each index",
        "--skip-record-metadata": "record lines hold only key and payload",
        "--offsets-decoder": "decode __consumer_offsets records as Kafka's JSON",
        "--transaction-log-decoder": "decode __transaction_state records",
        "--cluster-metadata-decoder": "decode __cluster_metadata records as Kafka's JSON",
    }
    for flag, text in flags.items():
        parser.add_argument(flag, action="store_true", help=text)
    for flag in UNSUPPORTED_DECODERS:
        parser.add_argument(flag, action="store_true", help="(Kafka's; not implemented: exit 2)")
    for name in ("key", "value"):
        parser.add_argument(
            f"--{name}-decoder-class",
            nargs="?",
            const=JAVA_STRING_DECODER,
            default=None,
            metavar="MODULE:FUNCTION",
            help=f"a Python callable turning {name} bytes into what is printed "
            "(Kafka's StringDecoder class name: UTF-8)",
        )
    parser.add_argument(
        "--max-message-size",
        type=_positive,
        default=None,
        metavar="N",
        help="accepted for kafka-dump-log's sake; lethe reads whole batches",
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


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _parser(args: argparse.Namespace) -> RecordParser | None:
    """Kafka's order: offsets, transaction log, then the key/value decoder classes."""
    if args.offsets_decoder:
        return offsets_parser
    if args.transaction_log_decoder:
        return transaction_log_parser
    if args.cluster_metadata_decoder:
        return cluster_metadata_parser
    if args.key_decoder_class is not None or args.value_decoder_class is not None:
        return decoder_parser(args.key_decoder_class, args.value_decoder_class)
    return None


def run(args: argparse.Namespace) -> int:
    listed = [name for text in args.listed for name in text.split(",") if name]
    if not listed and not args.files:
        print("lethe dump: give FILE... or --files FILES", file=sys.stderr)
        return EXIT_USAGE
    unsupported = [f for f in UNSUPPORTED_DECODERS if getattr(args, _dest(f))]
    if unsupported:
        print(f"lethe dump: {unsupported[0]} is not implemented", file=sys.stderr)
        return EXIT_USAGE
    files = dumpable_files([*listed, *args.files])
    try:
        parser = _parser(args)
    except DecoderError as error:
        print(f"lethe dump: {error}", file=sys.stderr)
        return EXIT_USAGE
    # DumpLogSegmentsOptions: any decoder prints the data, and printing iterates deeply
    print_data = args.print_data_log or parser is not None
    options = DumpOptions(
        deep=args.deep_iteration or print_data,
        print_data=print_data,
        max_bytes=args.max_bytes,
        parser=parser,
        skip_metadata=args.skip_record_metadata,
        verify_only=args.verify_index_only,
        index_sanity=args.index_sanity_check,
    )
    renderer: DumpRenderer
    if args.json:
        renderer = JsonDumpRenderer(options, sys.stdout, sys.stderr)
    else:
        renderer = TextDumpRenderer(options, sys.stdout, sys.stderr)
    report = dump_files(files, options, renderer)
    return EXIT_PROBLEM if report.failed else 0
