"""The suite's power is shown, not assumed: each deliberate fault makes it fail.

Every fault registered in ``lethe_reference.faults`` gets its own embedded
broker with ``lethe.faults=<fault>``; among the scenarios covering the
requirements the fault names (cheapest first) one must FAIL there and PASS on
a broker without faults (one control broker per module, each scenario run on
it once, when a fault first needs it). The registry
itself is pinned too: stock brokers have no faults, unknown names stop the
broker at startup, DescribeConfigs hides the internal config unless it is set,
every fault has its hook where it says, and conformance/FAULTS.md lists them.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.faults import (
    FaultSpec,
    fault_report_data,
    known_fault_specs,
    render_table,
    run_faults,
    scenarios_for,
    select_faults,
)
from lethe_conformance.outcomes import Outcome, ScenarioResult
from lethe_conformance.run import RunSetupError
from lethe_conformance.scenarios import (
    Scenario,
    known_requirement_ids,
    load_scenarios,
    run_scenario,
)
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_reference import faults
from lethe_reference.config import BrokerConfig, InvalidConfigError
from lethe_reference.config.describe import describe_broker_configs
from lethe_reference.server.defaults import broker_config
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.settings import StorageSettings
from lethe_tools.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference" / "lethe_reference"
FAULTS_DOC = ROOT / "conformance" / "FAULTS.md"
SPECS = known_fault_specs()
SCENARIOS = load_scenarios(known_requirements=known_requirement_ids())

#: Faults no scenario catches yet, with why: strict, so a new scenario that
#: catches one fails here until the entry goes.
KNOWN_UNDETECTED: dict[str, str] = {}


def _plan(spec: FaultSpec) -> list[Scenario]:
    return scenarios_for(spec, SCENARIOS)


class Control:
    """Scenario results on one broker without faults, each run once, when first asked."""

    def __init__(self, target: EmbeddedTarget) -> None:
        self.target = target
        self.results: dict[str, ScenarioResult] = {}

    def passes(self, scenario: Scenario) -> bool:
        if scenario.id not in self.results:
            self.results[scenario.id] = run_scenario(self.target, scenario)
        return self.results[scenario.id].outcome is Outcome.PASS


@pytest.fixture(scope="module")
def control() -> Iterator[Control]:
    with EmbeddedTarget() as target:
        yield Control(target)


def _cost(scenario: Scenario) -> tuple[int, int]:
    """Cheap scenarios first: no restart, few steps (a detection ends the run)."""
    return ("restart" in scenario.requires, len(scenario.steps))


# --- every fault is caught ------------------------------------------------------------------


def _fault_params() -> list[object]:
    params: list[object] = []
    for spec in SPECS:
        marks = []
        if spec.name in KNOWN_UNDETECTED:
            marks.append(pytest.mark.xfail(reason=KNOWN_UNDETECTED[spec.name], strict=True))
        params.append(pytest.param(spec, id=spec.name, marks=marks))
    return params


@pytest.mark.parametrize("spec", _fault_params())
def test_the_suite_fails_against_each_fault(spec: FaultSpec, control: Control) -> None:
    plan = sorted(_plan(spec), key=_cost)
    assert plan, f"no scenario covers {spec.requirements}"
    ran = []
    with EmbeddedTarget(faults=[spec.name]) as target:
        for scenario in plan:
            result = run_scenario(target, scenario)
            ran.append(f"{scenario.id}: {result.outcome.value}")
            if result.outcome is Outcome.FAIL and control.passes(scenario):
                assert result.mismatches or result.detail  # a detection says what was wrong
                return
    pytest.fail(f"{spec.name} not detected (a FAIL counts only if it passes without): {ran}")


# --- the registry --------------------------------------------------------------------------


def test_there_are_at_least_twelve_faults_each_naming_catalog_requirements() -> None:
    catalog = known_requirement_ids()
    assert len(faults.FAULTS) >= 12
    for fault in faults.FAULTS.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", fault.name), fault.name
        assert fault.requirements and set(fault.requirements) <= catalog, fault.name
        assert len(fault.description) > 60, fault.name


def test_a_stock_broker_has_no_faults() -> None:
    assert faults.enabled(BrokerConfig()) == frozenset()
    assert faults.enabled(broker_config()) == frozenset()
    assert BrokerConfig().get_list(faults.CONFIG_NAME) == ()


def test_configured_faults_are_active_and_others_are_not() -> None:
    config = BrokerConfig({"lethe.faults": "segments-deleted-at-once, retention-not-prefix"})
    assert faults.enabled(config) == {"segments-deleted-at-once", "retention-not-prefix"}
    assert faults.active(config, "retention-not-prefix")
    assert not faults.active(config, "fetch-above-log-end-empty")


def test_an_unknown_fault_is_refused_at_startup() -> None:
    with pytest.raises(
        InvalidConfigError, match=r"Invalid value no-such-fault for configuration lethe\.faults"
    ):
        BrokerConfig({"lethe.faults": "segments-deleted-at-once,no-such-fault"})
    with pytest.raises(InvalidConfigError, match="no-such-fault"):
        EmbeddedTarget(faults=["no-such-fault"])


def test_asking_for_an_unregistered_fault_is_a_programming_error() -> None:
    with pytest.raises(KeyError, match="fetch-typo"):
        faults.active(BrokerConfig(), "fetch-typo")


def test_storage_objects_see_the_faults_bound_to_their_log_dir(tmp_path: Path) -> None:
    from lethe_reference.clock import ManualClock

    log = PartitionLog.create(tmp_path / "t-0", StorageSettings(), clock=ManualClock(0))
    assert not faults.active(log, "segments-deleted-at-once")
    faults.bind(tmp_path, BrokerConfig({"lethe.faults": "segments-deleted-at-once"}))
    segment_file = str(tmp_path / "t-0" / "00000000000000000000.log")  # the cleaner's scope
    try:
        assert faults.active(log, "segments-deleted-at-once")
        assert faults.active(segment_file, "segments-deleted-at-once")
        assert not faults.active(log, "retention-not-prefix")
        assert not faults.active(None, "segments-deleted-at-once")
    finally:
        faults.bind(tmp_path, BrokerConfig())
    assert not faults.active(log, "segments-deleted-at-once")


def test_describe_configs_lists_lethe_faults_only_when_set() -> None:
    stock = [e.name for e in describe_broker_configs(broker_config())]
    assert "lethe.faults" not in stock and "log.retention.check.interval.ms" in stock
    configured = BrokerConfig({"lethe.faults": "retention-not-prefix"})
    (entry,) = [e for e in describe_broker_configs(configured) if e.name == "lethe.faults"]
    assert entry.value == "retention-not-prefix" and entry.read_only


@pytest.mark.parametrize("fault", list(faults.FAULTS.values()), ids=lambda f: f.name)
def test_each_fault_acts_at_one_hook_where_its_entry_says(fault: faults.Fault) -> None:
    hook = re.compile(r'faults\.active\(\s*[\w.]+,\s*"' + re.escape(fault.name) + '"')
    found = [
        p.relative_to(REFERENCE).as_posix()
        for p in REFERENCE.rglob("*.py")
        if p.name != "faults.py" and hook.search(p.read_text(encoding="utf-8"))
    ]
    assert found == [fault.where]


def test_faults_md_documents_every_fault_with_its_requirements() -> None:
    text = FAULTS_DOC.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### `([a-z0-9-]+)`\n(.*?)(?=^### |\Z)", text, re.M | re.S))
    assert sorted(sections) == sorted(faults.FAULTS)
    for fault in faults.FAULTS.values():
        section = " ".join(sections[fault.name].split())
        assert fault.description in section, fault.name
        assert f"breaks: {', '.join(fault.requirements)}" in section, fault.name
        assert f"acts in: `reference/lethe_reference/{fault.where}`" in section, fault.name
    assert re.search(rf"\*\*\d+ of {len(faults.FAULTS)} faults detected\*\*", text)


# --- the runner ----------------------------------------------------------------------------


def test_an_unknown_fault_name_is_a_setup_error() -> None:
    with pytest.raises(RunSetupError, match="unknown fault 'nope'"):
        select_faults(SPECS, ["nope"])


def test_a_fault_run_counts_detections_and_names_the_scenarios() -> None:
    cheap = [s for s in SCENARIOS if s.id == "kip107-fetch-bounds-and-versions"]
    run = run_faults(
        ["fetch-above-log-end-empty", "log-start-offset-not-clamped-on-restart"], scenarios=cheap
    )
    data = fault_report_data(run)
    assert data["summary"] == "1 of 2 faults detected"
    assert run.exit_code == 1
    rows = {row["fault"]: row for row in data["faults"]}  # in registry order
    first, second = (
        rows["fetch-above-log-end-empty"],
        rows["log-start-offset-not-clamped-on-restart"],
    )
    assert first["detected"] and "kip107-fetch-bounds-and-versions" in first["detected_by"]
    assert "KIP107-FET-5" in first["failed_requirements"] and first["named_requirement_failed"]
    assert not second["detected"] and second["scenarios_run"] == []
    assert "1 of 2 faults detected (targeted)" in render_table(data)


def test_a_scenario_failing_without_the_fault_detects_nothing() -> None:
    spec = SPECS[0]
    failing = ScenarioResult("s", "", "kip107", Outcome.FAIL, "wrong", {})
    from lethe_conformance.faults import FaultResult

    assert not FaultResult(spec, (failing,), sound=frozenset()).detected
    assert FaultResult(spec, (failing,), sound=frozenset({"s"})).detected


# --- lethe conformance faults ----------------------------------------------------------------


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["conformance", "faults", *argv])
    return status, out.getvalue(), err.getvalue()


def test_the_faults_command_prints_the_table_and_writes_reports(tmp_path: Path) -> None:
    status, out, _ = _cli("--fault", "fetch-above-log-end-empty", "--report", str(tmp_path))
    assert status == 0
    assert re.search(r"^fetch-above-log-end-empty\s+yes\s+kip107-fetch-bounds", out, re.M)
    assert "1 of 1 faults detected (targeted)" in out
    data = json.loads((tmp_path / "faults.json").read_text())
    assert data["complete"] and data["detected"] == 1 and data["total"] == 1
    assert "**1 of 1 faults detected**" in (tmp_path / "faults.md").read_text()


def test_the_faults_command_refuses_an_unknown_fault_in_one_line(tmp_path: Path) -> None:
    status, out, err = _cli("--fault", "nope", "--report", str(tmp_path))
    assert status == 2 and out == ""
    assert err.strip() == (
        "lethe conformance faults: --fault: unknown fault 'nope' (see conformance/FAULTS.md)"
    )
    assert json.loads((tmp_path / "faults.json").read_text())["complete"] is False
