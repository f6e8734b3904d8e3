"""Every KIP-68 scenario passes against the embedded reference broker.

The expectations in the scenario files come from the KIP-68 text and the catalog's
decisions (fixtures/requirements/kip68.json); this test is where the reference
broker is held to them. One broker per test module serves all scenarios, each on
topics of its own; a changed expectation (an int64 bumped) must make each fail
(tests/conformance/profile_scenarios.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_conformance.scenarios import Scenario
from lethe_conformance.targets.embedded import EmbeddedTarget
from profile_scenarios import (
    assert_fails_when_changed,
    assert_passes,
    bump_int64,
    profile_scenarios,
    target,
)

__all__ = ["target"]

SCENARIOS = profile_scenarios("kip68")


def test_there_are_kip68_scenarios() -> None:
    assert len(SCENARIOS) >= 8


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    assert_passes(target, scenario)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: bump one expected value and it fails there."""
    assert_fails_when_changed(target, scenario, tmp_path, bump_int64)
