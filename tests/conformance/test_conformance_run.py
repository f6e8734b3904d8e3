"""`lethe conformance run`: the main job, in-process against the embedded reference broker.

Expected values come from the catalog and scenario files (what must be listed,
what a wrong expectation must do) and from Kafka's behaviour the scenarios
encode (after DeleteRecords to offset 4, ListOffsets EARLIEST answers 4).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import main

SCENARIOS = fixtures_root() / "scenarios"
LIST_OFFSETS = SCENARIOS / "kip107" / "kip107-list-offsets-special-timestamps.json"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["conformance", "run", *argv])
    return status, out.getvalue(), err.getvalue()


def _catalog_ids() -> set[str]:
    ids: set[str] = set()
    for path in (fixtures_root() / "requirements").glob("*.json"):
        data = json.loads(path.read_text())
        ids.update(r["id"] for r in data.get("requirements", []))
    return ids


def _covered_ids() -> set[str]:
    return {
        rid
        for path in SCENARIOS.rglob("*.json")
        for rid in json.loads(path.read_text())["requirements"]
    }


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    report = tmp_path_factory.mktemp("report")
    status, out, _ = _cli("--report", str(report))
    return status, out, report


def _report(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "report.json").read_text())
    return data


def test_the_embedded_broker_passes_the_required_profiles(
    full_run: tuple[int, str, Path],
) -> None:
    status, out, report = full_run
    data = _report(report)
    assert status == 0
    assert data["complete"] is True
    # every profile the embedded target offers is required (it advertises the extensions)
    assert data["required_profiles"] == ["kip107", "kip534", "kip68", "kip694", "kip87"]
    assert data["failed_profiles"] == []
    assert data["target"]["name"] == "embedded"
    assert data["target"]["clock"] == "virtual"
    assert "log-dir" in data["target"]["capabilities"]
    assert out.rstrip().splitlines()[-1].startswith("target embedded: ")


def test_the_json_report_lists_every_catalog_requirement(
    full_run: tuple[int, str, Path],
) -> None:
    rows = _report(full_run[2])["requirements"]
    assert [r["id"] for r in rows if r["id"] not in _catalog_ids()] == []
    assert {r["id"] for r in rows} == _catalog_ids()
    assert len(rows) == len(_catalog_ids())


def _not_observable() -> dict[str, str]:
    """Catalog requirements no target can show: id -> the catalog's reason."""
    found: dict[str, str] = {}
    for path in (fixtures_root() / "requirements").glob("*.json"):
        for req in json.loads(path.read_text()).get("requirements", []):
            observable = req.get("observable") or {}
            if observable.get("by") == "not-observable":
                found[req["id"]] = observable.get("how", "")
    return found


def test_requirements_without_a_scenario_are_not_covered_not_passed(
    full_run: tuple[int, str, Path],
) -> None:
    rows = _report(full_run[2])["requirements"]
    uncovered = _catalog_ids() - _covered_ids()
    assert uncovered, "the catalog has requirements no scenario covers"
    hidden = _not_observable()
    for row in rows:
        if row["id"] in uncovered and row["id"] in hidden:
            assert row["outcome"] == "not-observable", row
            assert row["reason"] == hidden[row["id"]], row
        elif row["id"] in uncovered:
            assert row["outcome"] == "not-covered", row
        else:
            assert row["outcome"] not in ("not-covered", "not-observable", "not-selected"), row
    summary = _report(full_run[2])["summary"]
    assert summary["not-covered"] == len(uncovered - hidden.keys())
    assert summary["not-observable"] == len(uncovered & hidden.keys())


def test_reports_give_the_reason_a_requirement_is_not_observable(
    full_run: tuple[int, str, Path],
) -> None:
    hidden = _not_observable()
    shown = [r for r in _report(full_run[2])["requirements"] if r["outcome"] == "not-observable"]
    assert shown, "some catalog requirements are not observable on any target"
    markdown = (full_run[2] / "report.md").read_text()
    html = (full_run[2] / "report.html").read_text()
    for row in shown:
        reason = hidden[row["id"]]
        assert f"(not observable: {reason.replace('|', chr(92) + '|')})" in markdown, row["id"]
        assert row["id"] in html


def test_the_matrix_has_one_row_per_requirement_grouped_by_profile(
    full_run: tuple[int, str, Path],
) -> None:
    out = full_run[1]
    rows = re.findall(r"^  (\S+)\s+(\S+)\s+(\S.*)$", out, flags=re.MULTILINE)
    assert {ident for ident, _, _ in rows} == _catalog_ids()
    profiles = [ident.split("-")[0] for ident, _, _ in rows]
    assert profiles == sorted(profiles, key=profiles.index)  # each profile's rows together
    header = re.search(r"^kip107 \(required\): (\d+) pass", out, flags=re.MULTILINE)
    assert header is not None
    assert int(header.group(1)) == sum(
        1 for ident, outcome, _ in rows if ident.startswith("KIP107-") and outcome == "pass"
    )
    # each row carries the requirement's statement, shortened to fit the line
    (lst1,) = [row for row in rows if row[0] == "KIP107-LST-1"]
    assert lst1[1] == "pass"
    catalog = json.loads((fixtures_root() / "requirements" / "kip107.json").read_text())
    statement = next(r["statement"] for r in catalog["requirements"] if r["id"] == "KIP107-LST-1")
    assert statement.startswith(lst1[2].rstrip("\u2026"))
    # a row that is not a pass says why on the next line (here: the catalog's reason)
    assert re.search(r"^  KIP107-CLI-1\s+not-observable .*\n\s+why: \S", out, re.MULTILINE)


