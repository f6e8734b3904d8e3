"""One conformance run end to end: what ``lethe conformance run`` and the pytest plugin call.

Theory of operation
-------------------
::

    execute(RunOptions)
      suite     fixtures/suite.json               -> the versions every report states
      catalog   fixtures/requirements/*.json      -> Requirement per ID
      scenarios fixtures/scenarios (or --scenarios DIR), checked against the catalog
      baseline  --baseline FILE (optional); an entry naming no known requirement
                or scenario stops the run (a misspelt entry never passes silently)
      target    --target HOST:PORT -> BootstrapTarget, else EmbeddedTarget (started here)
      probe     the target's profiles and advertised API versions: an
                unreachable target stops the run here
      select    --profile P and --tag T (as requirement IDs) -> Selection
      run       run_scenarios -> list[ScenarioResult]
      gate      apply_baseline -> GateReport; a required profile fails when one of
                its scenarios or requirements has a verdict that fails the gate
    -> ConformanceRun (plain data; ``report/`` renders it)

Everything that makes a run meaningless before it starts (a malformed scenario,
an unknown requirement or profile, a broken baseline, a bad or unreachable
address) raises :class:`RunSetupError` with one line naming the file,
requirement or address: the CLI exits 2 and presents no report as complete.
Once scenarios run, nothing the target does raises: its answers become graded
outcomes (``scenarios/runner.py``).

Required profiles (the gate): ``--require`` if given, else every profile the
target offers (a broker advertising an extension must pass it), and with
``--profile X`` only X: what the run prints is what it gates. Extensions a
target does not offer are UNSUPPORTED and never fail the gate.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import ssl
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root

from lethe_conformance.baseline import Baseline, BaselineError, GateReport, apply_baseline
from lethe_conformance.client.connection import PlainCredentials
from lethe_conformance.client.errors import ClientError
from lethe_conformance.outcomes import ScenarioResult
from lethe_conformance.scenarios import (
    Scenario,
    ScenarioError,
    Selection,
    load_scenarios,
    run_scenarios,
)
from lethe_conformance.scenarios.loader import scenario_files
from lethe_conformance.suite import Suite, SuiteError, load_suite
from lethe_conformance.targets.base import Capabilities, ControlError, Target
from lethe_conformance.targets.bootstrap import BootstrapTarget, ControlHook

__all__ = [
    "ADOPTED_PROFILES",
    "ConformanceRun",
    "Requirement",
    "RunOptions",
    "RunSetupError",
    "execute",
    "lethe_version",
    "load_catalog",
    "now_utc",
]

ADOPTED_PROFILES = ("kip107", "kip534")


class RunSetupError(Exception):
    """The run cannot start (or be trusted): one line naming the file, requirement or target."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One catalog entry, as much of it as reports show."""

    id: str
    statement: str
    profile: str
    tags: tuple[str, ...]
    implemented_by_kafka: bool
    kafka_version: str | None
    kip_section: str = ""
    #: why no target can show it (catalog ``observable.how`` when ``by`` is
    #: ``not-observable``); None for a requirement a scenario can observe
    not_observable: str | None = None


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The CLI's options, as data (None / empty means the default)."""

    target: str | None = None
    log_dir: Path | None = None
    control: str | None = None
    #: the actions the control hook supports (None: all three; ``--control-actions``)
    control_actions: frozenset[str] | None = None
    #: ``--launch``: a shipped launcher's name or a launcher file (targets/launcher.py)
    launch: str | None = None
    #: ``--home`` / ``--kafka-home``: the launched broker's distribution folder
    home: Path | None = None
    #: ``--bin`` / ``--tansu-bin``: the launched broker's executable (a launcher's ``binary``)
    binary: Path | None = None
    #: ports launched brokers may take (inclusive); None: below the ephemeral range
    launch_ports: tuple[int, int] | None = None
    sasl: PlainCredentials | None = None
    #: a second principal (capability principals, with ``sasl`` as the admin)
    user: PlainCredentials | None = None
    #: TLS to the target (``--security-protocol SSL|SASL_SSL``, lethe_conformance.security)
    tls: ssl.SSLContext | None = None
    profiles: tuple[str, ...] = ()
    require: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    baseline: Path | None = None
    scenarios_dir: Path | None = None
    catalog_dir: Path | None = None


