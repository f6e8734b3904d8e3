"""``lethe conformance faults``: how many deliberate broker faults the suite detects.

For each fault of the reference broker (``conformance/FAULTS.md``; ``--fault``
to pick some) an embedded broker with that fault runs the scenarios covering
the requirements the fault breaks (``--whole-profile``: every scenario of
their profiles), after a control run without faults. Prints a table fault x
detected (by which scenarios and requirements) and "N of M faults detected";
``--report DIR`` writes faults.json and faults.md there, ``--json`` prints
the JSON.

Exit status: 0 when every selected fault was detected, 1 when one was not,
2 when the run cannot start (unknown fault, malformed scenario): one line on
stderr, and faults.json, if asked for, says ``"complete": false``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lethe_conformance.faults import (
    fault_report_data,
    render_markdown,
    render_table,
    run_faults,
)
from lethe_conformance.run import RunSetupError, lethe_version, now_utc

__all__ = ["register", "run"]

EXIT_SETUP = 2
JSON_NAME = "faults.json"
MARKDOWN_NAME = "faults.md"


def register(actions: Any) -> None:
    parser = actions.add_parser(
        "faults",
        help="run the suite against each deliberate fault of the reference broker",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--fault", action="append", default=[], metavar="NAME", help="run only this fault"
    )
    parser.add_argument(
        "--whole-profile",
        action="store_true",
        help="run every scenario of the faults' profiles, not only the targeted ones",
    )
    parser.add_argument("--report", type=Path, metavar="DIR", help="write the reports here")
    parser.add_argument("--json", action="store_true", help="print the JSON, not a table")
    parser.set_defaults(func=run)


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _write_incomplete(folder: Path, error: str, started: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKDOWN_NAME).unlink(missing_ok=True)
    data = {
        "kind": "lethe-fault-run",
        "complete": False,
        "error": error,
        "started": started,
        "lethe_version": lethe_version(),
    }
    _write(folder / JSON_NAME, json.dumps(data, indent=2) + "\n")


def _write_reports(folder: Path, data: Mapping[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / MARKDOWN_NAME, render_markdown(data))
    _write(folder / JSON_NAME, json.dumps(data, indent=2) + "\n")


def run(args: argparse.Namespace) -> int:
    started = now_utc()
    if args.report is not None:
        _write_incomplete(args.report, "run in progress or interrupted", started)
    try:
        result = run_faults(tuple(args.fault), whole_profile=args.whole_profile)
    except RunSetupError as error:
        print(f"lethe conformance faults: {error}", file=sys.stderr)
        if args.report is not None:
            _write_incomplete(args.report, str(error), started)
        return EXIT_SETUP
    data = fault_report_data(result)
    if args.report is not None:
        _write_reports(args.report, data)
    sys.stdout.write(json.dumps(data, indent=2) + "\n" if args.json else render_table(data))
    return result.exit_code
