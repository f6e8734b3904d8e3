"""Every KIP-87 scenario passes against the embedded reference broker.

The expectations in the scenario files come from the KIP-87 text, the kip87
catalog's decisions and Kafka's behaviour (kafka-facts.md); this test is where
the reference broker, which offers the extension, is held to them. One broker
per test module serves all scenarios, each on topics of its own.

A scenario that checked nothing would pass on any broker, so each one is also
run with one expected value changed, and must then fail at that step.
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
    sorted((scenarios_root() / "kip87").glob("*.json")),
    known_requirements=known_requirement_ids(),
)
#: Steps whose expectations decide nothing by themselves or are retried.
_UNJUDGED = ("wait", "produce")


@pytest.fixture(scope="module")
def target() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as embedded:
        yield embedded


def test_there_are_kip87_scenarios() -> None:
    assert len(SCENARIOS) >= 7
    assert {s.profile for s in SCENARIOS} == {"kip87"}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    result = run_scenario(target, scenario)
    report = [result.detail, *map(str, result.mismatches)]
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert set(result.requirements.values()) == {Outcome.PASS}


# --- a changed expectation must fail -------------------------------------------------------

KeyPath = list[str | int]


def first_checked_value(data: dict[str, Any]) -> tuple[int, KeyPath]:
    """(step index, key path) of the first changeable expected value outside waits."""
    for index, step in enumerate(data["steps"]):
        if step["op"] in _UNJUDGED or "expect" not in step:
            continue
        path = _changeable(step["expect"], ["expect"])
        if path is not None:
            return index, path
    raise AssertionError(f"{data['id']} checks no value outside waits")


def _changeable(value: Any, path: KeyPath) -> KeyPath | None:
    """An int64 string, a record attributes byte, a boolean or a config's true/false."""
    key = path[-1]
    if isinstance(value, bool) or (key == "attributes" and isinstance(value, int)):
        return path
    if isinstance(value, str) and (value.lstrip("-").isdigit() or value in ("true", "false")):
        return path
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for item_key, item in items:
        found = _changeable(item, [*path, item_key])
        if found is not None:
            return found
    return None


def changed(value: Any) -> Any:
    """A different value of the same type the schema accepts."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value ^ 1  # an attributes byte stays a byte
    if value in ("true", "false"):
        return "false" if value == "true" else "true"
    return str(int(value) + 1)


def test_the_changeable_value_finder_covers_each_kind() -> None:
    assert changed(True) is False and changed(0) == 1 and changed(255) == 254
    assert changed("true") == "false" and changed("-1") == "0"
    found = _changeable({"configs": {"x": "false"}}, ["expect"])
    assert found == ["expect", "configs", "x"]
    assert _changeable({"error": "NONE", "records": [{"offset": "3"}]}, ["expect"]) == [
        "expect",
        "records",
        0,
        "offset",
    ]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: change one expected value and it fails there."""
    data = json.loads(Path(scenario.source).read_text())
    index, keys = first_checked_value(data)
    holder = data["steps"][index]
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = changed(holder[keys[-1]])
    path = tmp_path / Path(scenario.source).name
    path.write_text(json.dumps(data))
    result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.FAIL, result.detail
    assert result.steps[-1].index == index
    assert result.mismatches
    assert all(m.path.startswith(f"$.steps[{index}].expect") for m in result.mismatches)


def attribute_checks(scenario: Scenario) -> list[tuple[int, dict[str, Any]]]:
    """(step index, expected record) of every fetched record whose attributes are compared."""
    data = json.loads(Path(scenario.source).read_text())
    return [
        (index, record)
        for index, step in enumerate(data["steps"])
        if step["op"] == "fetch"
        for record in step.get("expect", {}).get("records", ())
        if "attributes" in record
    ]


ATTRIBUTE_SCENARIOS = [s for s in SCENARIOS if attribute_checks(s)]


def test_most_kip87_scenarios_compare_record_attributes() -> None:
    assert len(ATTRIBUTE_SCENARIOS) >= 5


@pytest.mark.parametrize("scenario", ATTRIBUTE_SCENARIOS, ids=lambda s: s.id)
def test_a_changed_record_attributes_expectation_fails(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Where a scenario checks fetched record attributes, the broker's bytes are really compared:
    flipping bit 0 of the last such expectation makes the scenario fail at that step."""
    data = json.loads(Path(scenario.source).read_text())
    index, _ = attribute_checks(scenario)[-1]
    (record,) = [r for r in data["steps"][index]["expect"]["records"] if "attributes" in r][-1:]
    record["attributes"] ^= 1
    path = tmp_path / Path(scenario.source).name
    path.write_text(json.dumps(data))
    result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.FAIL, result.detail
    assert result.steps[-1].index == index
    assert any(m.path.endswith(".attributes") for m in result.mismatches)
