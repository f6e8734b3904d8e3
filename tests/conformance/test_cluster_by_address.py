"""A three-broker cluster reached by address is a target: kip107 and kip534 as on one broker.

Scenarios outside cluster-control create their topics with replication factor 1,
so on lethe's embedded cluster the partitions of a multi-partition topic land on
different brokers: every partition request must reach its leader and every
group request its coordinator, or the answers differ from one broker's. Each
profile runs by address against one embedded broker, against the cluster with
every bootstrap address given, and with only one (not the first broker's): the
outcome of every scenario must be the same.

Every run is on the wall clock, as a broker reached by address is, with the
settings the scenarios ask a test broker for (``wall_clock.broker_configs``: fast
cleaner backoff, short follower polls). Only the scenarios waiting for what the
broker does by itself (a ``wait`` step) run on brokers checking retention every
second; the rest run on brokers whose first retention pass is an hour away, so no
pass races a scenario that
assumes none ran yet (``kip107-golden-delete-records`` reads MAX_TIMESTAMP below
the log start offset before any pass).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import (
    Scenario,
    load_scenarios,
    run_scenarios,
    wall_clock_broker_configs,
)
from lethe_conformance.scenarios.model import WALL
from lethe_conformance.targets.bootstrap import BootstrapTarget
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_reference.embedded_cluster import EmbeddedCluster

PROFILES = ("kip107", "kip534")
ALL = load_scenarios()
CHOSEN = [s for s in ALL if s.profile in PROFILES]
WALL_CONFIGS = wall_clock_broker_configs(ALL)
_RETENTION_CHECK = "log.retention.check.interval.ms"
#: settings of the brokers per group: True for the scenarios waiting for retention passes
SETTINGS = {
    True: WALL_CONFIGS,
    False: {**WALL_CONFIGS, _RETENTION_CHECK: "3600000", "log.initial.task.delay.ms": "3600000"},
}


def _timed(scenario: Scenario) -> bool:
    """The scenario waits for something the broker does by itself (a retention pass)."""
    return scenario.wall_clock is not None or any(
        step.op == "wait" for step in scenario.steps_on(WALL)
    )


@pytest.fixture(scope="module")
def brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[bool, str]]]:
    """Bootstrap addresses per layout, per settings (True: the wall-clock configs)."""
    with ExitStack() as stack:
        layouts: dict[str, dict[bool, str]] = {"single": {}, "every": {}, "one": {}}
        for timed in (False, True):
            overrides = SETTINGS[timed]
            single = stack.enter_context(EmbeddedTarget(clock="wall", overrides=overrides))
            base: Path = tmp_path_factory.mktemp("cluster")
            cluster = stack.enter_context(EmbeddedCluster(base, 3, overrides=overrides))
            layouts["single"][timed] = single.bootstrap
            layouts["every"][timed] = cluster.bootstrap
            layouts["one"][timed] = cluster.address(2)
        yield layouts


def _outcomes(addresses: dict[bool, str], profile: str) -> dict[str, tuple[Outcome, str]]:
    found: dict[str, tuple[Outcome, str]] = {}
    for timed in (False, True):
        chosen = [s for s in CHOSEN if s.profile == profile and _timed(s) == timed]
        target = BootstrapTarget(addresses[timed])
        for result in run_scenarios(target, chosen):
            found[result.scenario_id] = (result.outcome, result.detail)
        target.close()
    return found


@pytest.mark.parametrize("profile", PROFILES)
def test_a_cluster_by_address_passes_what_one_broker_passes(
    brokers: dict[str, dict[bool, str]], profile: str
) -> None:
    single = _outcomes(brokers["single"], profile)
    assert {o for o, _ in single.values()} <= {Outcome.PASS, Outcome.NOT_APPLICABLE}, single
    assert sum(o is Outcome.PASS for o, _ in single.values()) >= 5  # the comparison shows much
    for layout in ("every", "one"):
        clustered = _outcomes(brokers[layout], profile)
        differing = {
            scenario: (single[scenario], clustered.get(scenario))
            for scenario in single
            if clustered.get(scenario, (None,))[0] is not single[scenario][0]
        }
        assert not differing, (layout, differing)
