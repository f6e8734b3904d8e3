"""A target's known failures, as strict expected failures, and the gate verdict.

Theory of operation
-------------------
A broker under development fails some requirements on purpose or for now. A
baseline file lists them, each with a reason, so a CI gate can pass while they
are still failing, and *fails* the moment one is fixed (the entry is stale and
must go), like pytest's ``xfail(strict=True)`` or toml-test's
``SkipMustError``::

    {
      "target": "my-broker 0.3 (free text)",
      "known_failures": [
        {"requirement": "KIP107-PUR-3", "reason": "timeouts not implemented, issue #12"},
        {"scenario": "kip107-time-and-size-retention", "reason": "retention.bytes ignored"}
      ]
    }

Verdicts, per scenario and per requirement:

========================  ==================  =================
outcome                   listed in baseline  not listed
========================  ==================  =================
FAIL                      EXPECTED_FAILURE    FAILED
PASS                      FIXED               OK
ERROR                     FAILED              FAILED
other (N/A, unsupported,  OK (cannot tell)    OK
inconclusive)
========================  ==================  =================

ERROR is never excused: a baseline lists wrong answers, not a broken run. A
requirement not listed itself but failing only in baselined scenarios is an
EXPECTED_FAILURE too. The gate passes iff nothing is FAILED or FIXED. Entries
that match nothing in the run (filtered out, or misspelt) are reported as
``unmatched`` without failing the gate.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lethe_conformance.outcomes import Outcome, ScenarioResult, requirement_results

__all__ = [
    "Baseline",
    "BaselineEntry",
    "BaselineError",
    "GateItem",
    "GateReport",
    "Verdict",
    "apply_baseline",
]


class BaselineError(Exception):
    """A baseline file that cannot be used; names the file and the entry."""


class Verdict(enum.Enum):
    OK = "ok"
    EXPECTED_FAILURE = "expected-failure"
    FIXED = "fixed"
    FAILED = "failed"

    @property
    def fails_gate(self) -> bool:
        return self in (Verdict.FIXED, Verdict.FAILED)


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One known failure: exactly one of ``requirement`` / ``scenario``."""

    reason: str
    requirement: str | None = None
    scenario: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        if self.requirement is not None:
            return "requirement", self.requirement
        assert self.scenario is not None
        return "scenario", self.scenario


@dataclass(frozen=True, slots=True)
class Baseline:
    entries: tuple[BaselineEntry, ...] = ()
    target: str = ""

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
        source = str(path)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            raise BaselineError(f"{source}: cannot read: {error}") from None
        except json.JSONDecodeError as error:
            raise BaselineError(
                f"{source}: line {error.lineno} column {error.colno}: {error.msg}"
            ) from None
        return cls.from_json(data, source)

    @classmethod
    def from_json(cls, data: Any, source: str = "<baseline>") -> Baseline:
        if not isinstance(data, dict) or not isinstance(data.get("known_failures"), list):
            raise BaselineError(f"{source}: expected an object with a 'known_failures' list")
        unknown = set(data) - {"$schema", "target", "known_failures"}
        if unknown:
            raise BaselineError(f"{source}: unknown keys {sorted(unknown)}")
        entries = tuple(
            _entry(item, f"{source}: known_failures[{i}]")
            for i, item in enumerate(data["known_failures"])
        )
        keys = [e.key for e in entries]
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        if duplicates:
            raise BaselineError(f"{source}: listed twice: {duplicates}")
        return cls(entries, str(data.get("target", "")))

    def reason(self, kind: str, ident: str) -> str | None:
        for entry in self.entries:
            if entry.key == (kind, ident):
                return entry.reason
        return None


def _entry(item: Any, where: str) -> BaselineEntry:
    if not isinstance(item, dict) or set(item) - {"requirement", "scenario", "reason"}:
        raise BaselineError(f"{where}: expected {{requirement|scenario, reason}}")
    reason = item.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise BaselineError(f"{where}: a known failure needs a non-empty 'reason'")
    requirement, scenario = item.get("requirement"), item.get("scenario")
    if (requirement is None) == (scenario is None):
        raise BaselineError(f"{where}: give exactly one of 'requirement' and 'scenario'")
    for value in (requirement, scenario):
        if value is not None and not isinstance(value, str):
            raise BaselineError(f"{where}: IDs are strings")
    return BaselineEntry(reason, requirement, scenario)


@dataclass(frozen=True, slots=True)
class GateItem:
    kind: str  # "scenario" or "requirement"
    ident: str
    outcome: Outcome
    verdict: Verdict
    reason: str = ""


@dataclass(frozen=True, slots=True)
class GateReport:
    items: tuple[GateItem, ...]
    unmatched: tuple[BaselineEntry, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not any(item.verdict.fails_gate for item in self.items)

    def with_verdict(self, verdict: Verdict) -> list[GateItem]:
        return [item for item in self.items if item.verdict is verdict]


def apply_baseline(
    results: Sequence[ScenarioResult], baseline: Baseline | None = None
) -> GateReport:
    """Verdicts for every scenario and requirement of a run (see the module docstring)."""
    baseline = baseline or Baseline()
    items: list[GateItem] = []
    excused: set[str] = set()
    for result in results:
        item = _judge(
            "scenario",
            result.scenario_id,
            result.outcome,
            baseline.reason("scenario", result.scenario_id),
        )
        if item.verdict is Verdict.EXPECTED_FAILURE:
            excused.add(result.scenario_id)
        items.append(item)
    for ident, requirement in requirement_results(results).items():
        item = _judge(
            "requirement", ident, requirement.outcome, baseline.reason("requirement", ident)
        )
        if item.verdict is Verdict.FAILED and _only_excused(requirement.scenarios, excused):
            item = GateItem(
                "requirement", ident, item.outcome, Verdict.EXPECTED_FAILURE, "baselined scenarios"
            )
        items.append(item)
    seen = {(item.kind, item.ident) for item in items}
    unmatched = tuple(entry for entry in baseline.entries if entry.key not in seen)
    return GateReport(tuple(items), unmatched)


def _judge(kind: str, ident: str, outcome: Outcome, reason: str | None) -> GateItem:
    if outcome is Outcome.ERROR:
        return GateItem(kind, ident, outcome, Verdict.FAILED, reason or "")
    if reason is None:
        verdict = Verdict.FAILED if outcome is Outcome.FAIL else Verdict.OK
        return GateItem(kind, ident, outcome, verdict)
    if outcome is Outcome.FAIL:
        return GateItem(kind, ident, outcome, Verdict.EXPECTED_FAILURE, reason)
    if outcome is Outcome.PASS:
        return GateItem(
            kind,
            ident,
            outcome,
            Verdict.FIXED,
            f"passes now; remove it from the baseline ({reason})",
        )
    return GateItem(kind, ident, outcome, Verdict.OK, reason)


def _only_excused(scenarios: Mapping[str, Outcome], excused: set[str]) -> bool:
    failing = [s for s, outcome in scenarios.items() if outcome.fails_gate]
    return bool(failing) and all(s in excused for s in failing)
