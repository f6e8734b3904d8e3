"""Every KIP-107 and KIP-68 scenario passes against the embedded reference broker.

The expectations in the scenario files come from Kafka (golden case.json,
kafka-facts.md) for KIP-107, and from the KIP-68 text and the catalog's
decisions (fixtures/requirements/kip68.json) for KIP-68; this test is where
the reference broker is held to them. One broker per test module serves all
scenarios, each on topics of its own; a changed expectation (an int64 bumped)
must make each fail (tests/conformance/profile_scenarios.py). The two profiles
share a module because both are judged the same way; the other profiles'
modules know further kinds of values to change.
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

#: profile -> the fewest scenarios it ships
MINIMUM = {"kip107": 10, "kip68": 8}
SCENARIOS = [s for profile in MINIMUM for s in profile_scenarios(profile)]


@pytest.mark.parametrize("profile", MINIMUM)
def test_there_are_scenarios_of_each_profile(profile: str) -> None:
    assert sum(s.profile == profile for s in SCENARIOS) >= MINIMUM[profile]


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
