"""The op inject_failure: make the broker's environment fail (capability ``inject-failure``).

Some of Kafka's answers only appear when the world around the broker breaks:
a log directory whose disk throws, an unexpected error deep inside a delete.
A broker reached by address cannot be made to fail on cue, so this needs a
broker the runner owns (:class:`~lethe_conformance.targets.base.FailureTarget`);
anywhere else the scenario is NOT_APPLICABLE. The step itself expects nothing:
the steps after it judge how the broker answers.

The embedded broker fails inside, at once. A launched broker meets a failure
caused from outside (targets/outside_failures.py) at its next write there, so
on the wall clock the step then waits (``timeout_ms``, default 60000) until
the broker stops serving the partitions normally: a ListOffsets EARLIEST of
each answers an error, whichever (the next steps judge which). A broker that
never notices leaves the step INCONCLUSIVE, as any wait on the wall clock.
Kinds (the schema's ``inject_failure``)::

    log-dir-offline   the partitions' log dir goes offline: Produce, Fetch,
                      ListOffsets, DeleteRecords of them answer KAFKA_STORAGE_ERROR
    delete-error      the next log start offset move of each partition by a
                      DeleteRecords meets an unexpected error (once)
    offsets-unreadable  the __consumer_offsets partitions named cannot be read
    replica-deletion-error  the next deletion of each partition's replica log
                      by a KIP-694 reduction fails once (an IOException); the
                      reduction stays pending and the next check retries
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_conformance.client import calls
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.ops.control import poll_until
from lethe_conformance.scenarios.ops.registry import op
from lethe_conformance.targets.base import INJECT_FAILURE, CapabilityMissingError, FailureTarget

__all__ = ["inject_failure"]

LOG_DIR_OFFLINE = "log-dir-offline"
#: ListOffsets timestamp EARLIEST
EARLIEST = -2
#: how long a launched broker may take to notice a failed log dir (wall clock)
_NOTICE_MS = 60_000


@op("inject_failure")
def inject_failure(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = ctx.target
    if not target.capabilities.inject_failure:
        raise CapabilityMissingError(target.name, INJECT_FAILURE)
    partitions = [int(p) for p in data["partitions"]]
    kind, topic = str(data["kind"]), ctx.topic(data["topic"])
    cast(FailureTarget, target).inject_failure(kind, topic, partitions)
    if kind == LOG_DIR_OFFLINE and not ctx.virtual_clock:
        ctx.drop_connection()

        def not_served() -> list[Mismatch]:
            rows = [(topic, p, EARLIEST) for p in partitions]
            answers = calls.list_offsets(ctx.conn(), rows).topics[0].partitions
            return [
                Mismatch(
                    f"{path}.partitions[{partitions.index(a.partition_index)}]", "an error", "NONE"
                )
                for a in answers
                if a.error_code == ErrorCode.NONE
            ]

        poll_until(ctx, not_served, int(data.get("timeout_ms", _NOTICE_MS)), None, path)
    return []
