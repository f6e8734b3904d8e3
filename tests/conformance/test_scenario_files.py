"""Scenario files: every shipped one is valid and names real requirements; broken ones are
refused with the file and the place of the fault.

Each bad-input test starts from a valid scenario and breaks one thing, so the
message it gets is about that one fault (as toml-test's invalid cases are).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from lethe_conformance.scenarios import (
    ScenarioError,
    known_requirement_ids,
    load_scenario,
    load_scenarios,
    scenarios_root,
)
from lethe_conformance.scenarios.loader import scenario_files
from lethe_formats.fixtures import fixtures_root

SCHEMA = fixtures_root() / "schema" / "scenario.schema.json"
CATALOG = known_requirement_ids()

#: KIP-107 requirements a scenario can observe but none covers yet, and why: this list
#: must shrink, never silently grow (a newly covered ID must be removed from it).
NOT_YET_COVERED: dict[str, str] = {
    "KIP107-SEG-8": "the scenario runner has no DescribeLogDirs step yet; covered on the "
    "reference broker by tests/reference/handlers/test_describe_log_dirs.py against the "
    "recorded kafka-log-dirs.sh answers of a real Kafka 4.0.0",
}


#: KIP-534 requirements a scenario can observe but none covers, and why (kip534 helper's list).
NOT_YET_COVERED_KIP534: dict[str, str] = {
    "KIP534-TXC-5": "the order depends on the hashes of the run's unique transactional ids and "
    "list_transactions judges membership, not order; covered on the reference broker by "
    "tests/reference/txn/test_txn_handlers.py against the recorded kafka-transactions.sh list "
    "of a real Kafka 4.0.0",
}


#: KIP-68 requirements a scenario can observe but none covers, and why (kip68 helper's list).
NOT_YET_COVERED_KIP68: dict[str, str] = {}


#: KIP-87 requirements a scenario can observe but none covers, and why (kip87 helper's list).
NOT_YET_COVERED_KIP87: dict[str, str] = {}


#: KIP-694 requirements a scenario can observe but none covers, and why (kip694 helper's list).
NOT_YET_COVERED_KIP694: dict[str, str] = {
    "KIP694-ERR-9": "a scenario would make a real Kafka 4.0 target commit 10,000 partitions "
    "(it keeps the records that fit); covered on the reference broker by "
    "tests/reference/handlers/test_controller_bounds.py",
}


def valid() -> dict[str, Any]:
    data = json.loads(
        (scenarios_root() / "kip107" / "kip107-fetch-bounds-and-versions.json").read_text()
    )
    assert isinstance(data, dict)
    return data


def write(tmp_path: Path, data: dict[str, Any], name: str | None = None) -> Path:
    path = tmp_path / f"{name or data['id']}.json"
    path.write_text(json.dumps(data))
    return path


def refused(tmp_path: Path, data: dict[str, Any]) -> ScenarioError:
    path = write(tmp_path, data)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.source == str(path)
    return caught.value


# --- the shipped scenarios ----------------------------------------------------------------


def test_the_scenario_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(json.loads(SCHEMA.read_text()))


def test_every_shipped_scenario_loads_and_names_only_catalog_requirements() -> None:
    scenarios = load_scenarios(known_requirements=CATALOG)
    assert len(scenarios) == len(scenario_files())
    assert all(set(s.requirements) <= CATALOG for s in scenarios)


def test_scenarios_live_in_their_profiles_folder() -> None:
    for scenario in load_scenarios():
        assert Path(scenario.source).parent.name == scenario.profile


def test_kip107_coverage_gaps_are_exactly_the_listed_ones() -> None:
    catalog = json.loads((fixtures_root() / "requirements" / "kip107.json").read_text())
    observable = {
        r["id"] for r in catalog["requirements"] if r["observable"]["by"] != "not-observable"
    }
    covered = {r for s in load_scenarios() for r in s.requirements}
    assert observable - covered == set(NOT_YET_COVERED)


def test_a_kip107_profile_run_covers_every_observable_kip107_requirement_but_the_listed() -> None:
    """What ``--lethe-profile kip107`` (or ``lethe conformance run --profile kip107``) runs: the
    kip107 scenarios alone cover every kip107 requirement a target can observe, except the
    listed gaps; each gap is observable (not-observable ones are the catalog's call) and says
    why it stays open."""
    catalog = json.loads((fixtures_root() / "requirements" / "kip107.json").read_text())
    how = {r["id"]: r["observable"]["by"] for r in catalog["requirements"]}
    observable = {rid for rid, by in how.items() if by != "not-observable"}
    kip107_run = [s for s in load_scenarios() if s.profile == "kip107"]
    covered = {r for s in kip107_run for r in s.requirements if r.startswith("KIP107-")}
    assert observable - covered == set(NOT_YET_COVERED)
    assert all(how[rid] != "not-observable" and reason for rid, reason in NOT_YET_COVERED.items())


def test_kip534_coverage_gaps_are_exactly_the_listed_ones() -> None:
    catalog = json.loads((fixtures_root() / "requirements" / "kip534.json").read_text())
    observable = {
        r["id"] for r in catalog["requirements"] if r["observable"]["by"] != "not-observable"
    }
    covered = {r for s in load_scenarios() for r in s.requirements}
    assert observable - covered == set(NOT_YET_COVERED_KIP534)


def test_kip68_coverage_gaps_are_exactly_the_listed_ones() -> None:
    catalog = json.loads((fixtures_root() / "requirements" / "kip68.json").read_text())
    observable = {
        r["id"] for r in catalog["requirements"] if r["observable"]["by"] != "not-observable"
    }
    covered = {r for s in load_scenarios() for r in s.requirements}
    assert observable - covered == set(NOT_YET_COVERED_KIP68)


def test_kip87_coverage_gaps_are_exactly_the_listed_ones() -> None:
    catalog = json.loads((fixtures_root() / "requirements" / "kip87.json").read_text())
    observable = {
        r["id"] for r in catalog["requirements"] if r["observable"]["by"] != "not-observable"
    }
    covered = {r for s in load_scenarios() for r in s.requirements if s.profile == "kip87"}
    assert observable - covered == set(NOT_YET_COVERED_KIP87)


def test_kip694_coverage_gaps_are_exactly_the_listed_ones() -> None:
    catalog = json.loads((fixtures_root() / "requirements" / "kip694.json").read_text())
    how = {r["id"]: r["observable"]["by"] for r in catalog["requirements"]}
    observable = {rid for rid, by in how.items() if by != "not-observable"}
    covered = {r for s in load_scenarios() for r in s.requirements if s.profile == "kip694"}
    assert observable - covered == set(NOT_YET_COVERED_KIP694)
    assert all(how[rid] != "not-observable" for rid in NOT_YET_COVERED_KIP694)


# --- bad input: one fault each -------------------------------------------------------------


def test_invalid_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "kip107-broken.json"
    path.write_text('{"id": "kip107-broken",\n  "steps": [,]}')
    with pytest.raises(ScenarioError, match=r"kip107-broken\.json: line 2 column 13: invalid JSON"):
        load_scenario(path)


def test_a_schema_violation_names_the_json_path(tmp_path: Path) -> None:
    data = valid()
    data["steps"][2]["expect"]["partitions"][0]["low_watermark"] = 1  # an int64 must be a string
    error = refused(tmp_path, data)
    assert error.path == "$.steps[2].expect.partitions[0].low_watermark"
    assert "is not of type 'string'" in error.message


def test_an_unknown_op_is_refused_at_its_step(tmp_path: Path) -> None:
    data = valid()
    data["steps"][1]["op"] = "truncate"
    assert refused(tmp_path, data).path == "$.steps[1].op"


def test_an_unknown_field_in_an_expectation_is_refused(tmp_path: Path) -> None:
    data = valid()
    data["steps"][2]["expect"]["partitions"][0]["low_water_mark"] = "1"
    error = refused(tmp_path, data)
    assert error.path.startswith("$.steps[2].expect.partitions[0]")
    assert "low_water_mark" in error.message


def test_an_unknown_requirement_id_names_the_scenario_and_the_id(tmp_path: Path) -> None:
    data = valid()
    data["requirements"].append("KIP107-DEL-99")
    error = refused(tmp_path, data)
    assert error.path == f"$.requirements[{len(data['requirements']) - 1}]"
    assert error.message == (
        "scenario 'kip107-fetch-bounds-and-versions' names unknown requirement ID 'KIP107-DEL-99'"
    )


def test_the_catalog_is_checked_by_default_and_can_be_switched_off(tmp_path: Path) -> None:
    data = valid()
    data["requirements"].append("KIP107-DEL-99")
    path = write(tmp_path, data)
    with pytest.raises(ScenarioError, match="unknown requirement ID 'KIP107-DEL-99'"):
        load_scenario(path)
    assert load_scenario(path, check_catalog=False).id == data["id"]


def test_a_step_requirement_outside_the_scenarios_requirements_is_refused(tmp_path: Path) -> None:
    data = valid()
    data["steps"][2]["requirements"] = ["KIP107-LST-1"]
    assert "not in the scenario's requirements" in refused(tmp_path, data).message


def test_an_op_needing_an_undeclared_capability_is_refused(tmp_path: Path) -> None:
    data = valid()
    data["steps"].append({"op": "restart"})
    error = refused(tmp_path, data)
    assert (error.path, error.message) == (
        f"$.steps[{len(data['steps']) - 1}]",
        "op 'restart' needs 'restart' in $.requires",
    )


def test_a_capability_needed_inside_a_wait_must_be_declared_too(tmp_path: Path) -> None:
    data = valid()
    until = {"op": "check_files", "expect": {"partitions": [{"topic": "t", "partition": 0}]}}
    data["steps"].append({"op": "wait", "timeout_ms": 10, "until": until})
    assert "needs 'log-dir'" in refused(tmp_path, data).message


def test_an_id_that_differs_from_the_file_name_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, valid(), name="kip107-other-name")
    with pytest.raises(
        ScenarioError, match=r"\$\.id: id 'kip107-fetch-bounds-and-versions' differs"
    ):
        load_scenario(path)


def test_an_unknown_error_name_is_refused_at_its_path(tmp_path: Path) -> None:
    data = valid()
    data["steps"][2]["expect"]["partitions"][0]["error"] = "OFFSET_OUT_OF_BOUNDS"
    error = refused(tmp_path, data)
    assert error.path == "$.steps[2].expect.partitions[0].error"
    assert error.message == "unknown Kafka error name 'OFFSET_OUT_OF_BOUNDS'"


def test_a_replay_of_a_missing_fixture_folder_is_refused(tmp_path: Path) -> None:
    data = valid()
    data["setup"]["replay"] = [
        {"log": "logs/log-start-offset", "partition_dir": "nowhere-0", "topic": "t", "partition": 0}
    ]
    error = refused(tmp_path, data)
    assert error.path == "$.setup.replay[0]"
    assert "does not exist" in error.message


def test_two_files_with_one_id_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write(tmp_path / "a", valid())
    second = write(tmp_path / "b", copy.deepcopy(valid()))
    with pytest.raises(ScenarioError, match=f"is also used by {first}"):
        load_scenarios([first, second])


def test_the_readme_indexes_every_scenario_and_nothing_else() -> None:
    readme = (scenarios_root() / "README.md").read_text()
    table = readme.split("## The scenarios", 1)[1]
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", table, flags=re.MULTILINE))
    assert listed == {s.id for s in load_scenarios()}
