"""The conformance suite as a pytest plugin (entry point ``pytest11``: ``lethe``).

Theory of operation
-------------------
::

    pytest --pyargs lethe_conformance --lethe-target HOST:PORT --lethe-profile kip107
    pytest --pyargs lethe_conformance --lethe-embedded -n auto --junitxml=report.xml

The plugin is installed with lethe and loads in every pytest run, so it stays
inert unless the suite is asked for: ``--lethe-target`` or ``--lethe-embedded``
is given, or the command line names the suite itself (``--pyargs
lethe_conformance``, or a path inside the package). Otherwise the suite module
(``lethe_conformance/test_conformance_suite.py``) is not even collected, and
lethe's own test run sees nothing of it. Named without a target option, the
suite runs against the embedded reference broker, as ``lethe conformance
run`` does without ``--target``.

When active, every scenario of the selected profiles (all profiles when no
``--lethe-profile``) becomes one test item with the id
``<profile>/<scenario-id>``, marked with its profile (``kip107``), its
requirement IDs and their catalog tags (``-`` and ``.`` become ``_``:
``-m "kip107 and KIP107_API_1"``). The item runs the scenario and maps its
grade:

=================================  ==========================================
PASS                               passed
FAIL, ERROR                        failed; the message lists every mismatch
                                   (JSON path, expected, actual)
UNSUPPORTED, NOT_APPLICABLE,       skipped, the reason starting with the grade
INCONCLUSIVE                       (``NOT_APPLICABLE: target ... lacks log-dir``)
=================================  ==========================================

A baseline (``--lethe-baseline FILE``, format in ``baseline.py``) marks every
scenario it lists, and every scenario covering a requirement it lists, as
``xfail(strict=True)``: a FAIL excused by the baseline is xfailed, a pass is
XPASS(strict) and fails the run (remove the entry), and an ERROR, or a FAIL of
requirements the baseline does not list, fails as usual (the marker only
expects :class:`KnownFailureError`). Unlike the CLI's requirement verdicts, a
requirement entry is judged per scenario: each scenario covering it is
expected to fail.

xdist: each worker builds its own target in a session fixture; with
``--lethe-embedded`` that is a reference broker of its own, in a temporary log
dir (or ``<--lethe-log-dir>/<worker id>``). Scenarios name their topics with a
random run token (``scenarios/context.py``), so workers sharing one external
broker never collide. An unreachable ``--lethe-target`` is a usage error
before anything is collected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root

from lethe_conformance.baseline import Baseline, BaselineError
from lethe_conformance.client.errors import ClientError
from lethe_conformance.outcomes import Outcome, ScenarioResult
from lethe_conformance.report.text import suite_text
from lethe_conformance.run import lethe_version
from lethe_conformance.scenarios import Scenario, ScenarioError, load_scenarios
from lethe_conformance.scenarios.loader import scenario_files
from lethe_conformance.security import (
    ClientSecurityError,
    add_security_options,
    read_security_options,
    run_security,
)
from lethe_conformance.suite import SuiteError, load_suite
from lethe_conformance.targets.base import Target
from lethe_conformance.targets.bootstrap import BootstrapTarget, ControlHook

__all__ = ["ConformanceFailureError", "KnownFailureError", "check_result", "marker_name"]

SUITE_MODULE = "test_conformance_suite.py"
_SKIPPED = (Outcome.UNSUPPORTED, Outcome.NOT_APPLICABLE, Outcome.INCONCLUSIVE)
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]")


class ConformanceFailureError(AssertionError):
    """The target gave a wrong answer (FAIL) or the run broke (ERROR)."""


class KnownFailureError(ConformanceFailureError):
    """A FAIL the baseline lists: what an ``xfail(strict=True)`` item expects."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lethe", "lethe conformance suite (pytest --pyargs lethe_conformance)")
    group.addoption(
        "--lethe-target",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="broker or cluster under test (bootstrap.servers)",
    )
    group.addoption(
        "--lethe-embedded",
        action="store_true",
        help="start the reference broker in-process (one per xdist worker)",
    )
    group.addoption(
        "--lethe-profile",
        action="append",
        default=[],
        metavar="PROFILE",
        help="run this profile's scenarios (repeatable; default: all)",
    )
    group.addoption("--lethe-log-dir", metavar="DIR", help="the target's readable log dir")
    group.addoption("--lethe-control", metavar="CMD", help="control hook command (targets/)")
    group.addoption(
        "--lethe-control-actions",
        metavar="A[,A]",
        help="the actions the --lethe-control hook supports (restart, advance-time, "
        "trigger-cleaning; default all): scenarios needing another are not applicable",
    )
    add_security_options(group.addoption, "lethe-")
    group.addoption("--lethe-baseline", metavar="FILE", help="known failures (strict xfail)")


