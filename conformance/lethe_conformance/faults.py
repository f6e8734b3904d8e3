"""Fault runs: the suite against deliberately wrong reference brokers, to measure its power.

Theory of operation
-------------------
The reference broker knows named faults (``lethe_reference/faults.py``, listed
in ``conformance/FAULTS.md``): plausible implementer mistakes, each naming the
catalog requirements it breaks. A suite that passes a broker making one of
them has a blind spot. :func:`run_faults` measures that::

    control   one embedded broker without faults runs the union of the
              selected scenarios; every one of them must PASS
    per fault a fresh embedded broker with ``lethe.faults=<fault>`` runs
              the scenarios covering the fault's requirements (targeted),
              or every scenario of their profiles (``whole_profile``)
    detected  some scenario FAILs under the fault and PASSes in the control

A scenario that does not pass in the control proves nothing about a fault,
so it never counts as a detection (it is reported under ``control``).
ERROR under a fault (the faulty broker answered nonsense or refused a setup)
is listed, but only FAIL counts: a detection is a wrong answer the suite
named, with its expected and actual values. Faults are selected by name;
an unknown name is a :class:`~lethe_conformance.run.RunSetupError`.

Everything here is plain data; ``lethe conformance faults`` renders it
(:func:`render_table`, :func:`render_markdown`, :func:`fault_report_data`).
The reference broker is reached only through ``targets.embedded``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lethe_conformance.outcomes import Outcome, ScenarioResult
from lethe_conformance.run import RunSetupError, lethe_version, load_catalog, now_utc
from lethe_conformance.scenarios import Scenario, ScenarioError, load_scenarios, run_scenarios
from lethe_conformance.targets.base import Target

__all__ = [
    "FaultResult",
    "FaultRun",
    "FaultSpec",
    "fault_report_data",
    "known_fault_specs",
    "render_markdown",
    "render_table",
    "run_faults",
    "scenarios_for",
]

#: Builds a started target with the given faults on (tests may pass their own).
TargetFactory = Callable[[Sequence[str]], Target]


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """A fault as the runner needs it: name, broken requirements, description, hook module."""

    name: str
    requirements: tuple[str, ...]
    description: str
    where: str = ""


@dataclass(frozen=True, slots=True)
class FaultResult:
    """The selected scenarios' results under one fault."""

    fault: FaultSpec
    results: tuple[ScenarioResult, ...]
    #: Scenario IDs that passed without the fault (only those can detect it).
    sound: frozenset[str] = frozenset()

    @property
    def detecting(self) -> tuple[ScenarioResult, ...]:
        """Scenarios that FAIL under the fault and PASS without it."""
        return tuple(
            r for r in self.results if r.outcome is Outcome.FAIL and r.scenario_id in self.sound
        )

    @property
    def detected(self) -> bool:
        return bool(self.detecting)

    @property
    def failed_requirements(self) -> tuple[str, ...]:
        """Requirement IDs that FAILed in a detecting scenario, sorted."""
        found = {
            rid
            for r in self.detecting
            for rid, outcome in r.requirements.items()
            if outcome is Outcome.FAIL
        }
        return tuple(sorted(found))

    @property
    def named_requirement_failed(self) -> bool:
        """Whether one of the requirements the fault names is among the failed ones."""
        return bool(set(self.failed_requirements) & set(self.fault.requirements))

    @property
    def errors(self) -> tuple[ScenarioResult, ...]:
        return tuple(r for r in self.results if r.outcome is Outcome.ERROR)


@dataclass(frozen=True, slots=True)
class FaultRun:
    """Every fault's result plus the control run without faults."""

    faults: tuple[FaultResult, ...]
    control: tuple[ScenarioResult, ...]
    whole_profile: bool
    started: str
    finished: str
    lethe_version: str = field(default="unknown")

    @property
    def detected(self) -> int:
        return sum(1 for f in self.faults if f.detected)

    @property
    def control_failures(self) -> tuple[ScenarioResult, ...]:
        return tuple(r for r in self.control if r.outcome is not Outcome.PASS)

    @property
    def exit_code(self) -> int:
        """0 when every selected fault was detected, else 1."""
        return 0 if self.detected == len(self.faults) else 1


def known_fault_specs() -> list[FaultSpec]:
    """The reference broker's registered faults, in registry order."""
    from lethe_conformance.targets.embedded import known_faults  # noqa: PLC0415

    return [FaultSpec(name, *entry) for name, entry in known_faults().items()]


def scenarios_for(
    fault: FaultSpec,
    scenarios: Iterable[Scenario],
    *,
    whole_profile: bool = False,
    profile_of: Mapping[str, str] | None = None,
) -> list[Scenario]:
    """Scenarios covering the fault's requirements; with ``whole_profile`` every
    scenario of their profiles (``profile_of``: requirement ID -> profile)."""
    named = set(fault.requirements)
    profiles = {(profile_of or {}).get(rid, _profile_of_id(rid)) for rid in named}
    return [
        s
        for s in scenarios
        if named.intersection(s.requirements) or (whole_profile and s.profile in profiles)
    ]


def _profile_of_id(requirement: str) -> str:
    """KIP107-DEL-4 -> kip107 (the catalog's ID convention)."""
    return requirement.split("-", 1)[0].lower()


def _embedded(faults: Sequence[str]) -> Target:
    from lethe_conformance.targets.embedded import EmbeddedTarget  # noqa: PLC0415

    try:
        return EmbeddedTarget(faults=faults).start()
    except OSError as error:
        raise RunSetupError(f"cannot start the embedded reference broker: {error}") from None


