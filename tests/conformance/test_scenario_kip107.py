"""Every KIP-107 scenario passes against the embedded reference broker.

The expectations in the scenario files come from Kafka (golden case.json,
kafka-facts.md); this test is where the reference broker is held to them.
One broker per test module serves all scenarios, each on topics of its own, as
a shared CI broker would.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import (
    Scenario,
    known_requirement_ids,
    load_scenarios,
    run_scenario,
    scenarios_root,
)
from lethe_conformance.targets.embedded import EmbeddedTarget

SCENARIOS = load_scenarios(
    sorted((scenarios_root() / "kip107").glob("*.json")),
    known_requirements=known_requirement_ids(),
)


@pytest.fixture(scope="module")
def target() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as embedded:
        yield embedded


def test_there_are_kip107_scenarios() -> None:
    assert len(SCENARIOS) >= 10


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    result = run_scenario(target, scenario)
    report = [result.detail, *map(str, result.mismatches)]
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert set(result.requirements.values()) == {Outcome.PASS}
