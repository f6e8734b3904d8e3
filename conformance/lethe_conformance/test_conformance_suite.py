"""The conformance suite as pytest collects it: one item per scenario.

Collected only with ``--lethe-target HOST:PORT`` or ``--lethe-embedded``
(``plugin.pytest_ignore_collect``); the plugin parametrizes ``lethe_scenario``
with the selected scenarios (ids ``<profile>/<scenario-id>``, markers, baseline
xfails) and supplies the per-worker ``lethe_target``. This module only runs
one scenario and hands its grade to :func:`lethe_conformance.plugin.check_result`.
"""

from __future__ import annotations

from lethe_conformance.baseline import Baseline
from lethe_conformance.plugin import check_result
from lethe_conformance.scenarios import Scenario, run_scenario
from lethe_conformance.targets.base import Target


def test_scenario(lethe_scenario: Scenario, lethe_target: Target, lethe_baseline: Baseline) -> None:
    __tracebackhide__ = True
    check_result(run_scenario(lethe_target, lethe_scenario), lethe_baseline)