def _suite_named(config: pytest.Config) -> bool:
    """Whether a command-line argument is the suite: the package by name or a path in it."""
    package = Path(__file__).resolve().parent
    for arg in config.args:
        name = str(arg).split("::", 1)[0]
        if name == "lethe_conformance" or name.startswith("lethe_conformance."):
            return True
        path = Path(config.invocation_params.dir, name).resolve()
        if path == package or package in path.parents:
            return True
    return False


def _active(config: pytest.Config) -> bool:
    return bool(
        config.getoption("lethe_target")
        or config.getoption("lethe_embedded")
        or _suite_named(config)
    )


def pytest_configure(config: pytest.Config) -> None:
    if not _active(config):
        return
    if config.getoption("lethe_target") and config.getoption("lethe_embedded"):
        raise pytest.UsageError("give either --lethe-target or --lethe-embedded, not both")
    for name in sorted(_marker_names()):
        config.addinivalue_line("markers", f"{name}: lethe conformance profile/requirement/tag")
    config.stash[_BASELINE] = _load_baseline(config)
    if config.getoption("lethe_target") and not hasattr(config, "workerinput"):
        _probe(_bootstrap_target(config))


_BASELINE = pytest.StashKey[Baseline]()


def _load_baseline(config: pytest.Config) -> Baseline:
    path = config.getoption("lethe_baseline")
    if path is None:
        return Baseline()
    try:
        baseline = Baseline.load(path)
        # a misspelt entry never passes silently (a scenario's ID is its file's name)
        baseline.check_known(_requirement_tags(), (p.stem for p in scenario_files()))
    except BaselineError as error:
        raise pytest.UsageError(f"--lethe-baseline: {error}") from None
    return baseline


def _bootstrap_target(config: pytest.Config) -> BootstrapTarget:
    address = config.getoption("lethe_target")
    try:
        security = run_security(read_security_options(config.getoption, "lethe-"))
    except ClientSecurityError as error:
        raise pytest.UsageError(f"--lethe-target {address}: {error}") from None
    control = config.getoption("lethe_control")
    declared = config.getoption("lethe_control_actions")
    actions = (
        None
        if declared is None
        else frozenset(a.strip() for a in str(declared).split(",") if a.strip())
    )
    try:
        return BootstrapTarget(
            address,
            log_dir=config.getoption("lethe_log_dir"),
            sasl=security.sasl,
            user=security.user,
            tls=security.tls,
            control=None if control is None else ControlHook.parse(control, actions),
        )
    except ValueError as error:
        raise pytest.UsageError(f"--lethe-target {address}: {error}") from None


def _probe(target: BootstrapTarget) -> None:
    """Refuse to start against a target nobody answers at (one line, naming it)."""
    try:
        target.connect().close()
    except (ClientError, OSError) as error:
        message = " ".join(str(error).split())
        raise pytest.UsageError(
            f"--lethe-target {target.name}: cannot reach the target: {message}"
        ) from None


