"""Format conformance: lethe passes every case, and the runner catches every kind of failure."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.formats.__main__ import main as run_main
from lethe_conformance.formats.adapters import (
    AdapterResult,
    Decoded,
    Rejected,
    SubprocessAdapter,
)
from lethe_conformance.formats.authoring import author, check
from lethe_conformance.formats.cases import (
    KINDS,
    Case,
    CaseFileError,
    default_cases_dir,
    load_cases,
)
from lethe_conformance.formats.lethe_adapter import LetheAdapter
from lethe_conformance.formats.runner import (
    BaselineError,
    Status,
    grade,
    parse_baseline,
    run,
)
from lethe_conformance.formats.tagged import compare
from lethe_conformance.formats_adapter import main as adapter_main

ROOT = Path(__file__).resolve().parents[2]
CASES = load_cases()
BY_ID = {case.id: case for case in CASES}
LETHE_PROCESS = [sys.executable, "-m", "lethe_conformance.formats_adapter"]


class Canned:
    """An in-process adapter that gives the same answer to every request."""

    def __init__(self, answer: AdapterResult) -> None:
        self.answer = answer
        self.name = f"canned {answer}"

    def decode(self, request: Mapping[str, Any]) -> AdapterResult:
        return self.answer


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "adapter.py"
    path.write_text("import sys, json, time\nrequest = json.load(sys.stdin)\n" + body)
    return [sys.executable, str(path)]


# --- lethe passes ----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_lethe_in_process_passes_case(case: Case) -> None:
    status, detail = grade(case, LetheAdapter().decode(case.request()))
    assert status is Status.PASS, detail


@pytest.mark.slow
def test_lethe_format_adapter_process_passes_every_case() -> None:
    report = run(CASES, SubprocessAdapter(LETHE_PROCESS, timeout=60), jobs=2)
    assert report.ok, report.render()
    assert report.counts()[Status.PASS] == len(CASES)


def test_adapter_command_speaks_the_contract() -> None:
    request = json.dumps(BY_ID["checkpoint/invalid/unknown-version"].request())
    done = subprocess.run(LETHE_PROCESS, input=request.encode(), capture_output=True, check=False)
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"] == "unknown-version"
    out = StringIO()
    assert adapter_main(StringIO(json.dumps(BY_ID["txn-index/valid/empty"].request())), out) == 0
    assert json.loads(out.getvalue()) == {"entries": []}


@pytest.mark.parametrize(
    "stdin",
    [
        "not json",
        "[]",
        '{"kind": "nope"}',
        '{"kind": "record-batch", "input": {"text": "x"}}',
        '{"kind": "record-batch", "input": {"hex": "zz"}}',
        '{"kind": "record", "input": {"hex": ""}}',
    ],
)
def test_adapter_command_refuses_a_bad_request_with_exit_2(stdin: str) -> None:
    assert adapter_main(StringIO(stdin), StringIO()) == 2


def test_console_script_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["lethe-format-adapter"] == "lethe_conformance.formats_adapter:main"


# --- the suite can fail ----------------------------------------------------------------


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict) and set(value) in ({"hex"}, {"utf8"}):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


def _mutated(value: Any, path: tuple[Any, ...]) -> Any:
    copy = json.loads(json.dumps(value))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    old = parent[path[-1]]
    if isinstance(old, bool) or old is None:
        parent[path[-1]] = {"hex": "00"} if old is None else not old
    elif isinstance(old, int):
        parent[path[-1]] = old + 1
    elif isinstance(old, str):
        parent[path[-1]] = str(int(old) + 1) if re.fullmatch(r"-?\d+", old) else old + "x"
    else:
        parent[path[-1]] = {"hex": tag_hex(old) + "00"}
    return copy


def tag_hex(tag: dict[str, str]) -> str:
    return tag["hex"] if "hex" in tag else tag["utf8"].encode().hex()


FIRST_VALID = [next(c for c in CASES if c.kind == kind and c.valid) for kind in KINDS]


@pytest.mark.parametrize("case", FIRST_VALID, ids=[c.id for c in FIRST_VALID])
def test_changing_any_expected_value_makes_the_case_fail(case: Case) -> None:
    leaves = [p for p in _leaves(case.expected) if p]
    for path in leaves:
        wrong = dataclasses.replace(case, expected=_mutated(case.expected, path))
        report = run([wrong], LetheAdapter())
        assert not report.ok and report.results[0].status is Status.FAIL, path
        assert "wrong value" in report.results[0].detail


def test_an_implementation_that_accepts_everything_fails_every_invalid_case() -> None:
    report = run(CASES, Canned(Decoded({})))
    for result in report.results:
        assert result.status is Status.FAIL
        if not result.case.valid:
            assert result.detail.startswith("accepted an invalid input")


def test_an_implementation_that_rejects_everything_fails_every_valid_case() -> None:
    report = run(CASES, Canned(Rejected("truncated")))
    for result in report.results:
        wanted = not result.case.valid and result.case.error == "truncated"
        assert (result.status is Status.PASS) == wanted, result.case.id
        if result.case.valid:
            assert result.detail.startswith("rejected a valid input")


def test_wrong_error_id_fails_unless_any_error_is_asked_for() -> None:
    case = BY_ID["record-batch/invalid/crc-mismatch"]
    assert grade(case, Rejected("truncated"))[0] is Status.FAIL
    assert grade(case, Rejected("truncated"), any_error=True)[0] is Status.PASS


def test_position_and_line_are_compared_when_both_sides_give_them() -> None:
    binary = BY_ID["record-batch/invalid/crc-mismatch"]
    assert grade(binary, Rejected("crc-mismatch", position=17))[0] is Status.PASS
    assert grade(binary, Rejected("crc-mismatch", position=21))[0] is Status.FAIL
    assert grade(binary, Rejected("crc-mismatch"))[0] is Status.PASS
    text = BY_ID["checkpoint/invalid/unknown-version"]
    assert grade(text, Rejected("unknown-version", line=2))[0] is Status.FAIL


# --- subprocess contract ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("sys.exit(3)", "exit code 3"),
        ("print('not json')", "not one JSON document"),
        ("print('oops'); sys.exit(1)", "stdout is not JSON"),
        ("print(json.dumps({'message': 'x'})); sys.exit(1)", 'is not {"error"'),
        ("print(json.dumps({'error': 'truncated', 'position': 'x'})); sys.exit(1)", "non-integer"),
        ("time.sleep(30)", "no answer within"),
        ("raise RuntimeError('boom')", "RuntimeError"),
    ],
)
def test_contract_violations_are_implementation_errors(
    tmp_path: Path, body: str, reason: str
) -> None:
    adapter = SubprocessAdapter(_script(tmp_path, body), timeout=2)
    report = run([BY_ID["txn-index/valid/empty"]], adapter)
    assert report.results[0].status is Status.ERROR
    assert reason in report.results[0].detail
    assert not report.ok


def test_an_adapter_that_cannot_start_is_an_implementation_error(tmp_path: Path) -> None:
    report = run(CASES[:1], SubprocessAdapter([str(tmp_path / "missing")]))
    assert report.results[0].status is Status.ERROR
    assert "could not start" in report.results[0].detail


def test_a_contract_following_script_passes(tmp_path: Path) -> None:
    body = (
        "if request['input']['hex']: print(json.dumps({'error': 'unknown-version'})); sys.exit(1)\n"
        "print(json.dumps({'entries': []}))\n"
    )
    cases = [BY_ID["txn-index/valid/empty"], BY_ID["txn-index/invalid/unknown-version"]]
    report = run(cases, SubprocessAdapter(_script(tmp_path, body)), jobs=2)
    assert report.ok, report.render()


# --- baseline --------------------------------------------------------------------------


def test_baseline_turns_a_known_failure_into_xfail_and_a_fixed_one_into_failure() -> None:
    failing = BY_ID["txn-index/invalid/unknown-version"]
    passing = BY_ID["txn-index/valid/empty"]
    baseline = {failing.id: "bug 1", passing.id: "bug 2"}
    report = run([failing, passing], Canned(Decoded({"entries": []})), baseline=baseline)
    statuses = [r.status for r in report.results]
    assert statuses == [Status.XFAIL, Status.XPASS]
    assert not report.ok
    only_known = run([failing], Canned(Decoded({"entries": []})), baseline={failing.id: ""})
    assert only_known.ok and "1 known failures" in only_known.summary()


def test_baseline_naming_a_missing_case_is_refused() -> None:
    with pytest.raises(BaselineError, match="txn-index/valid/nope"):
        run(CASES, LetheAdapter(), baseline={"txn-index/valid/nope": ""})


@pytest.mark.parametrize("text", ["two words/a/b", "x/y", "a/b/c\na/b/c"])
def test_malformed_baseline_lines_are_refused(text: str) -> None:
    with pytest.raises(BaselineError):
        parse_baseline(text)


def test_baseline_comments_and_reasons_are_read() -> None:
    text = "# known\nrecord/invalid/truncated  # issue 12\n\n"
    assert parse_baseline(text) == {"record/invalid/truncated": "issue 12"}


# --- the command -----------------------------------------------------------------------


def test_command_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(["--lethe", "--kind", "checkpoint"]) == 0
    assert capsys.readouterr().out.startswith("OK: 34 cases")
    reject = _script(tmp_path, "print(json.dumps({'error': 'truncated'})); sys.exit(1)\n")
    assert run_main(["--adapter", " ".join(reject), "--kind", "txn-index"]) == 1
    assert "FAIL  txn-index/valid/empty" in capsys.readouterr().out
    assert run_main(["--lethe", "--cases", str(tmp_path / "none")]) == 2
    assert run_main(["--lethe", "--jobs", "0"]) == 2


# --- the cases themselves --------------------------------------------------------------


def _copy_suite(tmp_path: Path) -> Path:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_cases_dir(), fixtures / "formats")
    shutil.copytree(default_cases_dir().parent / "schema", fixtures / "schema")
    (fixtures / "golden").symlink_to(default_cases_dir().parent / "golden")
    return fixtures / "formats"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: "{", "unreadable"),
        (lambda c: json.dumps(c | {"kind": "nope"}), "case schema"),
        (lambda c: json.dumps(c | {"valid": False}), "case schema"),
        (lambda c: json.dumps(c | {"kind": "record"}), "case schema"),
        (lambda c: json.dumps(c | {"input": c["input"] | {"sha256": "0" * 64}}), "sha256"),
        (lambda c: json.dumps(c | {"input": c["input"] | {"length": 10**6}}), "past the end"),
        (lambda c: json.dumps(c | {"input": c["input"] | {"file": "golden/../x"}}), "leaves"),
    ],
)
def test_a_broken_case_file_is_reported_by_name(tmp_path: Path, change: Any, message: str) -> None:
    cases_dir = _copy_suite(tmp_path)
    target = cases_dir / "record-batch/valid/codec-gzip.json"
    target.write_text(change(json.loads(target.read_text())))
    with pytest.raises(CaseFileError, match=message) as caught:
        load_cases(cases_dir)
    assert caught.value.path == target


def test_a_case_in_the_wrong_folder_is_reported(tmp_path: Path) -> None:
    cases_dir = _copy_suite(tmp_path)
    source = cases_dir / "record/valid/plain.json"
    (cases_dir / "record/invalid/plain.json").write_text(source.read_text())
    with pytest.raises(CaseFileError, match="belongs in record/valid/"):
        load_cases(cases_dir)


def test_suite_shape() -> None:
    descriptions = [case.description for case in CASES]
    assert len(set(descriptions)) == len(descriptions)
    for kind in KINDS:
        assert {c.valid for c in CASES if c.kind == kind} == {True, False}, kind
    for case in CASES:
        if not case.valid:
            name = case.id.rsplit("/", 1)[1]
            assert name == case.error or name.startswith(f"{case.error}-"), case.id
            origin = json.loads(case.path.read_text())["mutation"]["from"]
            assert origin.startswith(f"{case.kind}/valid/") and origin in BY_ID, case.id


def test_readme_documents_exactly_the_error_ids_in_use() -> None:
    readme = (default_cases_dir() / "README.md").read_text()
    table = readme.split("## Error ids", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.MULTILINE))
    assert documented == {case.error for case in CASES if not case.valid}


def test_expected_values_compare_equal_to_themselves_and_tags_are_interchangeable() -> None:
    for case in CASES:
        assert compare(case.expected, json.loads(json.dumps(case.expected))) == []
    assert compare({"utf8": "ab"}, {"hex": "6162"}) == []
    assert compare("5", 5) and compare(1, True) and compare(1.0, 1.0)
    assert compare({"a": 1}, {"a": 1, "b": 2}) == ["$.b: unexpected member"]


def test_authoring_reproduces_every_committed_case() -> None:
    fixtures = default_cases_dir().parent
    assert check(fixtures, author(fixtures)) == []


def test_runner_core_and_authoring_do_not_import_lethe_formats() -> None:
    modules = ["cases", "tagged", "adapters", "runner", "__main__", "authoring"]
    code = (
        "import importlib, sys\n"
        + "".join(f"importlib.import_module('lethe_conformance.formats.{m}')\n" for m in modules)
        + "bad = sorted(m for m in sys.modules if m.startswith('lethe_formats'))\n"
        + "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