def test_the_html_report_is_one_file_with_no_external_references(
    full_run: tuple[int, str, Path],
) -> None:
    report = full_run[2]
    assert sorted(p.name for p in report.iterdir()) == ["report.html", "report.json", "report.md"]
    page = (report / "report.html").read_text()
    assert "<style>" in page
    for external in (
        "http:",
        "https:",
        "//",
        "<link",
        "<script",
        "src=",
        "href=",
        "url(",
        "@import",
    ):
        assert external not in page.replace("<!DOCTYPE html>", ""), external
    assert "KIP107-LST-1" in page


def _wrong_expectation(folder: Path) -> Path:
    """The ListOffsets scenario expecting EARLIEST 3 after DeleteRecords to 4 (Kafka says 4)."""
    data = json.loads(LIST_OFFSETS.read_text())
    step = data["steps"][2]
    assert step["requirements"] == ["KIP107-LST-1"]
    assert step["expect"]["partitions"][0]["offset"] == "4"
    step["expect"]["partitions"][0]["offset"] = "3"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LIST_OFFSETS.name
    path.write_text(json.dumps(data))
    return path


def test_a_wrong_expectation_fails_the_gate_and_names_the_requirement(tmp_path: Path) -> None:
    _wrong_expectation(tmp_path / "scenarios")
    status, out, _ = _cli("--scenarios", str(tmp_path / "scenarios"), "--report", str(tmp_path))
    assert status == 1
    assert re.search(r"^  KIP107-LST-1\s+fail\s+\S.*\n\s+why: steps\[2\] list_offsets: ", out, re.M)
    data = _report(tmp_path)
    assert data["complete"] is True
    assert data["failed_profiles"] == ["kip107"]
    (scenario,) = data["scenarios"]
    assert scenario["outcome"] == "fail"
    mismatch = scenario["mismatches"][0]
    assert mismatch["step"] == 2
    # JSON values, not Python reprs: the offsets as numbers, the line as JSON text
    assert (mismatch["expected"], mismatch["actual"]) == (3, 4)
    assert mismatch["text"].endswith("expected 3, got 4")
    assert "KIP107-LST-1" in (tmp_path / "report.md").read_text()


def test_a_baselined_failure_passes_the_gate(tmp_path: Path) -> None:
    _wrong_expectation(tmp_path / "scenarios")
    baseline = tmp_path / "baseline.json"
    known = {"scenario": "kip107-list-offsets-special-timestamps", "reason": "test"}
    baseline.write_text(json.dumps({"known_failures": [known]}))
    status, out, _ = _cli("--scenarios", str(tmp_path / "scenarios"), "--baseline", str(baseline))
    assert status == 0
    assert re.search(r"^  KIP107-LST-1\s+fail \(expected-failure\)\s+\S", out, re.MULTILINE)


def test_the_selected_profile_leaves_other_requirements_not_selected(tmp_path: Path) -> None:
    _wrong_expectation(tmp_path / "scenarios")
    status, _, _ = _cli(
        "--scenarios", str(tmp_path / "scenarios"), "--profile", "kip534", "--report", str(tmp_path)
    )
    rows = {r["id"]: r["outcome"] for r in _report(tmp_path)["requirements"]}
    assert status == 0
    assert rows["KIP107-LST-1"] == "not-selected"


def test_a_selected_profile_is_the_only_one_printed_and_gated(tmp_path: Path) -> None:
    # the failing kip107 scenario is not run: --profile kip107's failure cannot gate kip534
    _wrong_expectation(tmp_path / "scenarios")
    status, out, _ = _cli(
        "--scenarios", str(tmp_path / "scenarios"), "--profile", "kip107", "--report", str(tmp_path)
    )
    assert status == 1
    assert _report(tmp_path)["required_profiles"] == ["kip107"]
    assert re.search(r"^kip107 \(required\): ", out, re.MULTILINE)
    assert not re.search(r"^kip534", out, re.MULTILINE)  # not run, not printed
    assert "gate failed: kip107" in out.splitlines()[-1]


def test_an_interrupted_run_leaves_no_complete_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "report.json").write_text('{"complete": true}')

    def crash(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("lethe_conformance.run.run_scenarios", crash)
    with pytest.raises(KeyboardInterrupt):
        _cli("--report", str(tmp_path))
    assert _report(tmp_path)["complete"] is False


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_unreachable_target_exits_2_with_one_line_and_no_complete_report(
    tmp_path: Path,
) -> None:
    (tmp_path / "report.html").write_text("stale")
    address = f"127.0.0.1:{_closed_port()}"
    status, out, err = _cli("--target", address, "--report", str(tmp_path))
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and address in err
    assert _report(tmp_path)["complete"] is False
    assert not (tmp_path / "report.html").exists()


def test_a_malformed_scenario_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "scenarios" / "broken.json"
    bad.parent.mkdir()
    bad.write_text('{"id": "broken",')
    status, out, err = _cli("--scenarios", str(bad.parent), "--report", str(tmp_path / "r"))
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and str(bad) in err
    assert _report(tmp_path / "r")["complete"] is False


def test_an_unknown_requirement_in_a_scenario_exits_2_naming_it(tmp_path: Path) -> None:
    data = json.loads(LIST_OFFSETS.read_text())
    data["requirements"].append("KIP107-LST-999")
    (tmp_path / LIST_OFFSETS.name).write_text(json.dumps(data))
    status, _, err = _cli("--scenarios", str(tmp_path))
    assert status == 2
    assert len(err.splitlines()) == 1 and "KIP107-LST-999" in err


def test_an_unknown_required_profile_is_a_usage_error() -> None:
    status, out, err = _cli("--require", "kip999")
    assert status == 2
    assert out == "" and "kip999" in err
