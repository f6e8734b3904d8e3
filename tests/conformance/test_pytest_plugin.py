"""The pytest plugin: one item per scenario, grades mapped to pytest outcomes, xdist-safe.

Expected values come from the scenario files (their ids and ``requires``) and
from the grading rules of issue 4, not from a recorded run.
"""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.baseline import Baseline
from lethe_conformance.outcomes import Mismatch, Outcome, ScenarioResult, StepResult
from lethe_conformance.plugin import (
    ConformanceFailureError,
    KnownFailureError,
    check_result,
    marker_name,
)
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_formats.fixtures import fixtures_root

pytest_plugins = ["pytester"]

KIP107 = fixtures_root() / "scenarios" / "kip107"


def _scenario_files() -> dict[str, dict[str, object]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(KIP107.glob("*.json"))}


SCENARIOS = _scenario_files()
#: every profile's scenarios: what a run without --lethe-profile collects
ALL_SCENARIO_COUNT = len(list((fixtures_root() / "scenarios").glob("*/*.json")))
SUITE = ("--pyargs", "lethe_conformance", "-p", "no:cacheprovider")


def _testcases(xml: Path) -> dict[str, ET.Element]:
    return {case.attrib["name"]: case for case in ET.parse(xml).getroot().iter("testcase")}


def _item(scenario_id: str) -> str:
    return f"test_scenario[kip107/{scenario_id}]"


@pytest.fixture(scope="module")
def shared_broker() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


@pytest.mark.slow
def test_every_kip107_scenario_passes_on_the_embedded_broker_and_junit_names_them(
    pytester: pytest.Pytester,
) -> None:
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        *SUITE, "--lethe-embedded", "--lethe-profile", "kip107", f"--junitxml={xml}"
    )
    result.assert_outcomes(passed=len(SCENARIOS))
    cases = _testcases(xml)
    assert set(cases) == {_item(s) for s in SCENARIOS}
    assert all(len(case) == 0 for case in cases.values())  # no failure/skipped child


@pytest.mark.slow
def test_two_xdist_workers_run_every_scenario_once_each_with_its_own_log_dir(
    pytester: pytest.Pytester,
) -> None:
    logs = pytester.path / "logs"
    result = pytester.runpytest_subprocess(
        *SUITE,
        "--lethe-embedded",
        "--lethe-profile",
        "kip107",
        "-n",
        "2",
        f"--lethe-log-dir={logs}",
    )
    result.assert_outcomes(passed=len(SCENARIOS))
    result.stdout.fnmatch_lines(["*2 workers*"])
    assert sorted(p.name for p in logs.iterdir()) == ["gw0", "gw1"]


@pytest.mark.slow
def test_a_baselined_scenario_that_passes_is_a_strict_xpass_failure(
    pytester: pytest.Pytester,
) -> None:
    baseline = pytester.path / "baseline.json"
    entry = {"scenario": "kip107-golden-delete-records", "reason": "thought broken"}
    baseline.write_text(json.dumps({"known_failures": [entry]}))
    result = pytester.runpytest_subprocess(
        *SUITE, "--lethe-embedded", "--lethe-profile", "kip107", f"--lethe-baseline={baseline}"
    )
    result.assert_outcomes(passed=len(SCENARIOS) - 1, failed=1)
    result.stdout.fnmatch_lines(["*XPASS(strict)*thought broken*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
def test_a_target_without_log_dir_skips_log_dir_scenarios_as_not_applicable(
    pytester: pytest.Pytester, shared_broker: EmbeddedTarget
) -> None:
    # Only these: the others would wait on the wall clock, which this broker never moves.
    needs_log_dir = [s for s, data in SCENARIOS.items() if "log-dir" in data["requires"]]  # type: ignore[operator]
    assert needs_log_dir
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        *SUITE,
        "--lethe-target",
        shared_broker.bootstrap,
        f"--junitxml={xml}",
        "-k",
        " or ".join(needs_log_dir),
    )
    cases = _testcases(xml)
    for scenario_id in needs_log_dir:
        skipped = cases[_item(scenario_id)].find("skipped")
        assert skipped is not None, scenario_id
        assert skipped.attrib["message"].startswith("NOT_APPLICABLE: ")
        assert "log-dir" in skipped.attrib["message"]
    result.assert_outcomes(skipped=len(needs_log_dir))


def test_an_unreachable_target_is_a_one_line_usage_error(pytester: pytest.Pytester) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    result = pytester.runpytest_subprocess(*SUITE, "--lethe-target", address)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines if address in line]
    assert len(lines) == 1
    assert lines[0].startswith("ERROR: --lethe-target")


def test_a_malformed_target_address_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*SUITE, "--lethe-target", "no-port-here")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --lethe-target no-port-here*"])


def test_without_a_target_option_the_named_suite_runs_on_the_embedded_broker(
    pytester: pytest.Pytester,
) -> None:
    # as `lethe conformance run` without --target
    result = pytester.runpytest_subprocess(*SUITE, "-k", "kip107-golden-delete-records", "-v")
    result.assert_outcomes(passed=1)
    assert f"{_item('kip107-golden-delete-records')} PASSED" in result.stdout.str()


