"""A run as one JSON document: the single source every report view renders.

Theory of operation
-------------------
Shape (``report.json``)::

    {
      "complete": true,                 false: the run did not finish; see "error"
      "lethe_version": "0.1.0",
      "started": ISO-8601 UTC, "finished": ISO-8601 UTC,
      "target": {"name", "clock", "log_dir", "restart", "trigger_cleaning", "sasl",
                 "profiles_offered": [...]},
      "required_profiles": [...], "failed_profiles": [...], "gate": "passed" | "failed",
      "summary": {"pass": n, ..., "not-covered": n, "not-observable": n, "not-selected": n},
      "requirements": [                 every catalog requirement, grouped by profile
        {"id", "profile", "statement", "implemented_by_kafka", "kafka_version",
         "outcome",                     an Outcome value, "not-covered", "not-observable"
                                        or "not-selected"
         "verdict", "reason",           baseline verdict (null when nothing ran); for
                                        not-observable, the catalog's reason
         "scenarios": {scenario id: outcome}}
      ],
      "scenarios": [
        {"id", "source", "profile", "outcome", "verdict", "detail", "duration_s",
         "mismatches": [{"step", "op", "path", "expected", "actual"}]}
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

from collections import Counter
from typing import TYPE_CHECKING, Any

from lethe_conformance.outcomes import Outcome, requirement_results

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
        "started": run.started,
        "finished": run.finished,
        "target": _target(run),
        "required_profiles": list(run.required),
        "failed_profiles": list(run.failed_profiles),
        "gate": "failed" if run.failed_profiles else "passed",
        "summary": {state: counts.get(state, 0) for state in STATES},
        "requirements": rows,
        "scenarios": _scenario_rows(run),
        "baseline_unmatched": [
            {"kind": e.key[0], "id": e.key[1], "reason": e.reason} for e in run.gate.unmatched
        ],
    }


def incomplete_data(error: str, started: str, lethe_version: str) -> dict[str, Any]:
    """A document saying the run did not happen or did not finish, and why."""
    return {
        "complete": False,
        "error": error,
        "lethe_version": lethe_version,
        "started": started,
        "requirements": [],
        "scenarios": [],
    }


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
    }


def _requirement_rows(run: ConformanceRun) -> list[dict[str, Any]]:
    graded = requirement_results(run.results)
    verdicts = {i.ident: i for i in run.gate.items if i.kind == "requirement"}
    covered = {rid for s in run.scenarios for rid in s.requirements}
    rows = []
    for req in run.catalog:
        result = graded.get(req.id)
        verdict = verdicts.get(req.id)
        reason = "" if verdict is None else verdict.reason
        if result is not None:
            outcome = result.outcome.value
            reason = reason or _note(run, req.id)
        elif req.id in covered:
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
                "detail": result.detail,
                "duration_s": round(result.duration_s, 3),
                "mismatches": [
                    {
                        "step": step.index,
                        "op": step.op,
                        "path": m.path,
                        "expected": m.expected,
                        "actual": m.actual,
                    }
                    for step in result.steps
                    for m in step.mismatches
                ],
            }
        )
    return rows
