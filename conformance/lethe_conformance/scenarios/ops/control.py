"""Ops that act on time and on the broker: advance_time, wait, restart, trigger_cleaning.

``wait`` is how one scenario runs on both kinds of clock. It repeats a
read-only step (``until``, with its own ``expect``) until that step passes::

    virtual clock   try; advance poll_ms (default 1000); try; ... until timeout_ms
                    of broker time have passed -> still failing is FAIL (the
                    broker had all that time and did not do it)
    wall clock      try; sleep poll_ms (default 200); try; ... until timeout_ms
                    of real time have passed -> still failing is INCONCLUSIVE
                    (the broker may be configured slower than the scenario assumed)

The last attempt's mismatches travel in :class:`WaitExpiredError`, so the
report shows what was still wrong.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.model import int64
from lethe_conformance.scenarios.ops.registry import OPS, op

__all__ = ["WaitExpiredError"]

_VIRTUAL_POLL_MS = 1000
_WALL_POLL_MS = 200


class WaitExpiredError(Exception):
    """A wait whose condition never held; ``virtual`` says which clock ran out."""

    def __init__(
        self, path: str, timeout_ms: int, virtual: bool, mismatches: list[Mismatch]
    ) -> None:
        clock = "broker (virtual) time" if virtual else "wall-clock time"
        super().__init__(f"{path}: condition still false after {timeout_ms} ms of {clock}")
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


@op("trigger_cleaning")
def trigger_cleaning(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    ctx.target.trigger_cleaning()
    return []


@op("wait")
def wait(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    until = data["until"]
    check = OPS[until["op"]]
    timeout_ms: int = data["timeout_ms"]
    where = f"{path}.until"
    if ctx.virtual_clock:
        poll_ms: int = data.get("poll_ms", _VIRTUAL_POLL_MS)
        waited = 0
        while mismatches := check(ctx, until, where):
            if waited >= timeout_ms:
                raise WaitExpiredError(path, timeout_ms, True, mismatches)
            step = min(poll_ms, timeout_ms - waited)
            ctx.advance(step)
            waited += step
        return []
    poll_s = data.get("poll_ms", _WALL_POLL_MS) / 1000
    deadline = time.monotonic() + timeout_ms / 1000
    while mismatches := check(ctx, until, where):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitExpiredError(path, timeout_ms, False, mismatches)
        time.sleep(min(poll_s, remaining))
    return []
