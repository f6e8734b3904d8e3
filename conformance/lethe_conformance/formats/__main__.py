"""``python -m lethe_conformance.formats``: run the format cases against an adapter.

Theory of operation
-------------------
The command loads the cases (all kinds, or those given with ``--kind``),
starts the adapter once per case and prints one block per problem and a
summary line. ``--adapter`` takes the command of any implementation that
follows the subprocess contract in ``fixtures/formats/README.md``;
``--lethe`` runs lethe's own decoders in-process instead (it is the only
option that imports ``lethe_formats``). Exit status: 0 when every case
passed (known failures from ``--baseline`` aside), 1 when any case failed,
errored or unexpectedly passed, 2 when the suite or the baseline itself is
unusable (named in the message) or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from lethe_conformance.formats.adapters import Adapter, SubprocessAdapter
from lethe_conformance.formats.cases import KINDS, CaseFileError, load_cases
from lethe_conformance.formats.runner import BaselineError, load_baseline, run

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lethe_conformance.formats",
        description="Kafka on-disk format conformance: run the cases of fixtures/formats "
        "against a decoder.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--adapter", metavar="COMMAND", help="adapter command (shell words)")
    which.add_argument("--lethe", action="store_true", help="lethe_formats, in-process")
    parser.add_argument("--cases", type=Path, help="cases directory (default: the installed suite)")
    parser.add_argument("--kind", action="append", choices=KINDS, help="only this kind (repeat)")
    parser.add_argument("--baseline", type=Path, help="known failures, one case id a line")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per case (10)")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (1)")
    parser.add_argument(
        "--any-error", action="store_true", help="an invalid case passes on any error id"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list every case")
    return parser


def _adapter(args: argparse.Namespace) -> Adapter:
    if args.lethe:
        from lethe_conformance.formats.lethe_adapter import LetheAdapter  # noqa: PLC0415

        return LetheAdapter()
    return SubprocessAdapter(shlex.split(args.adapter), timeout=args.timeout)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.jobs < 1 or args.timeout <= 0:
        print("error: --jobs must be at least 1 and --timeout positive", file=sys.stderr)
        return 2
    try:
        cases = load_cases(args.cases, args.kind)
        baseline = load_baseline(args.baseline) if args.baseline else {}
        report = run(
            cases, _adapter(args), baseline=baseline, jobs=args.jobs, any_error=args.any_error
        )
    except (CaseFileError, BaselineError, FileNotFoundError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.render(verbose=args.verbose))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