def pytest_report_header(config: pytest.Config) -> str | None:
    """What judges the run, as every report states it: lethe's and the suite's versions
    and the Kafka the expectations were verified on."""
    if not _active(config):
        return None
    try:
        suite = load_suite()
    except SuiteError as error:
        raise pytest.UsageError(str(error)) from None
    return f"lethe {lethe_version()}; suite: {suite_text(suite.as_json())}"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Keep the suite module out of every run that did not ask for it."""
    if collection_path.name == SUITE_MODULE and collection_path.parent == Path(__file__).parent:
        return None if _active(config) else True
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "lethe_scenario" not in metafunc.fixturenames:
        return
    config = metafunc.config
    try:
        scenarios = load_scenarios()
    except ScenarioError as error:
        raise pytest.UsageError(f"lethe scenarios: {error}") from None
    profiles = set(config.getoption("lethe_profile"))
    chosen = [s for s in scenarios if not profiles or s.profile in profiles]
    if profiles and not chosen:
        raise pytest.UsageError(f"--lethe-profile: no scenarios for {sorted(profiles)}")
    baseline = config.stash.get(_BASELINE, Baseline())
    params = [pytest.param(s, marks=_marks(s, baseline), id=f"{s.profile}/{s.id}") for s in chosen]
    metafunc.parametrize("lethe_scenario", params)


def _marks(scenario: Scenario, baseline: Baseline) -> list[pytest.MarkDecorator]:
    names = {scenario.profile, *scenario.requirements}
    tags = _requirement_tags()
    for requirement in scenario.requirements:
        names.update(tags.get(requirement, ()))
    marks = [getattr(pytest.mark, marker_name(name)) for name in sorted(names)]
    reasons = _baseline_reasons(scenario, baseline)
    if reasons:
        marks.append(
            pytest.mark.xfail(strict=True, raises=KnownFailureError, reason="; ".join(reasons))
        )
    return marks


def _baseline_reasons(scenario: Scenario, baseline: Baseline) -> list[str]:
    reasons = []
    own = baseline.reason("scenario", scenario.id)
    if own is not None:
        reasons.append(f"baseline: {own}")
    for requirement in scenario.requirements:
        listed = baseline.reason("requirement", requirement)
        if listed is not None:
            reasons.append(f"baseline {requirement}: {listed}")
    return reasons


def marker_name(name: str) -> str:
    """A profile, requirement ID or tag as a marker name: ``KIP107-API-1`` -> ``KIP107_API_1``."""
    return _NOT_NAME.sub("_", name)


@cache
def _catalog() -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
    """(requirement ID -> its tags, every profile) from fixtures/requirements/*.json."""
    tags: dict[str, tuple[str, ...]] = {}
    profiles: set[str] = set()
    for path in sorted((fixtures_root() / "requirements").glob("*.json")):
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("requirements"), list):
            continue
        if isinstance(data.get("profile"), str):
            profiles.add(data["profile"])
        for item in data["requirements"]:
            tags[item["id"]] = tuple(item.get("tags", ()))
    return tags, frozenset(profiles)


def _requirement_tags() -> dict[str, tuple[str, ...]]:
    return _catalog()[0]


def _marker_names() -> set[str]:
    names: set[str] = set()
    for requirement, tags in _requirement_tags().items():
        names.add(marker_name(requirement))
        names.update(marker_name(tag) for tag in tags)
    names.update(marker_name(profile) for profile in _catalog()[1])
    return names


@pytest.fixture(scope="session")
def lethe_target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The target of this process (one per xdist worker), closed at the end."""
    config = request.config
    if not _active(config):
        pytest.skip("give --lethe-target HOST:PORT or --lethe-embedded")
    target: Target
    if not config.getoption("lethe_target"):  # --lethe-embedded, or no target given
        target = _embedded(config, getattr(config, "workerinput", {}).get("workerid", "main"))
    else:
        target = _bootstrap_target(config)
    try:
        yield target
    finally:
        target.close()


def _embedded(config: pytest.Config, worker: str) -> Target:
    from lethe_conformance.targets.embedded import EmbeddedTarget  # noqa: PLC0415 (lazy)

    base = config.getoption("lethe_log_dir")
    log_dir = None
    if base is not None:
        log_dir = Path(base) / worker
        log_dir.mkdir(parents=True, exist_ok=True)
    return EmbeddedTarget(log_dir).start()


@pytest.fixture
def lethe_baseline(request: pytest.FixtureRequest) -> Baseline:
    return request.config.stash.get(_BASELINE, Baseline())


def check_result(result: ScenarioResult, baseline: Baseline) -> None:
    """Turn a graded result into pytest's vocabulary (see the module docstring)."""
    __tracebackhide__ = True
    if result.outcome is Outcome.PASS:
        return
    if result.outcome in _SKIPPED:
        pytest.skip(f"{result.outcome.name}: {result.detail}")
    message = _failure_message(result)
    if result.outcome is Outcome.FAIL and _excused(result, baseline):
        raise KnownFailureError(message)
    raise ConformanceFailureError(message)


def _excused(result: ScenarioResult, baseline: Baseline) -> bool:
    """A FAIL the baseline lists, failing as its evidence says (baseline.py)."""
    details = (result.detail,)
    if baseline.excuses("scenario", result.scenario_id, details):
        return True
    failing = [r for r, outcome in result.requirements.items() if outcome.fails_gate]
    return bool(failing) and all(baseline.excuses("requirement", r, details) for r in failing)


def _failure_message(result: ScenarioResult) -> str:
    lines = [f"{result.outcome.name}: {result.scenario_id} ({result.source})", result.detail]
    lines += [f"  {m.path}: expected {m.expected}, actual {m.actual}" for m in result.mismatches]
    failing = sorted(r for r, outcome in result.requirements.items() if outcome.fails_gate)
    if failing:
        lines.append(f"requirements not met: {', '.join(failing)}")
    return "\n".join(line for line in lines if line)
