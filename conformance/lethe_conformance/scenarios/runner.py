"""Run scenarios against a target and grade them: the API the CLI and plugin wrap.

Theory of operation
-------------------
::

    run_scenarios(target, scenarios, select=...)        -> list[ScenarioResult]
      for each selected scenario:
        profile offered?          no  -> UNSUPPORTED      (target.profiles(), discovered)
        path (steps with "clock"): the virtual path where the target has clock-control
                                  and the time-control capabilities its steps use,
                                  else the wall path (waits only)
        capabilities present?     no  -> NOT_APPLICABLE   (what the path needs)
        broker settings relied on (scenarios/settings.py, read once per target with
        DescribeConfigs): a checked Kafka default or a broker-only setting the target
        sets otherwise -> NOT_APPLICABLE (the setting, Kafka's value and the target's);
        a topic default relied on but unchecked: set on the topic at creation
        cluster-control required: run it on target.clustered(), brokers of its own
                                  (the wall path's broker settings on top),
                                  topics with replication factor 3, roles resolved
                                  after setup, a step's "broker" routes its requests
        own-log-dir required:     run it on target.isolated(), a broker of its own
                                  (setup.broker_configs on top of the target's settings)
        the target recovers first (a launched node a broken scenario left down starts)
        setup: create topics (unique names), wait until their leaders serve (a probe,
               scenarios/readiness.py), replay fixture batches
        steps in order (a step with "principal" runs as that role), stop at the
        first that does not pass; on a wall-clock target a step answered only with
        a retriable error (NOT_LEADER_OR_FOLLOWER, ...) is sent again within a bound,
        and after a restart or an election the leader probe runs again:
          mismatches                         -> FAIL (expected vs actual, JSON path)
          a valid setup step refused, the
          connection closed on an advertised
          API, an answer that is not one
          (garbage, another correlation id)  -> FAIL (the step and the answer)
          no answer within the request
          timeout (a hang)                   -> INCONCLUSIVE (the step; a busy
                                                target may just be slow)
          UnsupportedApiError                -> UNSUPPORTED
          CapabilityMissingError             -> NOT_APPLICABLE
          WaitExpiredError                   -> INCONCLUSIVE (wall clock) / FAIL (virtual)
          unreachable, control,
          malformed step, anything else      -> ERROR
        delete the ACLs the scenario created and its topics (best effort)
        wall path: requirements only the virtual path shows -> NOT_APPLICABLE, with
                   the scenario's reason (wall_clock.virtual_only) in ``notes``

    requirement_results(results)  (outcomes.py)          -> worst outcome per requirement

A runner never raises for something a target did: every scenario yields a
result, so a report is complete even when the target dies halfway (the rest
are ERROR, each saying why). Only programming errors in the caller (a bad
argument) raise.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from lethe_formats.errors import FormatError
from lethe_formats.protocol.error_codes import ErrorCode, error_name

from lethe_conformance.client import acl_calls, calls
from lethe_conformance.client.errors import (
    ClientError,
    ConnectionClosedError,
    TargetNonsenseError,
    TargetTimeoutError,
    UnsupportedApiError,
)
from lethe_conformance.outcomes import Outcome, ScenarioResult, StepResult
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.model import VIRTUAL, WALL, Scenario, ScenarioError, Step
from lethe_conformance.scenarios.ops import OPS, WaitExpiredError
from lethe_conformance.scenarios.ops.cluster import resolve_roles
from lethe_conformance.scenarios.ops.messages import replay_entries
from lethe_conformance.scenarios.readiness import (
    REELECTING_OPS,
    RETRIABLE,
    RETRY_BOUND_S,
    RETRY_PAUSE_S,
    NotServingError,
    await_leaders,
    retriable_error,
)
from lethe_conformance.scenarios.settings import assess, target_settings
from lethe_conformance.targets.base import (
    FAILURE_PROVIDED_BY,
    OWN_LOG_DIR,
    PROVIDED_BY,
    TRANSACTIONS,
    CapabilityMissingError,
    ControlError,
    LocalTarget,
    Target,
)
from lethe_conformance.targets.cluster import CLUSTER_CONTROL, CLUSTER_SIZE, ClusterHost

__all__ = [
    "Selection",
    "SetupError",
    "SetupRefusedError",
    "clock_path",
    "run_scenario",
    "run_scenarios",
]


class SetupError(Exception):
    """The scenario's setup could not be done (graded ERROR: nothing was judged)."""


