"""The wall-clock path of every time-based scenario, and the rules of a path per clock.

A time-based scenario (one with ``wall_clock``) runs on a virtual clock with
advance_time and trigger_cleaning, and on a broker whose clock and cleaner run by
themselves with waits for what the broker did (README, *Time*). The virtual path
is held to Kafka by the per-profile modules; here the reference broker runs on
the system clock, with the broker settings the scenarios ask a launched broker
for (``wall_clock.broker_configs``), and every wall path must pass, with exactly
the requirements the scenario names as virtual-only left not applicable and the
reason given. No test sleeps: the scenarios wait for conditions, each bounded.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.outcomes import Mismatch, Outcome
from lethe_conformance.scenarios import (
    Scenario,
    ScenarioError,
    load_scenario,
    load_scenarios,
    run_scenario,
    wall_clock_broker_configs,
)
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import VIRTUAL, WALL
from lethe_conformance.scenarios.runner import clock_path
from lethe_conformance.targets.base import (
    ALL_CAPABILITIES,
    DISCOVERED_CAPABILITIES,
    CapabilityMissingError,
)
from lethe_conformance.targets.cluster import EmbeddedClusterTarget
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_tools.cli import main

ALL = load_scenarios()
TIMED = [s for s in ALL if s.wall_clock is not None]
#: every scenario that moves time or runs the cleaner on demand has a wall path, except
#: those with injected failures (only the embedded broker, on its virtual clock, offers
#: them) and the cluster scenarios of extension profiles (KIP-694's runs only on lethe's
#: embedded cluster); the adopted profiles' cluster scenarios run on a launched Kafka too
VIRTUAL_ONLY_SCENARIOS = {
    s.id
    for s in ALL
    if "inject-failure" in s.requires
    or ("cluster-control" in s.requires and s.profile not in ("kip107", "kip534"))
}
#: cluster scenarios holding a DeleteRecords whose requested offset is given / -1
WIRE_EVIDENCE = [
    s
    for s in TIMED
    if s.id
    in (
        "kip107-cluster-delete-records-waits-for-followers",
        "kip107-cluster-restarted-follower-raises-high-watermark",
    )
]


@pytest.fixture(scope="module")
def wall_target() -> Iterator[EmbeddedTarget]:
    """The reference broker on the system clock, configured as a launched broker would be."""
    with EmbeddedTarget(clock="wall", overrides=wall_clock_broker_configs(ALL)) as embedded:
        yield embedded


def test_time_based_scenarios_all_have_a_wall_path() -> None:
    """No scenario outside a cluster or an injected failure needs clock-control or
    trigger-cleaning: the rest run on a broker whose clock and cleaner run by themselves."""
    stuck = [
        s.id
        for s in ALL
        if {"clock-control", "trigger-cleaning"} & s.requires and s.id not in VIRTUAL_ONLY_SCENARIOS
    ]
    assert stuck == []
    assert len(TIMED) >= 20


@pytest.mark.parametrize("scenario", TIMED, ids=lambda s: s.id)
def test_wall_path_passes_on_the_wall_clock(
    wall_target: EmbeddedTarget, scenario: Scenario
) -> None:
    assert clock_path(scenario, wall_target.capabilities.names()) == WALL
    result = run_scenario(wall_target, scenario)
    report = [result.detail, *map(str, result.mismatches)]
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert scenario.wall_clock is not None
    virtual_only = set(scenario.wall_clock.virtual_only)
    assert {r for r, o in result.requirements.items() if o is not Outcome.PASS} == virtual_only
    assert all(result.requirements[r] is Outcome.NOT_APPLICABLE for r in virtual_only)
    assert set(result.notes) == virtual_only
    assert all(scenario.wall_clock.virtual_only[r] in result.notes[r] for r in virtual_only)
    ran = {step.index for step in result.steps}
    assert ran == {step.index for step in scenario.steps_on(WALL)}


@pytest.mark.parametrize("scenario", WIRE_EVIDENCE, ids=lambda s: s.id)
def test_a_held_request_is_seen_on_the_wire_without_a_purgatory_view(
    wall_target: EmbeddedTarget, scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launched broker has no purgatory view: send_delete_records then learns the
    arrival from the log start offset (the requested offset, or LATEST for -1), and
    expect_pending still sees the request held, as on Kafka."""

    def no_view(self: EmbeddedClusterTarget, node_id: int) -> int:
        raise CapabilityMissingError(self.name, "held-requests")

    monkeypatch.setattr(EmbeddedClusterTarget, "held_requests", no_view)
    result = run_scenario(wall_target, scenario)
    assert result.outcome is Outcome.PASS, "\n".join([result.detail, *map(str, result.mismatches)])


def test_the_virtual_target_takes_the_virtual_path() -> None:
    names = ALL_CAPABILITIES | DISCOVERED_CAPABILITIES  # the embedded broker serves transactions
    assert {clock_path(s, names) for s in TIMED} == {VIRTUAL}
    # a control hook that can advance time but not trigger cleaning: the wall path, waiting
    hook = frozenset({"clock-control", "log-dir"})
    cleaning = next(s for s in TIMED if any(st.op == "trigger_cleaning" for st in s.steps))
    assert clock_path(cleaning, hook) == WALL
    assert clock_path(next(s for s in ALL if s.wall_clock is None), names) is None


