"""Ops that act on time and on the broker: advance_time, wait, restart, crash_restart,
trigger_cleaning.

``crash_restart`` kills the broker with no shutdown work (a launched broker gets
SIGKILL; the embedded one drops its state without flushing or checkpointing)
and starts it again on the same log dir, so a scenario sees what recovery
after a crash keeps: only what the broker had written by then (a periodic
checkpoint the scenario waited for, the page cache's segment bytes).

``wait`` is how one scenario runs on both kinds of clock. It repeats a
read-only step (``until``, with its own ``expect``) until that step passes::

    virtual clock   try; advance poll_ms (default 1000); try; ... until timeout_ms
                    of broker time have passed -> still failing is FAIL (the
                    broker had all that time and did not do it)
    wall clock      try; sleep poll_ms (default 200); try; ... until timeout_ms
                    of real time have passed -> still failing is INCONCLUSIVE
                    (the broker may be configured slower than the scenario assumed)

A launched target whose launcher caps wall-clock waits (``wall_clock.wait_cap_s``:
a broker that runs no background pass a longer wait could see) ends a wall
wait at that cap, and the INCONCLUSIVE says so.

The last attempt's mismatches travel in :class:`WaitExpiredError`, so the
report shows what was still wrong.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.model import int64
from lethe_conformance.scenarios.ops.registry import OPS, op
from lethe_conformance.targets.base import CrashTarget

__all__ = ["WaitExpiredError", "poll_until"]

_VIRTUAL_POLL_MS = 1000
_WALL_POLL_MS = 200


class WaitExpiredError(Exception):
    """A wait whose condition never held; ``virtual`` says which clock ran out."""

    def __init__(
        self,
        path: str,
        timeout_ms: int,
        virtual: bool,
        mismatches: list[Mismatch],
        why: str = "",
    ) -> None:
        clock = "broker (virtual) time" if virtual else "wall-clock time"
        super().__init__(f"{path}: condition still false after {timeout_ms} ms of {clock}{why}")
        self.virtual = virtual
        self.mismatches = mismatches


@op("advance_time")
def advance_time(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    ctx.advance(int64(data["ms"]))
    return []


@op("restart")
def restart(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    ctx.drop_connection()
    ctx.target.restart()
    return []


@op("crash_restart")
def crash_restart(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    ctx.drop_connection()
    cast(CrashTarget, ctx.target).crash_restart()
    return []


@op("trigger_cleaning")
def trigger_cleaning(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    ctx.target.trigger_cleaning()
    return []


@op("wait")
def wait(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    until = data["until"]
    check = OPS[until["op"]]
    where = f"{path}.until"
    poll_until(ctx, lambda: check(ctx, until, where), data["timeout_ms"], data.get("poll_ms"), path)
    return []


def poll_until(
    ctx: RunContext,
    check: Callable[[], list[Mismatch]],
    timeout_ms: int,
    poll_ms: int | None,
    path: str,
) -> None:
    """Repeat ``check`` until it finds no mismatch, on the target's clock (module
    docstring); WaitExpiredError with the last mismatches when ``timeout_ms`` ran out."""
    if ctx.virtual_clock:
        step_ms = poll_ms or _VIRTUAL_POLL_MS
        waited = 0
        while mismatches := check():
            if waited >= timeout_ms:
                raise WaitExpiredError(path, timeout_ms, True, mismatches)
            step = min(step_ms, timeout_ms - waited)
            ctx.advance(step)
            waited += step
        return
    poll_s = (poll_ms or _WALL_POLL_MS) / 1000
    cap_s: float | None = getattr(ctx.target, "wait_cap_s", None)
    why = ""
    if cap_s is not None and cap_s * 1000 < timeout_ms:
        why = f" (the launcher caps waits on this broker; the scenario allows {timeout_ms} ms)"
        timeout_ms = int(cap_s * 1000)
    deadline = time.monotonic() + timeout_ms / 1000
    while mismatches := check():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitExpiredError(path, timeout_ms, False, mismatches, why)
        time.sleep(min(poll_s, remaining))
