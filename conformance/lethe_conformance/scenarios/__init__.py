"""Scenarios: the data format's loader, the run context, the ops and the runner.

``model``    typed scenarios and the fixture encodings (int64 strings, bytes, errors)
``loader``   files -> scenarios through JSON, the schema and cross-field rules
``context``  one run: unique topic names, the connection, mismatch collection
``ops``      one function per op
``runner``   :func:`run_scenarios` / :func:`run_scenario` and :class:`Selection`
"""

from lethe_conformance.scenarios.loader import (
    known_requirement_ids,
    load_scenario,
    load_scenarios,
    scenarios_root,
)
from lethe_conformance.scenarios.model import Scenario, ScenarioError, wall_clock_broker_configs
from lethe_conformance.scenarios.runner import Selection, SetupError, run_scenario, run_scenarios

__all__ = [
    "Scenario",
    "ScenarioError",
    "Selection",
    "SetupError",
    "known_requirement_ids",
    "load_scenario",
    "load_scenarios",
    "run_scenario",
    "run_scenarios",
    "scenarios_root",
    "wall_clock_broker_configs",
]
