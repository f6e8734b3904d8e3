"""Graded outcomes of scenarios and requirements, and how they combine.

A conformance run must never blur "the target is wrong" with "we could not
tell". Six grades, from best to worst::

    PASS            every expectation held
    NOT_APPLICABLE  the target lacks a capability the scenario needs (log-dir
                    access, clock control, restarts): nothing was judged
    UNSUPPORTED     the target does not offer the API, extension or profile
    INCONCLUSIVE    a wall-clock wait ran out before the condition held
    FAIL            the target answered, and the answer is wrong (expected vs actual)
    ERROR           the scenario is malformed, or the target answered nonsense or
                    could not be reached: never presented as a pass

A requirement covered by several scenarios gets the *worst* of their outcomes
(:func:`worst`), so one failing scenario cannot hide behind a passing one, and
a requirement whose only scenarios were not applicable is not called passed.
Which outcomes fail a gate is :attr:`Outcome.fails_gate` (FAIL and ERROR); the
baseline (``baseline.py``) may turn a known FAIL into an expected failure.

Everything here is plain data: reports, the CLI and the pytest plugin render
it; nothing here prints.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = [
    "Mismatch",
    "Outcome",
    "RequirementResult",
    "ScenarioResult",
    "StepResult",
    "requirement_results",
    "worst",
]


class Outcome(enum.Enum):
    """A grade; members are ordered from best to worst (see :attr:`rank`)."""

    PASS = "pass"
    NOT_APPLICABLE = "not-applicable"
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"
    FAIL = "fail"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """0 for PASS up to 5 for ERROR: larger is worse."""
        return _ORDER.index(self)

    @property
    def fails_gate(self) -> bool:
        """A wrong answer or an unjudgeable run fails a gate; the rest only inform."""
        return self in (Outcome.FAIL, Outcome.ERROR)


_ORDER = list(Outcome)


def worst(outcomes: Iterable[Outcome]) -> Outcome | None:
    """The worst outcome, or None for no outcomes at all."""
    found = list(outcomes)
    return max(found, key=lambda outcome: outcome.rank) if found else None


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expectation that did not hold: where (a JSON path into the step), what was
    expected and what the target gave, both rendered as text."""

    path: str
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"{self.path}: expected {self.expected}, got {self.actual}"


@dataclass(frozen=True, slots=True)
class StepResult:
    """The outcome of one step (``index`` into the scenario's steps)."""

    index: int
    op: str
    outcome: Outcome
    detail: str = ""
    mismatches: tuple[Mismatch, ...] = ()


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """One scenario run against one target.

    ``requirements`` maps every requirement the scenario covers to its outcome
    in this run: a requirement tied to particular steps passes once those steps
    passed, even if a later step failed; otherwise it takes the scenario's
    outcome.
    """

    scenario_id: str
    source: str
    profile: str
    outcome: Outcome
    detail: str
    requirements: dict[str, Outcome]
    steps: tuple[StepResult, ...] = ()
    duration_s: float = 0.0
    #: requirement -> why it was not judged although the scenario ran (a requirement
    #: only a virtual clock shows, run on the wall clock)
    notes: dict[str, str] = field(default_factory=dict)
    #: retriable errors absorbed by retries (error name -> count; scenarios/readiness.py)
    retries: dict[str, int] = field(default_factory=dict)

    @property
    def mismatches(self) -> tuple[Mismatch, ...]:
        return tuple(m for step in self.steps for m in step.mismatches)


@dataclass(frozen=True, slots=True)
class RequirementResult:
    """A requirement's outcome over every scenario that covers it (the worst)."""

    requirement_id: str
    outcome: Outcome
    scenarios: dict[str, Outcome] = field(default_factory=dict)


def requirement_results(results: Iterable[ScenarioResult]) -> dict[str, RequirementResult]:
    """Per requirement ID, the worst outcome over the scenarios covering it (sorted by ID)."""
    by_requirement: dict[str, dict[str, Outcome]] = {}
    for result in results:
        for requirement, outcome in result.requirements.items():
            by_requirement.setdefault(requirement, {})[result.scenario_id] = outcome
    out: dict[str, RequirementResult] = {}
    for requirement in sorted(by_requirement):
        scenarios = by_requirement[requirement]
        grade = worst(scenarios.values())
        assert grade is not None
        out[requirement] = RequirementResult(requirement, grade, scenarios)
    return out
