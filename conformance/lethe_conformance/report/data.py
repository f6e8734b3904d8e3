"""A run as one JSON document: the single source every report view renders.

Theory of operation
-------------------
Shape (``report.json``)::

    {
      "complete": true,                 false: the run did not finish; see "error"
      "lethe_version": "0.1.0",
      "suite": {"catalog_version", "scenarios_version",   fixtures/suite.json
                "verified_against": {"broker", "version", "commit_id", "report"}},
      "started": ISO-8601 UTC, "finished": ISO-8601 UTC,
      "target": {"name", "clock", "log_dir", "restart", "trigger_cleaning", "sasl",
                 "profiles_offered": [...],
                 "api_versions": [{"api_key", "name", "min", "max"}]},  its ApiVersions
      "required_profiles": [...], "failed_profiles": [...], "gate": "passed" | "failed",
      "summary": {"pass": n, ..., "not-covered": n, "not-observable": n, "not-selected": n},
      "requirements": [                 every catalog requirement, grouped by profile
        {"id", "profile", "statement", "implemented_by_kafka", "kafka_version",
         "outcome",                     an Outcome value, "not-covered", "not-observable"
                                        or "not-selected"
         "verdict", "reason",           baseline verdict (null when nothing ran); for
                                        not-observable, the catalog's reason
         "why",                         for any outcome but pass: the worst scenario's
                                        detail (the mismatch, the missing capability and
                                        what would provide it) or the catalog's reason
         "scenarios": {scenario id: outcome}}
      ],
      "profiles": {profile: {state: n}},  the requirement states counted per profile
      "retries": {error name: n},       retriable errors the runner absorbed (readiness.py)
      "scenarios": [
        {"id", "source", "profile", "outcome", "verdict", "reason", "detail", "duration_s",
         (reason: the baseline's, or why a listed failure is not excused: "fails
         differently now (changed): ...")
         "retries": {error name: n},
         "mismatches": [{"step", "op", "path", "expected", "actual", "text"}]}
                                        expected/actual: JSON values (a string, number,
                                        list, object, null; bytes as {"utf8"} or {"hex"}),
                                        or a description when the mismatch is one
                                        ("one result", "NONE (0)", "absent"); text: the
                                        line "PATH: expected X, got Y" with X and Y as
                                        JSON text (a string in double quotes)
      ],
      "baseline_unmatched": [{"kind", "id", "reason"}]
    }

``not-covered`` (no scenario covers the requirement), ``not-observable`` (no
scenario covers it and the catalog says why none can: a client-side rule, a
tool's behaviour, a client quota the targets do not configure) and ``not-selected`` (covered, but
filtered out by --profile / --tag) are states of their own: a requirement
nobody checked is never shown as passing, and ``not-covered`` is kept for what
is a gap in the scenarios.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from lethe_formats.protocol.api_keys import api_name

from lethe_conformance.outcomes import Outcome, requirement_results
from lethe_conformance.suite import SuiteError, load_suite

if TYPE_CHECKING:
    from lethe_conformance.run import ConformanceRun

__all__ = [
    "NOT_COVERED",
    "NOT_OBSERVABLE",
    "NOT_SELECTED",
    "STATES",
    "incomplete_data",
    "report_data",
]

NOT_COVERED = "not-covered"
NOT_OBSERVABLE = "not-observable"
NOT_SELECTED = "not-selected"
#: Every state a requirement row can have, best to worst, then the three non-runs.
STATES = (*(o.value for o in Outcome), NOT_COVERED, NOT_OBSERVABLE, NOT_SELECTED)


def report_data(run: ConformanceRun) -> dict[str, Any]:
    """The document described in the module docstring."""
    rows = _requirement_rows(run)
    counts = Counter(row["outcome"] for row in rows)
    return {
        "complete": run.complete,
        "lethe_version": run.lethe_version,
        "suite": None if run.suite is None else run.suite.as_json(),
        "started": run.started,
        "finished": run.finished,
        "target": _target(run),
        "required_profiles": list(run.required),
        "failed_profiles": list(run.failed_profiles),
        "gate": "failed" if run.failed_profiles else "passed",
        "summary": {state: counts.get(state, 0) for state in STATES},
        "profiles": _per_profile(rows),
        "retries": _retries(run),
        "requirements": rows,
        "scenarios": _scenario_rows(run),
        "baseline_unmatched": [
            {"kind": e.key[0], "id": e.key[1], "reason": e.reason} for e in run.gate.unmatched
        ],
    }


def incomplete_data(error: str, started: str, lethe_version: str) -> dict[str, Any]:
    """A document saying the run did not happen or did not finish, and why."""
    try:
        suite: dict[str, Any] | None = load_suite().as_json()
    except SuiteError:
        suite = None
    return {
        "complete": False,
        "error": error,
        "lethe_version": lethe_version,
        "suite": suite,
        "started": started,
        "requirements": [],
        "scenarios": [],
    }


def _per_profile(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = {}
    for row in rows:
        out.setdefault(row["profile"], Counter())[row["outcome"]] += 1
    return {p: {s: c[s] for s in STATES if c[s]} for p, c in out.items()}


def _retries(run: ConformanceRun) -> dict[str, int]:
    total: Counter[str] = Counter()
    for result in run.results:
        total.update(result.retries)
    return dict(sorted(total.items()))


def _why(outcome: str, reason: str, result: Any, details: dict[str, str], note: str | None) -> str:
    """Why a requirement did not pass: a scenario's note (a requirement only a virtual
    clock shows), the worst scenario's detail, the catalog's reason (not-observable),
    or the baseline's reason."""
    if outcome in (Outcome.PASS.value, NOT_SELECTED):
        return ""
    if note and outcome == Outcome.NOT_APPLICABLE.value:
        return note
    if result is None:
        return reason or ("no scenario covers it" if outcome == NOT_COVERED else "")
    for scenario_id, scenario_outcome in result.scenarios.items():
        if scenario_outcome.value == outcome and details.get(scenario_id):
            return details[scenario_id]
    return reason


