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

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import (
    Scenario,
    known_requirement_ids,
    load_scenario,
    load_scenarios,
    run_scenario,
    scenarios_root,
)
from lethe_conformance.targets.embedded import EmbeddedTarget

SCENARIOS = load_scenarios(
    sorted((scenarios_root() / "kip694").glob("*.json")),
    known_requirements=known_requirement_ids(),
)
#: Keys whose values name what is checked, not what is expected.
_NAMES = frozenset({"topic", "partition", "api_key", "file"})
#: Mode and status codes, each turned into another valid one.
_MODES = {0: 1, 1: -1, -1: 0}
_DIRECTORIES = {"live": "gone", "deleted": "live", "gone": "deleted"}


@pytest.fixture(scope="module")
def target() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as embedded:
        yield embedded


def test_there_are_kip694_scenarios() -> None:
    assert len(SCENARIOS) >= 8


def test_the_embedded_target_offers_kip694(target: EmbeddedTarget) -> None:
    assert "kip694" in target.profiles()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    result = run_scenario(target, scenario)
    report = [result.detail, *map(str, result.mismatches)]
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert set(result.requirements.values()) == {Outcome.PASS}


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


def first_expectation(data: dict[str, Any]) -> tuple[int, list[str | int]]:
    """(step index, key path inside the step) of the first checked value outside waits."""
    for index, step in enumerate(data["steps"]):
        if step["op"] in ("wait", "produce") or "expect" not in step:
            continue
        path = _first_path(step["expect"], ["expect"])
        if path is not None:
            return index, path
    raise AssertionError(f"{data['id']} checks nothing outside waits")


def _first_path(value: Any, path: list[str | int]) -> list[str | int] | None:
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        if not isinstance(item, dict | list) and _changed(key, item) is not None:
            return [*path, key]
        found = _first_path(item, [*path, key])
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: change one expected value and it fails there."""
    data = json.loads(Path(scenario.source).read_text())
    index, keys = first_expectation(data)
    holder = data["steps"][index]
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = _changed(keys[-1], holder[keys[-1]])
    path = tmp_path / Path(scenario.source).name
    path.write_text(json.dumps(data))
    result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.FAIL
    assert result.steps[-1].index == index
    assert result.mismatches
    assert all(m.path.startswith(f"$.steps[{index}]") for m in result.mismatches)
