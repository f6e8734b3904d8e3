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
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import Scenario, load_scenario, run_scenario
from lethe_conformance.targets.embedded import EmbeddedTarget
from profile_scenarios import (
    assert_fails_when_changed,
    assert_passes,
    first_changeable,
    profile_scenarios,
    target,
)

__all__ = ["target"]

SCENARIOS = profile_scenarios("kip87")


def test_there_are_kip87_scenarios() -> None:
    assert len(SCENARIOS) >= 7
    assert {s.profile for s in SCENARIOS} == {"kip87"}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    assert_passes(target, scenario)


# --- a changed expectation must fail -------------------------------------------------------


def changed(key: str | int, value: Any) -> Any:
    """An int64 string, a record attributes byte, a boolean or a config's true/false, changed
    to another value of the same type the schema accepts; None for anything else."""
    if isinstance(value, bool):
        return not value
    if key == "attributes" and isinstance(value, int):
        return value ^ 1  # an attributes byte stays a byte
    if isinstance(value, str) and value in ("true", "false"):
        return "false" if value == "true" else "true"
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return str(int(value) + 1)
    return None


def test_the_changeable_value_finder_covers_each_kind() -> None:
    assert changed("x", True) is False and changed("attributes", 0) == 1
    assert changed("attributes", 255) == 254 and changed("x", "-1") == "0"
    assert changed("x", "true") == "false" and changed("error", "NONE") is None
    found = first_changeable({"configs": {"x": "false"}}, ["expect"], changed)
    assert found == ["expect", "configs", "x"]
    assert first_changeable(
        {"error": "NONE", "records": [{"offset": "3"}]}, ["expect"], changed
    ) == ["expect", "records", 0, "offset"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: change one expected value and it fails there."""
    assert_fails_when_changed(target, scenario, tmp_path, changed)


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
