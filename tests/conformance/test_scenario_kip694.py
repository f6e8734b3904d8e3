"""Every KIP-694 scenario passes against the embedded reference broker.

The expectations in the scenario files come from the KIP text and the
requirement catalog's decisions (fixtures/requirements/kip694.json); this test
is where the reference broker is held to them. One broker per test module
(started with ``delete.topic.partition.enable=true`` by the embedded target)
serves all scenarios, each on topics of its own.

A changed expectation must make each scenario fail at that step: the first
value a scenario checks outside waits and produce steps is changed (an int64
string bumped, an error name swapped, a mode, status or flag turned) and the
run must FAIL there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.scenarios import Scenario
from lethe_conformance.targets.embedded import EmbeddedTarget
from profile_scenarios import (
    assert_fails_when_changed,
    assert_passes,
    profile_scenarios,
    target,
)

__all__ = ["target"]

SCENARIOS = profile_scenarios("kip694")
#: Keys whose values name what is checked, not what is expected.
_NAMES = frozenset({"topic", "partition", "api_key", "file"})
#: Mode and status codes, each turned into another valid one.
_MODES = {0: 1, 1: -1, -1: 0}
_DIRECTORIES = {"live": "gone", "deleted": "live", "gone": "deleted"}


def test_there_are_kip694_scenarios() -> None:
    assert len(SCENARIOS) >= 8


def test_the_embedded_target_offers_kip694(target: EmbeddedTarget) -> None:
    assert "kip694" in target.profiles()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    assert_passes(target, scenario)


def _changed(key: str | int, value: Any) -> Any:
    """A different value of the same kind, or None when ``value`` is not an expectation."""
    if key in _NAMES:
        return None
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return _MODES[value] if key in ("mode", "status") else value + 1
    if not isinstance(value, str):
        return None
    if value.lstrip("-").isdigit():
        return str(int(value) + 1)
    if key == "directory":
        return _DIRECTORIES[value]
    if key == "error":
        return "UNKNOWN_SERVER_ERROR" if value == "NONE" else "NONE"
    return None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: change one expected value and it fails there."""
    assert_fails_when_changed(target, scenario, tmp_path, _changed)