class SetupRefusedError(SetupError):
    """The target refused a valid setup request (a topic, a fixture batch): graded as the
    target's FAIL with the step and the answer, since a conforming broker accepts it."""


@dataclass(frozen=True, slots=True)
class Selection:
    """Which scenarios to run; None means no restriction on that axis.

    ``requirements`` keeps a scenario covering at least one of the IDs (the
    CLI turns catalog tags, KIP sections and Kafka versions into IDs).
    """

    profiles: frozenset[str] | None = None
    requirements: frozenset[str] | None = None
    scenarios: frozenset[str] | None = None

    def matches(self, scenario: Scenario) -> bool:
        if self.profiles is not None and scenario.profile not in self.profiles:
            return False
        if self.scenarios is not None and scenario.id not in self.scenarios:
            return False
        return self.requirements is None or bool(
            self.requirements.intersection(scenario.requirements)
        )


def run_scenarios(
    target: Target,
    scenarios: Iterable[Scenario],
    *,
    select: Selection | None = None,
    cleanup: bool = True,
) -> list[ScenarioResult]:
    """Every selected scenario's result, in the given order."""
    chosen = [s for s in scenarios if select is None or select.matches(s)]
    return [_recovered(target, scenario, cleanup) for scenario in chosen]


def _recovered(target: Target, scenario: Scenario, cleanup: bool) -> ScenarioResult:
    """Run ``scenario`` after the target recovered from what an earlier one left broken
    (a launched node down, an embedded broker stopped); a target that cannot recover
    is this scenario's ERROR, and the next scenario tries again."""
    recover = getattr(target, "recover", None)
    if recover is not None:
        started = time.monotonic()
        try:
            recover()
        except Exception as error:  # a broken target: this scenario's ERROR, never the run's
            detail = f"the target could not recover: {type(error).__name__}: {error}"
            return _result(scenario, Outcome.ERROR, detail, (), started)
    return run_scenario(target, scenario, cleanup=cleanup)


def run_scenario(
    target: Target, scenario: Scenario, *, cleanup: bool = True, token: str | None = None
) -> ScenarioResult:
    """Run one scenario; see the module docstring for the grading."""
    started = time.monotonic()
    gate = _gate(target, scenario)
    if gate is not None:
        outcome, detail = gate
        return _result(scenario, outcome, detail, (), started)
    clock = clock_path(scenario, target.capabilities.names())
    if CLUSTER_CONTROL in scenario.requires:
        return _run_clustered(
            cast(ClusterHost, target), scenario, cleanup, token, started, clock=clock
        )
    if OWN_LOG_DIR in scenario.requires:
        return _run_isolated(
            cast(LocalTarget, target), scenario, cleanup, token, started, clock=clock
        )
    return _run_steps(target, scenario, cleanup, token, started, clock=clock)


def clock_path(scenario: Scenario, capabilities: frozenset[str]) -> str | None:
    """Which path of a scenario runs on a target with ``capabilities``: None for a
    scenario with one path, ``virtual`` where the target has what that path needs,
    else ``wall`` (README, *Time*)."""
    if scenario.wall_clock is None:
        return None
    return VIRTUAL if scenario.needs(VIRTUAL) <= capabilities else WALL


def _run_isolated(
    target: LocalTarget,
    scenario: Scenario,
    cleanup: bool,
    token: str | None,
    started: float,
    *,
    clock: str | None,
) -> ScenarioResult:
    """The scenario on a broker of its own (own-log-dir); failing to start one is an ERROR."""
    try:
        own_broker = target.isolated(scenario.broker_configs, failures=scenario.failure_kinds)
        with own_broker as own:
            return _run_steps(own, scenario, cleanup, token, started, clock=clock)
    except Exception as error:  # starting or stopping the broker: never end the run
        detail = f"a broker of its own: {type(error).__name__}: {error}"
        return _result(scenario, Outcome.ERROR, detail, (), started)


