"""``lethe fixtures build [--check] [--out DIR] [SPEC...]``: generate fixture log dirs.

Builds every spec in ``fixtures/logs/specs/`` (or the named ones) into
``fixtures/logs/<name>/``. With ``--check`` nothing is written: the build is
compared byte for byte with what is on disk and every differing, missing or
extra file is listed; exit 1 if anything differs. A broken spec is reported
as one line naming the file and the JSON path, exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lethe_formats.errors import FormatError

from lethe_tools.fixturegen.build import (
    BuiltLogDir,
    build_specs,
    check_all,
    default_logs_root,
    find_spec_files,
    write_all,
)
from lethe_tools.fixturegen.spec import SpecError

__all__ = ["register", "run"]

EXIT_DIFFERENT = 1
EXIT_SPEC_ERROR = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fixtures", help="generate the fixture log directories from their specs"
    )
    actions = parser.add_subparsers(dest="fixtures_action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="build fixtures/logs/<name>/ from fixtures/logs/specs/<name>.json",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument(
        "--check",
        action="store_true",
        help="write nothing; compare a fresh build with the files on disk (exit 1 on difference)",
    )
    build.add_argument(
        "--out", type=Path, default=None, help="output root (default: fixtures/logs)"
    )
    build.add_argument("specs", nargs="*", metavar="SPEC", help="spec name or .json path")
    build.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out: Path = args.out if args.out is not None else default_logs_root()
    try:
        built = build_specs(find_spec_files(args.specs))
    except SpecError as error:
        for fault in (error, *error.others):
            print(f"lethe fixtures build: {fault}", file=sys.stderr)
        return EXIT_SPEC_ERROR
    except FormatError as error:
        print(f"lethe fixtures build: {error}", file=sys.stderr)
        return EXIT_SPEC_ERROR
    if args.check:
        return _check(built, out, complete=not args.specs)
    write_all(built, out)
    for log_dir in built:
        size = sum(len(data) for data in log_dir.tree.values())
        print(f"wrote {out / log_dir.name}/ ({len(log_dir.tree)} files, {size} bytes)")
    return 0


def _check(built: list[BuiltLogDir], out: Path, *, complete: bool) -> int:
    report = check_all(built, out, complete=complete)
    for log_dir in built:
        diff = report.diffs[log_dir.name]
        if diff:
            for line in diff.lines(prefix=f"{out / log_dir.name}/"):
                print(line)
        else:
            print(f"ok: {out / log_dir.name}/ ({len(log_dir.tree)} files)")
    for name in report.stale:
        print(f"extra: {out / name} (no spec builds it)")
    if report.ok:
        return 0
    print(
        "fixtures differ from their specs; run `lethe fixtures build` and commit", file=sys.stderr
    )
    return EXIT_DIFFERENT