def _scenario_json(tmp_path: Path, name: str, mutate: Any) -> Path:
    source = next(s for s in TIMED if s.id == "kip534-min-compaction-lag-holds-records")
    data = json.loads(Path(source.source).read_text())
    data = copy.deepcopy(data)
    mutate(data)
    data["id"] = name
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("wall_clock"), "a step's clock needs $.wall_clock"),
        (lambda d: d["requires"].append("trigger-cleaning"), "would keep the wall path"),
        (
            lambda d: (
                d["steps"].__setitem__(
                    6, {**d["steps"][6], "clock": "virtual", "requirements": ["KIP534-CLN-2"]}
                )
                or d["steps"].__setitem__(7, {**d["steps"][7], "clock": "virtual"})
            ),
            "shown by virtual-clock steps only",
        ),
        (
            lambda d: d["wall_clock"].__setitem__(
                "virtual_only", [{"requirements": ["KIP534-CLN-2"], "why": "a reason"}]
            ),
            "is shown on the wall path too",
        ),
        (
            lambda d: (
                d["steps"][0].__setitem__("clock", "wall")
                or d["steps"].insert(1, {"op": "trigger_cleaning", "clock": "wall"})
            ),
            "needs 'trigger-cleaning'",
        ),
    ],
)
def test_loader_refuses_a_broken_clock_split(tmp_path: Path, mutate: Any, message: str) -> None:
    path = _scenario_json(tmp_path, "kip534-broken-split", mutate)
    with pytest.raises(ScenarioError, match=message.replace("$", r"\$").replace("(", r"\(")):
        load_scenario(path)


def test_a_captured_value_counts_only_on_its_own_path(tmp_path: Path) -> None:
    def mutate(data: dict[str, Any]) -> None:
        data["setup"]["topics"].append(
            {
                "name": "clock",
                "partitions": 1,
                "configs": {"message.timestamp.type": "LogAppendTime"},
            }
        )
        data["steps"].insert(
            0,
            {
                "op": "produce",
                "clock": "virtual",
                "topic": "clock",
                "partition": 0,
                "batches": [{"records": [{"key": "k", "value": "v", "timestamp": "0"}]}],
                "capture": {"log_append_time": "now"},
            },
        )
        data["steps"].append(
            {
                "op": "fetch",
                "topic": "t",
                "partition": 0,
                "offset": "1",
                "expect": {"records": [{"offset": "1", "timestamp": {"ref": "now"}}]},
            }
        )

    path = _scenario_json(tmp_path, "kip534-capture-per-path", mutate)
    with pytest.raises(ScenarioError, match="captured by no earlier step on the wall clock's path"):
        load_scenario(path)


def test_between_judges_a_closed_range(wall_target: EmbeddedTarget) -> None:
    ctx = RunContext(wall_target, TIMED[0])
    ctx.capture("low", 1000)
    ctx.capture("high", 2000)
    spec = {"between": [{"ref": "low", "plus": "5"}, {"ref": "high", "plus": "5"}]}
    exp = Expectations()
    for inside in (1005, 1500, 2005):
        ctx.judge_int(exp, "$.x", spec, inside)
    assert exp.mismatches == []
    for outside in (1004, 2006, None):
        ctx.judge_int(exp, "$.x", spec, outside)
    assert exp.mismatches == [
        Mismatch("$.x", "between 1005 and 2005", "1004"),
        Mismatch("$.x", "between 1005 and 2005", "2006"),
        Mismatch("$.x", "between 1005 and 2005", "null"),
    ]
    ctx.close()


def test_broker_settings_of_the_wall_paths_merge_and_conflicts_are_refused() -> None:
    merged = wall_clock_broker_configs(ALL)
    assert merged["log.cleaner.backoff.ms"] == "1000"
    assert merged["log.retention.check.interval.ms"] == "1000"
    first = TIMED[0]
    assert first.wall_clock is not None
    name = next(iter(first.wall_clock.broker_configs))
    other = dataclasses.replace(
        first, wall_clock=dataclasses.replace(first.wall_clock, broker_configs={name: "1"})
    )
    with pytest.raises(ScenarioError, match=f"{name}=1 differs"):
        wall_clock_broker_configs([first, other])


def test_the_report_gives_the_reason_a_requirement_needs_a_virtual_clock(
    wall_target: EmbeddedTarget, tmp_path: Path
) -> None:
    """A requirement that only virtual steps show is not applicable on a wall-clock
    target, and the JSON report says why, in the scenario's words."""
    why = "the lag's hold shows only when the cleaner runs on demand"

    def mutate(data: dict[str, Any]) -> None:
        for step in data["steps"]:
            if step.get("clock") != "virtual":
                step.pop("requirements", None)
        data["wall_clock"]["virtual_only"] = [{"requirements": ["KIP534-CLN-2"], "why": why}]

    folder = tmp_path / "scenarios"
    folder.mkdir()
    _scenario_json(folder, "kip534-lag-reason", mutate)
    report = tmp_path / "report"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([
            "conformance", "run", "--target", wall_target.bootstrap, "--scenarios", str(folder),
            "--profile", "kip534", "--report", str(report),
        ])  # fmt: skip
    assert status == 0, err.getvalue()
    rows = json.loads((report / "report.json").read_text())["requirements"]
    row = next(r for r in rows if r["id"] == "KIP534-CLN-2")
    assert row["outcome"] == "not-applicable"
    assert row["reason"] == f"needs a virtual clock: {why}"