@dataclass(frozen=True, slots=True)
class ConformanceRun:
    """A finished run: everything a report needs, nothing rendered."""

    catalog: tuple[Requirement, ...]
    scenarios: tuple[Scenario, ...]
    results: tuple[ScenarioResult, ...]
    gate: GateReport
    target: str
    capabilities: Capabilities
    offered: frozenset[str]
    required: tuple[str, ...]
    selected: frozenset[str]
    started: str
    finished: str
    lethe_version: str
    complete: bool = True
    failed_profiles: tuple[str, ...] = field(default=())
    #: ``--profile``: the profiles the run was limited to (empty: all)
    profiles: tuple[str, ...] = ()
    #: the suite's versions (fixtures/suite.json), stated by every report
    suite: Suite | None = None
    #: API key -> (min, max) version the target advertised in ApiVersions
    api_versions: Mapping[int, tuple[int, int]] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 when no required profile failed, else 1."""
        return 1 if self.failed_profiles else 0


def load_catalog(root: Path | None = None) -> list[Requirement]:
    """Every requirement in ``root`` (default fixtures/requirements), sorted by profile then ID."""
    folder = root or fixtures_root() / "requirements"
    out: list[Requirement] = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise RunSetupError(f"{path}: cannot read the requirement catalog: {error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("requirements"), list):
            continue
        for index, item in enumerate(data["requirements"]):
            out.append(_requirement(item, f"{path}: requirements[{index}]"))
    if not out:
        raise RunSetupError(f"{folder}: no requirements found")
    return sorted(out, key=lambda r: (r.profile, _id_key(r.id)))


def _requirement(item: object, where: str) -> Requirement:
    if not isinstance(item, dict):
        raise RunSetupError(f"{where}: not an object")
    try:
        return Requirement(
            id=str(item["id"]),
            statement=str(item["statement"]),
            profile=str(item["profile"]),
            tags=tuple(str(t) for t in item.get("tags", ())),
            implemented_by_kafka=bool(item.get("implemented_by_kafka", False)),
            kafka_version=item.get("kafka_version"),
            kip_section=str(item.get("kip_section", "")),
            not_observable=_not_observable(item.get("observable")),
        )
    except KeyError as error:
        raise RunSetupError(f"{where}: missing {error}") from None


def _not_observable(observable: Any) -> str | None:
    """The catalog's reason a requirement cannot be observed on any target, else None."""
    if isinstance(observable, dict) and observable.get("by") == "not-observable":
        return str(observable.get("how", ""))
    return None


def _id_key(ident: str) -> tuple[str, int]:
    """KIP107-API-10 after KIP107-API-9."""
    stem, _, number = ident.rpartition("-")
    return (stem, int(number)) if number.isdigit() else (ident, 0)


def execute(options: RunOptions) -> ConformanceRun:
    """Run the suite as ``options`` say; RunSetupError when it cannot start."""
    try:
        suite = load_suite()
    except SuiteError as error:
        raise RunSetupError(str(error)) from None
    catalog = load_catalog(options.catalog_dir)
    profiles = sorted({r.profile for r in catalog})
    _check_names(options.profiles, profiles, "--profile")
    _check_names(options.require, profiles, "--require")
    scenarios = _load_scenarios(options, catalog)
    baseline = _load_baseline(options.baseline)
    if baseline is not None:
        try:
            baseline.check_known((r.id for r in catalog), (s.id for s in scenarios))
        except BaselineError as error:
            raise RunSetupError(f"baseline: {error}") from None
    selection, selected = _selection(options, catalog, scenarios)
    started = now_utc()
    target = _build_target(options)
    try:
        offered, api_versions = _probe(target)
        results = run_scenarios(target, scenarios, select=selection)
    finally:
        target.close()
    gate = apply_baseline(results, baseline)
    required = _required(options, profiles, offered)
    return ConformanceRun(
        catalog=tuple(catalog),
        scenarios=tuple(scenarios),
        results=tuple(results),
        gate=gate,
        target=target.name,
        capabilities=target.capabilities,
        offered=offered,
        required=tuple(required),
        selected=selected,
        started=started,
        finished=now_utc(),
        lethe_version=lethe_version(),
        failed_profiles=_failed_profiles(required, catalog, results, gate),
        profiles=tuple(options.profiles),
        suite=suite,
        api_versions=api_versions,
    )


def _required(
    options: RunOptions, known: Sequence[str], offered: frozenset[str]
) -> tuple[str, ...]:
    """``--require``, else every profile the target offers (a broker that advertises an
    extension must pass it), limited to ``--profile`` when given."""
    if options.require:
        return tuple(options.require)
    shown = set(options.profiles) if options.profiles else set(known)
    return tuple(p for p in known if p in offered and p in shown)


def _check_names(given: Sequence[str], known: Sequence[str], option: str) -> None:
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise RunSetupError(f"{option}: unknown profile {unknown[0]!r} (known: {', '.join(known)})")


