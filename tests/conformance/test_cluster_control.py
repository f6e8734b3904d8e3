"""Capability cluster-control: which targets offer it, how scenarios must declare it, and
what a broker reached by address answers for it (not applicable, never a failure)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios.loader import load_scenario
from lethe_conformance.scenarios.model import ScenarioError
from lethe_conformance.scenarios.runner import run_scenario
from lethe_conformance.targets.bootstrap import BootstrapTarget
from lethe_conformance.targets.cluster import CLUSTER_CONTROL, EmbeddedClusterTarget
from lethe_conformance.targets.embedded import DEFAULT_START_MS, EmbeddedTarget
from lethe_formats.fixtures import fixtures_root

ON_FOLLOWER = fixtures_root() / "scenarios/kip107/kip107-cluster-delete-records-on-follower.json"


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


def test_the_embedded_target_offers_cluster_control_and_a_bootstrap_target_does_not(
    embedded: EmbeddedTarget,
) -> None:
    assert CLUSTER_CONTROL in embedded.capabilities.names()
    assert CLUSTER_CONTROL not in BootstrapTarget(embedded.bootstrap).capabilities.names()


def test_a_cluster_scenario_on_a_broker_reached_by_address_is_not_applicable(
    embedded: EmbeddedTarget,
) -> None:
    result = run_scenario(BootstrapTarget(embedded.bootstrap), load_scenario(ON_FOLLOWER))
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "cluster-control" in result.detail


def test_the_same_scenario_passes_on_the_embedded_targets_own_cluster(
    embedded: EmbeddedTarget,
) -> None:
    assert run_scenario(embedded, load_scenario(ON_FOLLOWER)).outcome is Outcome.PASS


def test_a_step_naming_a_broker_needs_cluster_control(tmp_path: Path) -> None:
    data = json.loads(ON_FOLLOWER.read_text())
    data["requires"] = ["clock-control"]
    data["steps"] = [s for s in data["steps"] if s["op"] != "delete_records"]
    path = tmp_path / f"{data['id']}.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError, match="broker needs 'cluster-control'"):
        load_scenario(path)


def test_the_cluster_target_names_three_brokers_and_holds_nothing_at_start() -> None:
    with EmbeddedClusterTarget(overrides={}, start_ms=DEFAULT_START_MS) as cluster:
        assert CLUSTER_CONTROL in cluster.capabilities.names()
        for node in (1, 2, 3):
            with cluster.connect_to(node) as conn:
                assert conn.versions
            assert cluster.held_requests(node) == 0
