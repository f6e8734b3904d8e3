"""``lethe conformance settings``: the broker settings the suite's wall-clock paths assume.

A broker reached by address (``run --target``) runs on the wall clock with its own
settings. With Kafka's defaults its first retention pass comes 30 s after startup and
then one every 300 s, the log start offset checkpoint is written every 60 s and the
cleaner backs off 15 s, so the time-based scenarios wait long, or end inconclusive.
This prints the settings the selected scenarios' wall paths assume (their
``wall_clock.broker_configs``, merged) as ``server.properties`` lines, to append to
the config of the broker under test. Cluster scenarios are left out: they run only on
clusters the runner starts itself, with their own settings.

Exit status: 0, or 2 when the scenarios cannot be loaded (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lethe_conformance.scenarios import ScenarioError, wall_clock_broker_configs
from lethe_conformance.scenarios.loader import load_scenarios, scenario_files
from lethe_conformance.targets.base import CLUSTER_CONTROL

__all__ = ["register", "settings"]


def register(actions: Any) -> None:
    parser = actions.add_parser(
        "settings",
        help="print the broker settings the wall-clock scenarios assume (server.properties)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--profile", action="append", default=[], metavar="P", help="only this profile's"
    )
    parser.add_argument("--scenarios", type=Path, metavar="DIR", help="scenario files to read")
    parser.set_defaults(func=settings)


def settings(args: argparse.Namespace) -> int:
    try:
        scenarios = load_scenarios(scenario_files(args.scenarios))
        chosen = [
            s
            for s in scenarios
            if CLUSTER_CONTROL not in s.requires and (not args.profile or s.profile in args.profile)
        ]
        if not scenarios:
            raise ScenarioError(str(args.scenarios), "$", "no scenario files there")
        merged = wall_clock_broker_configs(chosen)
    except (ScenarioError, OSError) as error:
        print(f"lethe conformance settings: {error}", file=sys.stderr)
        return 2
    lines = [f"# what the wall-clock paths of {len(chosen)} scenarios assume (lethe conformance)"]
    lines += [f"{name}={value}" for name, value in merged.items()]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
