"""The op inject_failure: make the broker's environment fail (capability ``inject-failure``).

Some of Kafka's answers only appear when the world around the broker breaks:
a log directory whose disk throws, an unexpected error deep inside a delete.
A broker reached by address cannot be made to fail on cue, so this needs a
broker the runner owns (:class:`~lethe_conformance.targets.base.FailureTarget`);
anywhere else the scenario is NOT_APPLICABLE. The step itself expects nothing:
the steps after it judge how the broker answers. Kinds (the schema's
``inject_failure``)::

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

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.ops.registry import op
from lethe_conformance.targets.base import INJECT_FAILURE, CapabilityMissingError, FailureTarget

__all__ = ["inject_failure"]


@op("inject_failure")
def inject_failure(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = ctx.target
    if not target.capabilities.inject_failure:
        raise CapabilityMissingError(target.name, INJECT_FAILURE)
    partitions = [int(p) for p in data["partitions"]]
    cast(FailureTarget, target).inject_failure(
        str(data["kind"]), ctx.topic(data["topic"]), partitions
    )
    return []
