"""Every KIP-68 scenario passes against the embedded reference broker.

The expectations in the scenario files come from Kafka (golden case.json,
kafka-facts.md); this test is where the reference broker is held to them.
One broker per test module serves all scenarios, each on topics of its own, as
a shared CI broker would.
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
    sorted((scenarios_root() / "kip68").glob("*.json")),
    known_requirements=known_requirement_ids(),
)


@pytest.fixture(scope="module")
def target() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as embedded:
        yield embedded


def test_there_are_kip68_scenarios() -> None:
    assert len(SCENARIOS) >= 8


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    result = run_scenario(target, scenario)
    report = [result.detail, *map(str, result.mismatches)]
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert set(result.requirements.values()) == {Outcome.PASS}


def first_checked_int64(data: dict[str, Any]) -> tuple[int, list[str | int]]:
    """(step index, key path inside the step) of the first int64 expectation outside waits."""
    for index, step in enumerate(data["steps"]):
        if step["op"] in ("wait", "produce") or "expect" not in step:
            continue
        path = _int64_path(step["expect"], ["expect"])
        if path is not None:
            return index, path
    raise AssertionError(f"{data['id']} checks no int64 value outside waits")


def _int64_path(value: Any, path: list[str | int]) -> list[str | int] | None:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return path
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found = _int64_path(item, [*path, key])
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: bump one expected value and it fails there."""
    data = json.loads(Path(scenario.source).read_text())
    index, keys = first_checked_int64(data)
    holder = data["steps"][index]
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = str(int(holder[keys[-1]]) + 1)
    path = tmp_path / Path(scenario.source).name
    path.write_text(json.dumps(data))
    result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.FAIL
    assert result.steps[-1].index == index
    assert result.mismatches
    assert all(m.path.startswith(f"$.steps[{index}].expect") for m in result.mismatches)
