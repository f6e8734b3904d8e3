"""Baselines: known failures are strict expected failures, so a fixed one fails the gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lethe_conformance.baseline import (
    Baseline,
    BaselineEntry,
    BaselineError,
    Verdict,
    apply_baseline,
)
from lethe_conformance.outcomes import Outcome, ScenarioResult


def result(ident: str, outcome: Outcome, *requirements: str) -> ScenarioResult:
    return ScenarioResult(
        ident, f"{ident}.json", "kip107", outcome, "", dict.fromkeys(requirements, outcome)
    )


def verdicts(results: list[ScenarioResult], baseline: Baseline | None = None) -> dict[str, Verdict]:
    report = apply_baseline(results, baseline)
    return {item.ident: item.verdict for item in report.items}


def test_without_a_baseline_a_failure_fails_the_gate_and_the_rest_do_not() -> None:
    results = [
        result("s-fail", Outcome.FAIL, "R-1"),
        result("s-na", Outcome.NOT_APPLICABLE, "R-2"),
        result("s-uns", Outcome.UNSUPPORTED, "R-3"),
        result("s-inc", Outcome.INCONCLUSIVE, "R-4"),
        result("s-pass", Outcome.PASS, "R-5"),
    ]
    report = apply_baseline(results)
    assert not report.passed
    assert [i.ident for i in report.with_verdict(Verdict.FAILED)] == ["s-fail", "R-1"]
    assert apply_baseline(results[1:]).passed


def test_a_baselined_failure_is_expected_and_keeps_its_reason() -> None:
    baseline = Baseline((BaselineEntry("not yet", requirement="R-1"),))
    report = apply_baseline([result("s", Outcome.FAIL, "R-1")], baseline)
    items = {i.ident: i for i in report.items}
    assert items["R-1"].verdict is Verdict.EXPECTED_FAILURE
    assert items["R-1"].reason == "not yet"
    assert items["s"].verdict is Verdict.FAILED  # the scenario itself is not baselined


def test_a_baselined_scenario_excuses_the_requirements_failing_only_there() -> None:
    baseline = Baseline((BaselineEntry("known", scenario="s-bad"),))
    results = [
        result("s-bad", Outcome.FAIL, "R-1", "R-2"),
        result("s-other", Outcome.FAIL, "R-2"),
    ]
    assert verdicts(results, baseline) == {
        "s-bad": Verdict.EXPECTED_FAILURE,
        "s-other": Verdict.FAILED,
        "R-1": Verdict.EXPECTED_FAILURE,
        "R-2": Verdict.FAILED,
    }


def test_a_baselined_entry_that_passes_is_reported_fixed_and_fails_the_gate() -> None:
    baseline = Baseline((BaselineEntry("timeouts missing", requirement="R-1"),))
    report = apply_baseline([result("s", Outcome.PASS, "R-1")], baseline)
    fixed = report.with_verdict(Verdict.FIXED)
    assert [i.ident for i in fixed] == ["R-1"]
    assert "remove it from the baseline" in fixed[0].reason
    assert not report.passed


def test_an_error_is_never_excused_by_a_baseline() -> None:
    baseline = Baseline(
        (BaselineEntry("flaky", scenario="s"), BaselineEntry("flaky", requirement="R-1"))
    )
    report = apply_baseline([result("s", Outcome.ERROR, "R-1")], baseline)
    assert {i.verdict for i in report.items} == {Verdict.FAILED}


def test_other_outcomes_of_baselined_entries_neither_fail_nor_count_as_fixed() -> None:
    baseline = Baseline((BaselineEntry("needs acls", requirement="R-1"),))
    report = apply_baseline([result("s", Outcome.NOT_APPLICABLE, "R-1")], baseline)
    assert report.passed
    assert verdicts([result("s", Outcome.NOT_APPLICABLE, "R-1")], baseline)["R-1"] is Verdict.OK


def test_entries_matching_nothing_that_ran_are_listed_as_unmatched() -> None:
    baseline = Baseline((BaselineEntry("gone", requirement="R-9"),))
    report = apply_baseline([result("s", Outcome.PASS, "R-1")], baseline)
    assert report.unmatched == baseline.entries
    assert report.passed


def test_a_baseline_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(
        json.dumps(
            {
                "target": "my broker",
                "known_failures": [
                    {"requirement": "KIP107-PUR-3", "reason": "no purgatory"},
                    {"scenario": "kip107-time-and-size-retention", "reason": "bytes ignored"},
                ],
            }
        )
    )
    baseline = Baseline.load(path)
    assert baseline.target == "my broker"
    assert baseline.reason("requirement", "KIP107-PUR-3") == "no purgatory"
    assert baseline.reason("scenario", "kip107-time-and-size-retention") == "bytes ignored"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "line 1 column 2"),
        ('{"known": []}', "a 'known_failures' list"),
        ('{"known_failures": [], "extra": 1}', r"unknown keys \['extra'\]"),
        (
            '{"known_failures": [{"requirement": "R-1"}]}',
            r"known_failures\[0\]: a known failure needs",
        ),
        ('{"known_failures": [{"requirement": "R-1", "reason": " "}]}', "non-empty 'reason'"),
        (
            '{"known_failures": [{"requirement": "R", "scenario": "s", "reason": "x"}]}',
            "exactly one of 'requirement' and 'scenario'",
        ),
        (
            '{"known_failures": [{"requirement": "R", "reason": "x"},'
            ' {"requirement": "R", "reason": "y"}]}',
            r"listed twice: \[\('requirement', 'R'\)\]",
        ),
    ],
    ids=["bad-json", "no-list", "extra-key", "no-reason", "blank-reason", "both-ids", "duplicate"],
)
def test_a_bad_baseline_file_is_refused_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(BaselineError, match=message) as caught:
        Baseline.load(path)
    assert str(caught.value).startswith(str(path))
