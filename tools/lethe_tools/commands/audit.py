"""``lethe audit LOGDIR... [--master M] [--out DIR] [--now TIME] [--report DIR]``: a Spark audit.

Decodes every segment, index, checkpoint and ``partition.metadata`` under the
log dirs inside Spark tasks (files are read by the executors, never by the
driver), writes the tables partitions, segments, batches, records, indexes,
checkpoints, offsets (committed consumer offsets) and problems as Parquet
under ``--out`` (default ``lethe-audit``), runs the audits over them and
writes the report (HTML and JSON) under ``--report`` (default ``OUT/report``).

LOGDIR is a Kafka log dir, a folder holding log dirs, or one partition dir.
``--master`` is a Spark master URL: ``local[*]`` (default), ``local[2]``, or
``spark://host:7077`` for a cluster whose workers have lethe (same version)
and Java 17 installed and can read the LOGDIR paths and write ``--out``.
``--now`` (epoch milliseconds or ISO-8601, default: the current time) is the
time ages are measured against, for reproducible runs.

Exit status: 0 done, no problems; 1 done, some file could not be decoded
cleanly (see the problems table; every table and the report are written);
2 setup error (Java 17 missing, pyspark not installed, no log dir found).
Needs the ``audit`` extra: ``pip install 'lethe[audit]'``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from datetime import datetime
from typing import Any

from lethe_tools.audit.discover import discover

__all__ = ["EXIT_PROBLEMS", "EXIT_SETUP", "parse_now", "register", "run"]

EXIT_PROBLEMS = 1
EXIT_SETUP = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit Kafka log dirs with Spark: Parquet tables, checks, report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("logdirs", nargs="+", metavar="LOGDIR", help="log dirs to audit")
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    parser.add_argument("--out", default="lethe-audit", help="folder for the Parquet tables")
    parser.add_argument(
        "--now",
        type=parse_now,
        default=None,
        metavar="TIMESTAMP",
        help="epoch ms or ISO-8601 time the audits measure ages against",
    )
    parser.add_argument(
        "--report", default=None, metavar="DIR", help="folder for the report (default OUT/report)"
    )
    parser.set_defaults(func=run)


def parse_now(text: str) -> int:
    """Epoch milliseconds from ``1700000000000`` or ``2026-11-21T12:00:00Z``."""
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not epoch milliseconds or an ISO-8601 time: {text!r}"
        ) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"give a time zone (e.g. Z) in {text!r}")
    return int(moment.timestamp() * 1000)


def _fail(text: str) -> int:
    print(f"lethe audit: {text}", file=sys.stderr)
    return EXIT_SETUP


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("pyspark") is None:
        return _fail("pyspark is not installed: pip install 'lethe[audit]'")
    inventory = discover(args.logdirs)
    if not inventory.logdirs:
        return _fail(f"no Kafka log dir found under {', '.join(args.logdirs)}")
    from lethe_tools.audit.session import JavaNotFoundError, start_session  # noqa: PLC0415

    try:
        spark = start_session(args.master)
    except JavaNotFoundError as error:
        return _fail(str(error).removeprefix("lethe audit: "))
    from lethe_tools.audit.job import run_job  # noqa: PLC0415 - imports pyspark
    from lethe_tools.audit.progress import StageProgress  # noqa: PLC0415

    now_ms = args.now if args.now is not None else int(time.time() * 1000)
    try:
        with StageProgress(spark.sparkContext) as progress:
            progress.say(
                f"{len(inventory.logdirs)} log dirs, {inventory.bytes_of_logs} bytes of segments"
            )
            result = run_job(
                spark, args.logdirs, args.out, now_ms, report_dir=args.report, say=progress.say
            )
    finally:
        spark.stop()
    for name, count in result.rows.items():
        print(f"{name}: {count} rows")
    if result.findings is not None:
        for check in result.findings.checks:
            print(f"check {check.name}: {check.count} findings, {check.bytes} bytes")
    print(f"tables: {result.out}")
    print(f"report: {result.report}")
    if result.problems:
        print(f"problems: {result.problems} (see {result.out}/problems)")
    return EXIT_PROBLEMS if result.problems else 0