def _run_clustered(
    target: ClusterHost,
    scenario: Scenario,
    cleanup: bool,
    token: str | None,
    started: float,
    *,
    clock: str | None,
) -> ScenarioResult:
    """The scenario on a cluster of its own (cluster-control), with the broker settings
    of its wall path when it takes one; failing to start one is an ERROR."""
    wall = scenario.wall_clock.broker_configs if scenario.wall_clock and clock == WALL else {}
    try:
        with target.clustered(wall) if wall else target.clustered() as cluster:
            return _run_steps(cluster, scenario, cleanup, token, started, clock=clock)
    except Exception as error:  # starting or stopping the cluster: never end the run
        detail = f"a cluster of its own: {type(error).__name__}: {error}"
        return _result(scenario, Outcome.ERROR, detail, (), started)


def _run_steps(
    target: Target,
    scenario: Scenario,
    cleanup: bool,
    token: str | None,
    started: float,
    *,
    clock: str | None,
) -> ScenarioResult:
    """Setup, steps and cleanup of a scenario that passed the gate, on ``clock``'s path."""
    ctx = RunContext(target, scenario, token)
    steps: list[StepResult] = []
    try:
        setup = _guarded(ctx, -1, "setup", _setup)
        if setup.outcome is not Outcome.PASS:
            detail = f"setup: {setup.detail}"
            return _result(scenario, setup.outcome, detail, (setup,), started, retries=ctx.retries)
        if CLUSTER_CONTROL in scenario.requires:
            ctx.roles = resolve_roles(ctx)
        for step in scenario.steps_on(clock):
            ctx.route = step.data.get("broker")  # cluster-control: a role
            result = _guarded(ctx, step.index, step.op, _run_step, step)
            ctx.route = None
            steps.append(result)
            if result.outcome is not Outcome.PASS:
                break
    finally:
        if cleanup:
            _cleanup(ctx)
        ctx.close()
    last = steps[-1]
    detail = "" if last.outcome is Outcome.PASS else f"steps[{last.index}] {last.op}: {last.detail}"
    return _result(
        scenario, last.outcome, detail, tuple(steps), started, clock=clock, retries=ctx.retries
    )


def _gate(target: Target, scenario: Scenario) -> tuple[Outcome, str] | None:
    """UNSUPPORTED / NOT_APPLICABLE / ERROR before anything runs, else None."""
    try:
        offered = target.profiles()
    except (ClientError, FormatError) as error:
        return Outcome.ERROR, f"cannot discover the target's profiles: {error}"
    if scenario.profile not in offered:
        return (
            Outcome.UNSUPPORTED,
            f"target {target.name} does not offer profile {scenario.profile}",
        )
    names = target.capabilities.names()
    if TRANSACTIONS in scenario.requires:
        try:
            names |= _protocol_capabilities(target)
        except (ClientError, FormatError) as error:
            return Outcome.ERROR, f"cannot discover the target's transactions: {error}"
    missing = scenario.needs(clock_path(scenario, names)) - names
    if missing:
        lacks = "; ".join(
            f"{name} (provided by {PROVIDED_BY[name]})" if name in PROVIDED_BY else name
            for name in sorted(missing)
        )
        return Outcome.NOT_APPLICABLE, f"target {target.name} lacks {lacks}"
    cannot = sorted(scenario.failure_kinds - target.capabilities.failure_kinds)
    if cannot:
        lacks = "; ".join(
            f"{kind} (provided by {FAILURE_PROVIDED_BY.get(kind, kind)})" for kind in cannot
        )
        return Outcome.NOT_APPLICABLE, f"target {target.name} cannot cause the failure {lacks}"
    assessed = assess(scenario, target_settings(target))
    if assessed.not_applicable is not None:
        return Outcome.NOT_APPLICABLE, f"target {target.name}: {assessed.not_applicable}"
    return None


