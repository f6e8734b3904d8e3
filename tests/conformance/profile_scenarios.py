"""What the per-profile scenario modules (test_scenario_<profile>.py) share.

Each profile's module holds the reference broker to its scenarios in two ways:
every scenario passes on the embedded broker, and every scenario run with one
expected value changed fails at that step (a scenario that checked nothing
would pass on any broker). The modules differ only in which values they know
how to change; the walk, the run and the judgement live here, once.

A *changer* takes ``(key, value)`` of an expectation leaf and returns a
different value of the same kind the schema accepts, or None when that leaf
is not an expectation it can change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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

KeyPath = list[str | int]
Changer = Callable[[str | int, Any], Any]

#: Steps whose expectations decide nothing by themselves (produce) or are retried (wait).
UNJUDGED = ("wait", "produce")


def profile_scenarios(profile: str) -> list[Scenario]:
    """The shipped scenarios of ``profile``, loaded against the catalog."""
    return load_scenarios(
        sorted((scenarios_root() / profile).glob("*.json")),
        known_requirements=known_requirement_ids(),
    )


@pytest.fixture(scope="module")
def target() -> Iterator[EmbeddedTarget]:
    """One embedded broker per test module, as a shared CI broker would serve them all."""
    with EmbeddedTarget() as embedded:
        yield embedded


def assert_passes(target: EmbeddedTarget, scenario: Scenario) -> None:
    result = run_scenario(target, scenario)
    report = [result.detail, *map(str, result.mismatches)]
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert set(result.requirements.values()) == {Outcome.PASS}


def bump_int64(key: str | int, value: Any) -> Any:
    """An int64 string one higher; nothing else."""
    del key
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return str(int(value) + 1)
    return None


def first_changeable(value: Any, path: KeyPath, change: Changer) -> KeyPath | None:
    """Key path of the first leaf below ``value`` that ``change`` can change."""
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        if not isinstance(item, dict | list) and change(key, item) is not None:
            return [*path, key]
        found = first_changeable(item, [*path, key], change)
        if found is not None:
            return found
    return None


def first_checked(data: dict[str, Any], change: Changer) -> tuple[int, KeyPath]:
    """(step index, key path) of the first changeable expectation outside waits (and
    outside the wall clock's path, which the virtual embedded target does not run)."""
    for index, step in enumerate(data["steps"]):
        if step["op"] in UNJUDGED or "expect" not in step or step.get("clock") == "wall":
            continue
        path = first_changeable(step["expect"], ["expect"], change)
        if path is not None:
            return index, path
    raise AssertionError(f"{data['id']} checks no value it can change outside waits")


def assert_fails_when_changed(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path, change: Changer
) -> None:
    """Change the first checked value; the run must FAIL at that step and only there."""
    data = json.loads(Path(scenario.source).read_text())
    index, keys = first_checked(data, change)
    holder = data["steps"][index]
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = change(keys[-1], holder[keys[-1]])
    path = tmp_path / Path(scenario.source).name
    path.write_text(json.dumps(data))
    result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.FAIL, result.detail
    assert result.steps[-1].index == index
    assert result.mismatches
    assert all(m.path.startswith(f"$.steps[{index}].expect") for m in result.mismatches)