def select_faults(known: Sequence[FaultSpec], wanted: Sequence[str]) -> list[FaultSpec]:
    """``wanted`` (all when empty) in registry order; RunSetupError for an unknown name."""
    names = {f.name for f in known}
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise RunSetupError(f"--fault: unknown fault {unknown[0]!r} (see conformance/FAULTS.md)")
    return [f for f in known if not wanted or f.name in wanted]


def run_faults(
    wanted: Sequence[str] = (),
    *,
    whole_profile: bool = False,
    scenarios: Sequence[Scenario] | None = None,
    target_factory: TargetFactory = _embedded,
) -> FaultRun:
    """Run the suite against each selected fault (module docstring)."""
    started = now_utc()
    catalog = load_catalog()
    profile_of = {r.id: r.profile for r in catalog}
    if scenarios is None:
        try:
            scenarios = load_scenarios(known_requirements=frozenset(profile_of))
        except ScenarioError as error:
            raise RunSetupError(f"malformed scenario: {error}") from None
    chosen = select_faults(known_fault_specs(), wanted)
    plans = [
        (f, scenarios_for(f, scenarios, whole_profile=whole_profile, profile_of=profile_of))
        for f in chosen
    ]
    union = {s.id: s for _, plan in plans for s in plan}
    control = _run(target_factory, (), list(union.values()))
    sound = frozenset(r.scenario_id for r in control if r.outcome is Outcome.PASS)
    results = tuple(
        FaultResult(fault, tuple(_run(target_factory, (fault.name,), plan)), sound)
        for fault, plan in plans
    )
    return FaultRun(results, tuple(control), whole_profile, started, now_utc(), lethe_version())


def _run(
    factory: TargetFactory, faults: Sequence[str], plan: Sequence[Scenario]
) -> list[ScenarioResult]:
    if not plan:
        return []
    target = factory(faults)
    try:
        return run_scenarios(target, plan)
    finally:
        target.close()


# --- rendering ------------------------------------------------------------------------------


def fault_report_data(run: FaultRun) -> dict[str, Any]:
    """The run as JSON data (``faults.json``); the table and Markdown read only this."""
    return {
        "kind": "lethe-fault-run",
        "complete": True,
        "lethe_version": run.lethe_version,
        "started": run.started,
        "finished": run.finished,
        "scope": "whole profile" if run.whole_profile else "targeted",
        "detected": run.detected,
        "total": len(run.faults),
        "summary": f"{run.detected} of {len(run.faults)} faults detected",
        "control": {
            "scenarios": len(run.control),
            "not_passing": {r.scenario_id: r.outcome.value for r in run.control_failures},
        },
        "faults": [_fault_row(f) for f in run.faults],
    }


def _fault_row(result: FaultResult) -> dict[str, Any]:
    first = result.detecting[0] if result.detecting else None
    return {
        "fault": result.fault.name,
        "requirements": list(result.fault.requirements),
        "description": result.fault.description,
        "detected": result.detected,
        "scenarios_run": [r.scenario_id for r in result.results],
        "detected_by": [r.scenario_id for r in result.detecting],
        "failed_requirements": list(result.failed_requirements),
        "named_requirement_failed": result.named_requirement_failed,
        "errors": {r.scenario_id: r.detail for r in result.errors},
        "first_mismatch": None if first is None else first.detail,
    }


def render_table(data: Mapping[str, Any]) -> str:
    """The terminal table: fault, detected, by which scenarios and requirements."""
    rows = data["faults"]
    width = max((len(r["fault"]) for r in rows), default=5)
    lines = [f"{'fault':<{width}}  detected  by"]
    for row in rows:
        mark = "yes" if row["detected"] else "NO"
        by = ", ".join(row["detected_by"]) or _why_not(row)
        reqs = ", ".join(row["failed_requirements"])
        lines.append(f"{row['fault']:<{width}}  {mark:<8}  {by}" + (f" [{reqs}]" if reqs else ""))
    lines.append("")
    lines.append(_control_line(data))
    lines.append(f"{data['summary']} ({data['scope']})")
    return "\n".join(lines) + "\n"


def _why_not(row: Mapping[str, Any]) -> str:
    if not row["scenarios_run"]:
        return "no scenario covers its requirements"
    if row["errors"]:
        return f"errors only: {', '.join(row['errors'])}"
    return f"all {len(row['scenarios_run'])} scenarios passed"


def _control_line(data: Mapping[str, Any]) -> str:
    control = data["control"]
    bad = control["not_passing"]
    if not bad:
        return f"control (no fault): {control['scenarios']} scenarios, all pass"
    listed = ", ".join(f"{k} {v}" for k, v in bad.items())
    return f"control (no fault): {len(bad)} of {control['scenarios']} do not pass: {listed}"


def render_markdown(data: Mapping[str, Any]) -> str:
    """``faults.md``: the summary, then one table row per fault."""
    lines = [
        "# Fault detection",
        "",
        f"**{data['summary']}** ({data['scope']}; lethe {data['lethe_version']}, "
        f"{data['finished']}).",
        "",
        _control_line(data),
        "",
        "| fault | requirements | detected | by scenarios | failed requirements |",
        "|---|---|---|---|---|",
    ]
    for row in data["faults"]:
        lines.append(
            f"| `{row['fault']}` | {', '.join(row['requirements'])} | "
            f"{'yes' if row['detected'] else '**no**'} | "
            f"{', '.join(row['detected_by']) or _why_not(row)} | "
            f"{', '.join(row['failed_requirements'])} |"
        )
    return "\n".join(lines) + "\n"