def _load_scenarios(options: RunOptions, catalog: Sequence[Requirement]) -> list[Scenario]:
    root = options.scenarios_dir
    if root is not None and not root.is_dir():
        raise RunSetupError(f"--scenarios: {root} is not a directory")
    try:
        return load_scenarios(
            None if root is None else scenario_files(root),
            known_requirements=frozenset(r.id for r in catalog),
        )
    except ScenarioError as error:
        raise RunSetupError(f"malformed scenario: {error}") from None


def _load_baseline(path: Path | None) -> Baseline | None:
    if path is None:
        return None
    try:
        return Baseline.load(path)
    except BaselineError as error:
        raise RunSetupError(f"baseline: {error}") from None


def _selection(
    options: RunOptions, catalog: Sequence[Requirement], scenarios: Sequence[Scenario]
) -> tuple[Selection, frozenset[str]]:
    """The runner's Selection, and the requirement IDs the run covers."""
    requirements: frozenset[str] | None = None
    if options.tags:
        wanted = set(options.tags)
        requirements = frozenset(r.id for r in catalog if wanted & set(r.tags))
        if not requirements:
            raise RunSetupError(f"--tag: no requirement has tag(s) {sorted(wanted)}")
    selection = Selection(
        profiles=frozenset(options.profiles) if options.profiles else None,
        requirements=requirements,
    )
    covered = {rid for s in scenarios if selection.matches(s) for rid in s.requirements}
    return selection, frozenset(covered)


def _build_target(options: RunOptions) -> Target:
    if options.launch is not None:
        return _launch(options)
    if options.binary is not None:
        raise RunSetupError("--bin names the executable of a --launch broker")
    if options.target is None:
        if options.control or options.sasl or options.user or options.tls or options.log_dir:
            raise RunSetupError("--log-dir, --control, SASL and TLS need --target")
        # Imported here: a run against a bootstrap target never loads the reference broker.
        from lethe_conformance.targets.embedded import EmbeddedTarget  # noqa: PLC0415

        try:
            return EmbeddedTarget().start()
        except OSError as error:
            raise RunSetupError(f"cannot start the embedded reference broker: {error}") from None
    try:
        hook = (
            None
            if options.control is None
            else ControlHook.parse(options.control, options.control_actions)
        )
        return BootstrapTarget(
            options.target,
            log_dir=options.log_dir,
            sasl=options.sasl,
            user=options.user,
            tls=options.tls,
            control=hook,
        )
    except ValueError as error:
        raise RunSetupError(str(error)) from None


def _launch(options: RunOptions) -> Target:
    """Start the broker from its launcher (``--launch``); one line when it cannot start."""
    given = (options.target, options.control, options.sasl, options.user, options.tls)
    if any(given) or options.log_dir:
        raise RunSetupError(
            "--launch starts its own broker: no --target, --control, SASL, TLS, --log-dir"
        )
    assert options.launch is not None
    from lethe_conformance.targets.launched import LaunchedTarget  # noqa: PLC0415
    from lethe_conformance.targets.launcher import LauncherError, load_launcher  # noqa: PLC0415
    from lethe_conformance.targets.processes import DEFAULT_PORT_RANGE  # noqa: PLC0415

    try:
        spec = load_launcher(options.launch)
        if options.binary is not None and spec.binary is None:
            raise LauncherError(f"launcher {spec.name} runs no single binary: no --bin")
        home = options.home
        if home is None and spec.home_env and os.environ.get(spec.home_env):
            home = Path(os.environ[spec.home_env])
        target = LaunchedTarget(
            spec,
            home=home,
            port_range=options.launch_ports or DEFAULT_PORT_RANGE,
            binary=options.binary,
        )
        return target.start()
    except (LauncherError, ControlError, OSError) as error:
        raise RunSetupError(f"--launch {options.launch}: {error}") from None


def _probe(target: Target) -> tuple[frozenset[str], dict[int, tuple[int, int]]]:
    """The profiles the target offers and the API versions it advertises."""
    try:
        offered = target.profiles()
        with target.connect() as conn:
            return offered, dict(conn.versions)
    except ClientError as error:
        raise RunSetupError(f"target {target.name} unreachable or not Kafka: {error}") from None


def _failed_profiles(
    required: Iterable[str],
    catalog: Sequence[Requirement],
    results: Sequence[ScenarioResult],
    gate: GateReport,
) -> tuple[str, ...]:
    profile_of = {r.id: r.profile for r in catalog}
    profile_of_scenario = {r.scenario_id: r.profile for r in results}
    failing: set[str] = set()
    for item in gate.items:
        if not item.verdict.fails_gate:
            continue
        table = profile_of if item.kind == "requirement" else profile_of_scenario
        failing.add(table.get(item.ident, ""))
    return tuple(p for p in required if p in failing)


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def lethe_version() -> str:
    try:
        return importlib.metadata.version("lethe")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