def test_a_run_that_does_not_name_the_suite_collects_nothing_of_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


def test_items_carry_profile_requirement_and_tag_markers(pytester: pytest.Pytester) -> None:
    golden = SCENARIOS["kip107-golden-delete-records"]
    requirement = golden["requirements"][0]  # type: ignore[index]
    expression = f"kip107 and {marker_name(requirement)}"
    result = pytester.runpytest_subprocess(
        *SUITE, "--lethe-embedded", "--collect-only", "-q", "-m", expression
    )
    covering = [s for s, d in SCENARIOS.items() if requirement in d["requirements"]]  # type: ignore[operator]
    result.stdout.fnmatch_lines([f"*{_item(s)}*" for s in covering])
    assert f"{len(covering)}/{ALL_SCENARIO_COUNT} tests collected" in result.stdout.str()


def _result(outcome: Outcome, requirements: dict[str, Outcome]) -> ScenarioResult:
    mismatch = Mismatch("$.steps[2].expect.low_watermark", '"5"', '"3"')
    step = StepResult(2, "list_offsets", outcome, "wrong", (mismatch,))
    return ScenarioResult(
        "s-1", "s-1.json", "kip107", outcome, "steps[2]: wrong", requirements, (step,)
    )


def test_a_fail_message_names_json_path_expected_and_actual() -> None:
    with pytest.raises(ConformanceFailureError) as caught:
        check_result(_result(Outcome.FAIL, {"R-1": Outcome.FAIL}), Baseline())
    assert type(caught.value) is ConformanceFailureError
    message = str(caught.value)
    assert message.startswith("FAIL: s-1")
    assert '$.steps[2].expect.low_watermark: expected "5", actual "3"' in message


def test_a_fail_of_baselined_requirements_only_is_a_known_failure() -> None:
    baseline = Baseline.from_json({"known_failures": [{"requirement": "R-1", "reason": "x"}]})
    with pytest.raises(KnownFailureError):
        check_result(_result(Outcome.FAIL, {"R-1": Outcome.FAIL, "R-2": Outcome.PASS}), baseline)
    with pytest.raises(ConformanceFailureError) as caught:
        check_result(_result(Outcome.FAIL, {"R-1": Outcome.FAIL, "R-2": Outcome.FAIL}), baseline)
    assert type(caught.value) is ConformanceFailureError


def test_an_error_is_never_excused_by_the_baseline() -> None:
    baseline = Baseline.from_json({"known_failures": [{"scenario": "s-1", "reason": "x"}]})
    with pytest.raises(ConformanceFailureError) as caught:
        check_result(_result(Outcome.ERROR, {"R-1": Outcome.ERROR}), baseline)
    assert type(caught.value) is ConformanceFailureError


@pytest.mark.parametrize(
    "outcome", [Outcome.UNSUPPORTED, Outcome.NOT_APPLICABLE, Outcome.INCONCLUSIVE]
)
def test_ungraded_outcomes_skip_with_the_grade_first(outcome: Outcome) -> None:
    with pytest.raises(pytest.skip.Exception, match=rf"^{outcome.name}: steps\[2\]: wrong$"):
        check_result(_result(outcome, {"R-1": outcome}), Baseline())


def test_a_baselined_fail_with_other_evidence_is_not_excused() -> None:
    entry = {"scenario": "s-1", "reason": "x", "evidence": "steps[2]: wrong"}
    with pytest.raises(KnownFailureError):
        check_result(
            _result(Outcome.FAIL, {"R-1": Outcome.FAIL}),
            Baseline.from_json({"known_failures": [entry]}),
        )
    moved = Baseline.from_json({"known_failures": [entry | {"evidence": "steps[3]: wrong"}]})
    with pytest.raises(ConformanceFailureError) as caught:
        check_result(_result(Outcome.FAIL, {"R-1": Outcome.FAIL}), moved)
    assert type(caught.value) is ConformanceFailureError


def test_a_misspelt_baseline_entry_is_a_usage_error(pytester: pytest.Pytester) -> None:
    baseline = pytester.path / "baseline.json"
    entry = {"scenario": "kip107-golden-delete-record", "reason": "misspelt"}
    baseline.write_text(json.dumps({"known_failures": [entry]}))
    result = pytester.runpytest_subprocess(
        *SUITE, "--lethe-embedded", "--lethe-profile", "kip107", f"--lethe-baseline={baseline}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no scenario 'kip107-golden-delete-record'*misspelt?*"])


def test_the_header_states_lethe_the_suite_and_the_kafka_it_was_verified_on(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest_subprocess(
        *SUITE, "--lethe-embedded", "--lethe-profile", "kip87", "--collect-only"
    )
    result.stdout.fnmatch_lines(
        [
            "lethe *; suite: catalog 1.0.0, scenarios 1.0.0, "
            "expectations verified on Apache Kafka 4.0.0*"
        ]
    )