def _protocol_capabilities(target: Target) -> frozenset[str]:
    """What the target's ApiVersions offers (``transactions``); a target that cannot
    tell (no discovery of its own) offers none."""
    discover = getattr(target, "protocol_capabilities", None)
    return frozenset() if discover is None else frozenset(discover())


def _run_step(ctx: RunContext, step: Step) -> StepResult:
    deadline = time.monotonic() + RETRY_BOUND_S
    while True:
        with ctx.acting_as(step.data.get("principal")):
            mismatches = OPS[step.op](ctx, step.data, f"$.{step.path}")
        retriable = None if ctx.virtual_clock else retriable_error(mismatches)
        if retriable is None or time.monotonic() >= deadline:
            break
        ctx.note_retry(retriable)
        time.sleep(RETRY_PAUSE_S)
    if mismatches:
        return StepResult(step.index, step.op, Outcome.FAIL, str(mismatches[0]), tuple(mismatches))
    if step.op in REELECTING_OPS and not ctx.virtual_clock:
        await_leaders(ctx)
    return StepResult(step.index, step.op, Outcome.PASS)


def _guarded(
    ctx: RunContext,
    index: int,
    op: str,
    run: Callable[..., StepResult | None],
    *args: Step,
) -> StepResult:
    """Run ``run(ctx, *args)`` and turn what it raises into a graded StepResult."""
    try:
        result = run(ctx, *args)
    except UnsupportedApiError as error:
        return StepResult(index, op, Outcome.UNSUPPORTED, str(error))
    except CapabilityMissingError as error:
        return StepResult(index, op, Outcome.NOT_APPLICABLE, str(error))
    except WaitExpiredError as error:
        outcome = Outcome.FAIL if error.virtual else Outcome.INCONCLUSIVE
        return StepResult(index, op, outcome, str(error), tuple(error.mismatches))
    except SetupRefusedError as error:  # the target refused a valid request
        ctx.drop_connection()
        return StepResult(index, op, Outcome.FAIL, str(error))
    except ConnectionClosedError as error:
        ctx.drop_connection()
        if error.advertised:  # closing on an API it advertises: the target's wrong answer
            detail = f"{error} instead of answering (the API is advertised)"
            return StepResult(index, op, Outcome.FAIL, detail)
        return StepResult(index, op, Outcome.ERROR, str(error))
    except TargetNonsenseError as error:  # bytes that answer nothing: the target's wrong answer
        ctx.drop_connection()
        return StepResult(index, op, Outcome.FAIL, f"{error} (not an answer to the request)")
    except TargetTimeoutError as error:  # a hang, or a target too slow to judge
        ctx.drop_connection()
        detail = f"{error} (the target hangs, or is too slow to judge)"
        return StepResult(index, op, Outcome.INCONCLUSIVE, detail)
    except (ClientError, ControlError, SetupError, ScenarioError, NotServingError) as error:
        ctx.drop_connection()
        return StepResult(index, op, Outcome.ERROR, str(error))
    except Exception as error:  # never let one scenario end the run
        ctx.drop_connection()
        return StepResult(index, op, Outcome.ERROR, f"{type(error).__name__}: {error}")
    if isinstance(result, StepResult):
        return result
    return StepResult(index, op, Outcome.PASS)