def _target(run: ConformanceRun) -> dict[str, Any]:
    caps = run.capabilities
    return {
        "name": run.target,
        "clock": caps.clock,
        "log_dir": None if caps.log_dir is None else str(caps.log_dir),
        "restart": caps.restart,
        "trigger_cleaning": caps.trigger_cleaning,
        "sasl": caps.sasl,
        "capabilities": sorted(caps.names()),
        "profiles_offered": sorted(run.offered),
        "api_versions": [
            {"api_key": key, "name": api_name(key), "min": low, "max": high}
            for key, (low, high) in sorted(run.api_versions.items())
        ],
    }


def json_value(text: str) -> Any:
    """A mismatch's rendered side as the JSON value it is (scenarios/context.py's
    ``render`` writes JSON), or the text itself when it is a description."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _requirement_rows(run: ConformanceRun) -> list[dict[str, Any]]:
    graded = requirement_results(run.results)
    verdicts = {i.ident: i for i in run.gate.items if i.kind == "requirement"}
    covered = {rid for s in run.scenarios for rid in s.requirements}
    details = {r.scenario_id: r.detail for r in run.results}
    notes = {req: why for r in run.results for req, why in r.notes.items()}
    rows = []
    for req in run.catalog:
        result = graded.get(req.id)
        verdict = verdicts.get(req.id)
        reason = "" if verdict is None else verdict.reason
        if result is not None:
            outcome = result.outcome.value
            reason = reason or _note(run, req.id)
        elif req.id in covered or (run.profiles and req.profile not in run.profiles):
            outcome = NOT_SELECTED
        elif req.not_observable is not None:
            outcome, reason = NOT_OBSERVABLE, req.not_observable
        else:
            outcome = NOT_COVERED
        rows.append(
            {
                "id": req.id,
                "profile": req.profile,
                "statement": req.statement,
                "implemented_by_kafka": req.implemented_by_kafka,
                "kafka_version": req.kafka_version,
                "outcome": outcome,
                "verdict": None if verdict is None else verdict.verdict.value,
                "reason": reason,
                "why": _why(outcome, reason, result, details, notes.get(req.id)),
                "scenarios": {}
                if result is None
                else {sid: o.value for sid, o in result.scenarios.items()},
            }
        )
    return rows


def _note(run: ConformanceRun, requirement: str) -> str:
    """Why a scenario that ran left ``requirement`` unjudged (e.g. it needs a virtual
    clock and the target runs on the wall clock): the scenarios' notes, joined."""
    notes = {r.notes[requirement] for r in run.results if requirement in r.notes}
    return "; ".join(sorted(notes))


def _scenario_rows(run: ConformanceRun) -> list[dict[str, Any]]:
    verdicts = {i.ident: i for i in run.gate.items if i.kind == "scenario"}
    rows = []
    for result in run.results:
        verdict = verdicts.get(result.scenario_id)
        rows.append(
            {
                "id": result.scenario_id,
                "source": result.source,
                "profile": result.profile,
                "outcome": result.outcome.value,
                "verdict": None if verdict is None else verdict.verdict.value,
                "reason": "" if verdict is None else verdict.reason,
                "detail": result.detail,
                "duration_s": round(result.duration_s, 3),
                "retries": dict(result.retries),
                "mismatches": [
                    {
                        "step": step.index,
                        "op": step.op,
                        "path": m.path,
                        "expected": json_value(m.expected),
                        "actual": json_value(m.actual),
                        "text": str(m),
                    }
                    for step in result.steps
                    for m in step.mismatches
                ],
            }
        )
    return rows
