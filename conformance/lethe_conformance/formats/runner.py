"""Run format cases through an adapter, grade each one, and summarise.

Theory of operation
-------------------
:func:`grade` compares one adapter outcome with its case:

=============  ==============  ==============================================
case           outcome         status
=============  ==============  ==============================================
valid          Decoded         PASS if the value equals ``expected``
                               (:func:`.tagged.compare`), else FAIL (wrong value)
valid          Rejected        FAIL (rejected a valid input)
invalid        Rejected        PASS if the error id matches (any id with
                               ``any_error``) and a reported position / line
                               matches the case's, else FAIL
invalid        Decoded         FAIL (accepted an invalid input)
either         Broken          ERROR (implementation error)
=============  ==============  ==============================================

A position or line is compared only when both the case and the adapter give
one. A **baseline** lists an implementation's known failures, one case id a
line (``#`` starts a comment, the rest of the line is the reason). They are
strict expected failures, as ``pytest.xfail(strict=True)``: a listed case
that fails or errors is XFAIL (not counted against the run); a listed case
that *passes* is XPASS, which fails the run, so a fixed bug forces its entry
out of the baseline. A baseline entry naming no case of the selected kinds
is an error too (:class:`BaselineError`), so entries cannot go stale.

:func:`run` grades every case (optionally in parallel threads, each case
still one adapter call) and returns a :class:`Report`; ``Report.ok`` is
true when nothing failed, errored or unexpectedly passed.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lethe_conformance.formats.adapters import Adapter, AdapterResult, Broken, Decoded, Rejected
from lethe_conformance.formats.cases import Case
from lethe_conformance.formats.tagged import compare

__all__ = [
    "BaselineError",
    "Report",
    "Result",
    "Status",
    "grade",
    "load_baseline",
    "parse_baseline",
    "run",
]


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    XFAIL = "xfail"
    XPASS = "xpass"


class BaselineError(Exception):
    """A baseline file that cannot be used (bad line, or a case that does not exist)."""


@dataclass(frozen=True)
class Result:
    """How one case went; ``detail`` explains anything but a plain pass."""

    case: Case
    status: Status
    detail: str = ""


def _grade_valid(case: Case, outcome: Decoded | Rejected) -> tuple[Status, str]:
    if isinstance(outcome, Rejected):
        return Status.FAIL, f"rejected a valid input with error {outcome.error!r}"
    differences = compare(case.expected, outcome.value)
    if differences:
        shown = "\n".join(differences[:10])
        more = f"\n... {len(differences) - 10} more differences" if len(differences) > 10 else ""
        return Status.FAIL, f"wrong value:\n{shown}{more}"
    return Status.PASS, ""


def _grade_invalid(case: Case, outcome: Decoded | Rejected, any_error: bool) -> tuple[Status, str]:
    if isinstance(outcome, Decoded):
        return Status.FAIL, f"accepted an invalid input (expected error {case.error!r})"
    if not any_error and outcome.error != case.error:
        return Status.FAIL, f"wrong error id: expected {case.error!r}, got {outcome.error!r}"
    for what, want, got in (
        ("position", case.position, outcome.position),
        ("line", case.line, outcome.line),
    ):
        if want is not None and got is not None and want != got:
            return Status.FAIL, f"wrong {what}: expected {want}, got {got}"
    return Status.PASS, ""


def grade(case: Case, outcome: AdapterResult, *, any_error: bool = False) -> tuple[Status, str]:
    """PASS, FAIL or ERROR for one outcome, with the reason (see the module table)."""
    if isinstance(outcome, Broken):
        return Status.ERROR, f"implementation error: {outcome.reason}"
    if case.valid:
        return _grade_valid(case, outcome)
    return _grade_invalid(case, outcome, any_error)


def parse_baseline(text: str, source: str = "<baseline>") -> dict[str, str]:
    """``{case id: reason}`` from baseline text (one id a line, ``#`` comments)."""
    entries: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        case_id, _, reason = raw.partition("#")
        case_id = case_id.strip()
        if not case_id:
            continue
        if len(case_id.split()) != 1 or case_id.count("/") != 2:
            raise BaselineError(f"{source}:{number}: expected '<kind>/<valid|invalid>/<name>'")
        if case_id in entries:
            raise BaselineError(f"{source}:{number}: {case_id} is listed twice")
        entries[case_id] = reason.strip()
    return entries


def load_baseline(path: Path) -> dict[str, str]:
    """Read a baseline file (see :func:`parse_baseline`)."""
    return parse_baseline(path.read_text(encoding="utf-8"), str(path))


def _check_baseline(baseline: Mapping[str, str], cases: Sequence[Case]) -> None:
    ids = {case.id for case in cases}
    kinds = {case.kind for case in cases}
    stale = sorted(i for i in baseline if i.split("/")[0] in kinds and i not in ids)
    if stale:
        raise BaselineError(f"baseline names cases that do not exist: {', '.join(stale)}")


def _apply_baseline(result: Result, baseline: Mapping[str, str]) -> Result:
    if result.case.id not in baseline:
        return result
    reason = baseline[result.case.id] or "no reason given"
    if result.status is Status.PASS:
        return Result(result.case, Status.XPASS, f"listed as a known failure ({reason}) but passes")
    return Result(result.case, Status.XFAIL, f"known failure ({reason}): {result.detail}")


@dataclass(frozen=True)
class Report:
    """All results of a run against one adapter."""

    adapter: str
    results: tuple[Result, ...]

    def counts(self) -> Counter[Status]:
        return Counter(result.status for result in self.results)

    @property
    def ok(self) -> bool:
        counts = self.counts()
        return not (counts[Status.FAIL] or counts[Status.ERROR] or counts[Status.XPASS])

    def problems(self) -> list[Result]:
        """Results that make the run fail, in case order."""
        bad = (Status.FAIL, Status.ERROR, Status.XPASS)
        return [result for result in self.results if result.status in bad]

    def summary(self) -> str:
        counts = self.counts()
        parts = [
            f"{counts[Status.PASS]} passed",
            f"{counts[Status.FAIL]} failed",
            f"{counts[Status.ERROR]} implementation errors",
        ]
        if counts[Status.XFAIL] or counts[Status.XPASS]:
            parts += [
                f"{counts[Status.XFAIL]} known failures",
                f"{counts[Status.XPASS]} fixed known failures",
            ]
        verdict = "OK" if self.ok else "FAILED"
        return f"{verdict}: {len(self.results)} cases against {self.adapter}: {', '.join(parts)}"

    def render(self, *, verbose: bool = False) -> str:
        """One block per problem (every case with ``verbose``), then the summary."""
        lines = []
        for result in self.results if verbose else self.problems():
            lines.append(f"{result.status.value.upper():5} {result.case.id}")
            lines += [f"      {line}" for line in result.detail.splitlines()]
        lines.append(self.summary())
        return "\n".join(lines)


def run(
    cases: Iterable[Case],
    adapter: Adapter,
    *,
    baseline: Mapping[str, str] | None = None,
    jobs: int = 1,
    any_error: bool = False,
) -> Report:
    """Grade every case against ``adapter``; raises BaselineError for a stale baseline."""
    selected = list(cases)
    known = dict(baseline or {})
    _check_baseline(known, selected)

    def one(case: Case) -> Result:
        try:
            outcome = adapter.decode(case.request())
        except Exception as exc:  # an in-process adapter's crash is its failure, not ours
            outcome = Broken(f"raised {type(exc).__name__}: {exc}")
        status, detail = grade(case, outcome, any_error=any_error)
        return _apply_baseline(Result(case, status, detail), known)

    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = tuple(pool.map(one, selected))
    else:
        results = tuple(one(case) for case in selected)
    return Report(adapter.name, results)