def _setup(ctx: RunContext) -> None:
    conn = ctx.conn()
    kafkas = assess(ctx.scenario, target_settings(ctx.target)).per_topic
    for topic in ctx.scenario.topics:
        name = ctx.topic(topic.symbol)
        factor = CLUSTER_SIZE if CLUSTER_CONTROL in ctx.scenario.requires else 1
        configs = dict(topic.configs) | dict(kafkas.get(topic.symbol, {}))
        answer = calls.create_topic(
            conn, name, topic.partitions, configs, replication_factor=factor
        ).topics
        code = answer[0].error_code if answer else ErrorCode.UNKNOWN_SERVER_ERROR
        if code != ErrorCode.NONE:
            message = answer[0].error_message if answer else "no result"
            raise SetupRefusedError(
                f"CreateTopics {topic.symbol} {json.dumps(dict(topic.configs))}: "
                f"{error_name(code)}: {message}"
            )
    await_leaders(ctx)
    for index, spec in enumerate(ctx.scenario.replay):
        assert spec.topic is not None and spec.partition is not None
        for number, payload in enumerate(replay_entries(spec)):
            _replay_one(ctx, ctx.topic(spec.topic), spec.partition, payload, f"{index}] {number}")


def _replay_one(ctx: RunContext, topic: str, partition: int, payload: bytes, where: str) -> None:
    """Produce one fixture batch; retriable answers are retried within the bound (wall
    clock), any other refusal is the target refusing a valid batch."""
    deadline = time.monotonic() + RETRY_BOUND_S
    while True:
        response = calls.produce(ctx.conn(), topic, partition, payload)
        answer = response.responses[0].partition_responses[0]
        code = answer.error_code
        if code == ErrorCode.NONE:
            return
        name = error_name(code)
        if ctx.virtual_clock or name not in RETRIABLE or time.monotonic() >= deadline:
            message = getattr(answer, "error_message", None) or ""
            raise SetupRefusedError(
                f"replay[{where.replace('] ', '] batch ')}: Produce answered {name}"
                + (f": {message}" if message else "")
            )
        ctx.note_retry(name)
        time.sleep(RETRY_PAUSE_S)


def _cleanup(ctx: RunContext) -> None:
    if ctx.acls:
        try:
            acl_calls.delete_acls(ctx.conn(), ctx.acls)
        except Exception:  # best effort, as for topics
            ctx.drop_connection()
    names = [ctx.topic(t.symbol) for t in ctx.scenario.topics]
    if not names:
        return
    try:
        calls.delete_topics(ctx.conn(), names)
    except Exception:  # best effort: the result is already decided
        ctx.drop_connection()


def _result(
    scenario: Scenario,
    outcome: Outcome,
    detail: str,
    steps: Sequence[StepResult],
    started: float,
    *,
    clock: str | None = None,
    retries: Mapping[str, int] | None = None,
) -> ScenarioResult:
    notes = _wall_clock_notes(scenario) if clock == WALL else {}
    if notes and not detail:
        detail = f"wall clock: {len(notes)} requirement(s) need a virtual clock"
    return ScenarioResult(
        scenario_id=scenario.id,
        source=scenario.source,
        profile=scenario.profile,
        outcome=outcome,
        detail=detail,
        requirements=_requirement_outcomes(scenario, outcome, steps, clock, notes),
        steps=tuple(steps),
        duration_s=time.monotonic() - started,
        notes=notes,
        retries=dict(retries or {}),
    )


def _wall_clock_notes(scenario: Scenario) -> dict[str, str]:
    """Requirement -> why only a virtual clock shows it (the scenario's ``wall_clock``)."""
    if scenario.wall_clock is None:
        return {}
    return {
        requirement: f"needs a virtual clock: {why}"
        for requirement, why in scenario.wall_clock.virtual_only.items()
    }


def _requirement_outcomes(
    scenario: Scenario,
    outcome: Outcome,
    steps: Sequence[StepResult],
    clock: str | None,
    notes: dict[str, str],
) -> dict[str, Outcome]:
    """A requirement tied to steps that all passed passes; any other takes ``outcome``;
    one that only the other clock's path shows is NOT_APPLICABLE (``notes`` say why)."""
    passed = {s.index for s in steps if s.outcome is Outcome.PASS}
    out: dict[str, Outcome] = {}
    for requirement in scenario.requirements:
        if requirement in notes:
            out[requirement] = Outcome.NOT_APPLICABLE
            continue
        tied = [s.index for s in scenario.steps_on(clock) if requirement in s.requirements]
        out[requirement] = Outcome.PASS if tied and set(tied) <= passed else outcome
    return out
