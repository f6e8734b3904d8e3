"""The op table: op name -> function, filled by the :func:`op` decorator.

Every op is ``fn(ctx, data, path) -> list[Mismatch]``: ``data`` is the step's
validated JSON object, ``path`` its JSON path (``$.steps[3]``, or
``$.steps[3].until`` inside a wait). An empty list means every expectation
held. Outcomes other than PASS/FAIL travel as exceptions the runner grades:
``UnsupportedApiError`` (UNSUPPORTED), ``CapabilityMissingError``
(NOT_APPLICABLE), ``WaitExpiredError`` (INCONCLUSIVE or FAIL), client and control
errors (ERROR).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext

__all__ = ["OPS", "Op", "op"]

Op = Callable[[RunContext, Mapping[str, Any], str], list[Mismatch]]
OPS: dict[str, Op] = {}


def op(name: str) -> Callable[[Op], Op]:
    """Register ``fn`` as the implementation of op ``name``."""

    def register(fn: Op) -> Op:
        if name in OPS:
            raise ValueError(f"op {name!r} registered twice")
        OPS[name] = fn
        return fn

    return register
