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
        {"scenario": "kip107-time-and-size-retention", "reason": "retention.bytes ignored",
         "evidence": "steps[4] wait:", "rule": "KIP107-RET-3: retention.bytes ..."}
      ]
    }

``evidence`` (optional) pins *how* the entry fails: a text, or a list of
texts, that the failing scenario's detail (the step and the mismatch) must
all contain (the parts of a detail that change between runs, an address or a
topic's random suffix, stay out of it). A listed failure
whose detail no longer contains it fails differently now, and the gate fails
(``changed``), as does one that is no longer judged at all (not applicable,
unsupported, inconclusive): a baseline with evidence records a broker's
behaviour, not only that it fails. ``rule`` (optional, free text) names the
requirement or Kafka rule the failure breaks, for the reader.

Verdicts, per scenario and per requirement:

========================  ==================  =================
outcome                   listed in baseline  not listed
========================  ==================  =================
FAIL                      EXPECTED_FAILURE    FAILED
FAIL, other evidence      FAILED (changed)    FAILED
PASS                      FIXED               OK
ERROR                     FAILED              FAILED
other (N/A, unsupported,  OK (cannot tell);   OK
inconclusive)             FAILED (changed)
                          with evidence
========================  ==================  =================

ERROR is never excused: a baseline lists wrong answers, not a broken run. A
requirement not listed itself but failing only in baselined scenarios is an
EXPECTED_FAILURE too. The gate passes iff nothing is FAILED or FIXED. Entries
that match nothing in the run (filtered out by ``--profile`` or ``--tag``) are
reported as ``unmatched`` without failing the gate; an entry naming no known
requirement or scenario at all (misspelt) is refused before the run
(:meth:`Baseline.check_known`, exit 2).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
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
    #: texts the failing detail must all contain (module docstring); () = any failure
    evidence: tuple[str, ...] = ()
    #: the rule the failure breaks (free text, for the reader)
    rule: str = ""

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
    source: str = "<baseline>"

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
        return cls(entries, str(data.get("target", "")), source)

    def entry(self, kind: str, ident: str) -> BaselineEntry | None:
        for entry in self.entries:
            if entry.key == (kind, ident):
                return entry
        return None

    def reason(self, kind: str, ident: str) -> str | None:
        found = self.entry(kind, ident)
        return None if found is None else found.reason

    def excuses(self, kind: str, ident: str, details: Sequence[str]) -> bool:
        """Whether an entry lists ``ident`` and its evidence is in one of ``details``."""
        entry = self.entry(kind, ident)
        return entry is not None and _missing_evidence(entry.evidence, details) is None

    def check_known(self, requirements: Iterable[str], scenarios: Iterable[str]) -> None:
        """BaselineError for the first entry naming no known requirement or scenario."""
        known = {"requirement": set(requirements), "scenario": set(scenarios)}
        for index, entry in enumerate(self.entries):
            kind, ident = entry.key
            if ident not in known[kind]:
                raise BaselineError(
                    f"{self.source}: known_failures[{index}]: no {kind} {ident!r} "
                    f"in the catalog and scenarios (misspelt?)"
                )


def _entry(item: Any, where: str) -> BaselineEntry:
    if not isinstance(item, dict) or set(item) - _ENTRY_KEYS:
        raise BaselineError(f"{where}: expected {{requirement|scenario, reason[, evidence, rule]}}")
    reason = item.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise BaselineError(f"{where}: a known failure needs a non-empty 'reason'")
    requirement, scenario = item.get("requirement"), item.get("scenario")
    if (requirement is None) == (scenario is None):
        raise BaselineError(f"{where}: give exactly one of 'requirement' and 'scenario'")
    for value in (requirement, scenario):
        if value is not None and not isinstance(value, str):
            raise BaselineError(f"{where}: IDs are strings")
    evidence, rule = item.get("evidence", []), item.get("rule", "")
    if isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, list) or not all(isinstance(e, str) and e for e in evidence):
        raise BaselineError(f"{where}: 'evidence' is a text or a list of non-empty texts")
    if not isinstance(rule, str):
        raise BaselineError(f"{where}: 'rule' is a text")
    return BaselineEntry(reason, requirement, scenario, tuple(evidence), rule)


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


_ENTRY_KEYS = frozenset({"requirement", "scenario", "reason", "evidence", "rule"})


def apply_baseline(
    results: Sequence[ScenarioResult], baseline: Baseline | None = None
) -> GateReport:
    """Verdicts for every scenario and requirement of a run (see the module docstring)."""
    baseline = baseline or Baseline()
    items: list[GateItem] = []
    excused: set[str] = set()
    details = {result.scenario_id: result.detail for result in results}
    for result in results:
        item = _judge(
            "scenario",
            result.scenario_id,
            result.outcome,
            baseline.entry("scenario", result.scenario_id),
            (result.detail,),
        )
        if item.verdict is Verdict.EXPECTED_FAILURE:
            excused.add(result.scenario_id)
        items.append(item)
    for ident, requirement in requirement_results(results).items():
        failing = tuple(
            details[s] for s, outcome in requirement.scenarios.items() if outcome is Outcome.FAIL
        )
        item = _judge(
            "requirement",
            ident,
            requirement.outcome,
            baseline.entry("requirement", ident),
            failing,
        )
        if item.verdict is Verdict.FAILED and _only_excused(requirement.scenarios, excused):
            item = GateItem(
                "requirement", ident, item.outcome, Verdict.EXPECTED_FAILURE, "baselined scenarios"
            )
        items.append(item)
    seen = {(item.kind, item.ident) for item in items}
    unmatched = tuple(entry for entry in baseline.entries if entry.key not in seen)
    return GateReport(tuple(items), unmatched)


def _judge(
    kind: str,
    ident: str,
    outcome: Outcome,
    entry: BaselineEntry | None,
    details: Sequence[str],
) -> GateItem:
    reason = None if entry is None else entry.reason
    if outcome is Outcome.ERROR:
        return GateItem(kind, ident, outcome, Verdict.FAILED, reason or "")
    if entry is None or reason is None:
        verdict = Verdict.FAILED if outcome is Outcome.FAIL else Verdict.OK
        return GateItem(kind, ident, outcome, verdict)
    if outcome is Outcome.FAIL:
        missing = _missing_evidence(entry.evidence, details)
        if missing is not None:
            changed = f"fails differently now (changed): the baseline's evidence {missing!r}"
            return GateItem(kind, ident, outcome, Verdict.FAILED, f"{changed} is not in the detail")
        return GateItem(kind, ident, outcome, Verdict.EXPECTED_FAILURE, reason)
    if outcome is Outcome.PASS:
        return GateItem(
            kind,
            ident,
            outcome,
            Verdict.FIXED,
            f"passes now; remove it from the baseline ({reason})",
        )
    if entry.evidence:  # it claimed how it fails; now it cannot be judged at all
        changed = f"no longer fails as recorded (changed): now {outcome.value}"
        return GateItem(kind, ident, outcome, Verdict.FAILED, changed)
    return GateItem(kind, ident, outcome, Verdict.OK, reason)


def _missing_evidence(evidence: Sequence[str], details: Sequence[str]) -> str | None:
    """The first evidence text no failing detail contains whole (None: all found)."""
    if not evidence or any(all(e in detail for e in evidence) for detail in details):
        return None
    return next((e for e in evidence if not any(e in d for d in details)), evidence[0])


def _only_excused(scenarios: Mapping[str, Outcome], excused: set[str]) -> bool:
    failing = [s for s, outcome in scenarios.items() if outcome.fails_gate]
    return bool(failing) and all(s in excused for s in failing)
