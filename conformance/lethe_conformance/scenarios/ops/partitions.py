"""Per-partition expectations shared by the multi-partition ops.

DeleteRecords, ListOffsets, OffsetCommit and OffsetFetch answer one result per
requested (topic, partition). Each op turns its response into
``{(topic, partition): {field: value}}`` and this module judges it the same
way for all of them:

1. every requested partition has exactly one result (KIP107-API-7: each
   partition is answered on its own), else a mismatch;
2. ``expect.error``, when given, must hold for every requested partition;
3. each ``expect.partitions[i]`` compares only the fields it lists
   (``error``, ``low_watermark``, ``offset``, ``timestamp``, ``leader_epoch``).

:func:`judge_committed` judges an OffsetCommit or TxnOffsetCommit answer (the
same shape: topics, partitions, an error each).

Produce steps send one batch per request to one partition: :func:`produced`
judges each answer's error, :func:`judge_base_offsets` the offsets they got
(plain and transactional produce alike).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import error_code, int64

__all__ = [
    "PartitionResults",
    "collect",
    "judge",
    "judge_base_offsets",
    "judge_committed",
    "produced",
    "requested",
]

Key = tuple[str, int]
PartitionResults = dict[Key, dict[str, int]]
_INT64_FIELDS = ("low_watermark", "offset", "timestamp")
_INT32_FIELDS = ("leader_epoch",)


def requested(ctx: RunContext, rows: Sequence[Mapping[str, Any]]) -> list[Key]:
    """The (real topic, partition) pairs a step's ``partitions`` list asks for."""
    return [(ctx.topic(row["topic"]), row["partition"]) for row in rows]


def collect(
    exp: Expectations, path: str, rows: Iterable[tuple[str, int, dict[str, int]]]
) -> PartitionResults:
    """Index response rows by partition; a partition answered twice is a mismatch."""
    results: PartitionResults = {}
    for topic, partition, fields in rows:
        if (topic, partition) in results:
            exp.mismatches.append(
                Mismatch(f"{path} ({topic}-{partition})", "one result", "two results")
            )
        results[(topic, partition)] = fields
    return results


def judge(  # noqa: PLR0917 - the six parts of one judgement, always all given
    ctx: RunContext,
    exp: Expectations,
    path: str,
    asked: Sequence[Key],
    results: PartitionResults,
    expect: Mapping[str, Any],
) -> list[Mismatch]:
    """Apply the three rules of the module docstring; returns all mismatches."""
    for topic, partition in asked:
        if (topic, partition) not in results:
            exp.missing(f"{path}.partitions", f"a result for {ctx.symbol(topic)}-{partition}")
    if "error" in expect:
        wanted = error_code(expect["error"])
        for topic, partition in asked:
            got = results.get((topic, partition))
            if got is not None:
                label = f"{path}.expect.error ({ctx.symbol(topic)}-{partition})"
                exp.error(label, wanted, got["error"])
    for index, entry in enumerate(expect.get("partitions", ())):
        _judge_entry(ctx, exp, f"{path}.expect.partitions[{index}]", entry, results)
    return exp.mismatches


def _judge_entry(
    ctx: RunContext,
    exp: Expectations,
    path: str,
    entry: Mapping[str, Any],
    results: PartitionResults,
) -> None:
    key = (ctx.topic(entry["topic"]), entry["partition"])
    got = results.get(key)
    if got is None:
        exp.missing(path, f"a result for {entry['topic']}-{entry['partition']}")
        return
    if "error" in entry:
        exp.error(f"{path}.error", error_code(entry["error"]), got["error"])
    for field in _INT64_FIELDS:
        if field in entry:
            exp.equal(f"{path}.{field}", int64(entry[field]), got.get(field))
    for field in _INT32_FIELDS:
        if field in entry:
            exp.equal(f"{path}.{field}", entry[field], got.get(field))


def produced(exp: Expectations, path: str, index: int, wanted: int, response: Any) -> Any:
    """The one partition answer of batch ``index``'s Produce response, its error judged
    against ``wanted``; None (a mismatch) when the response does not hold exactly one."""
    answers = [p for t in response.responses for p in t.partition_responses]
    if len(answers) != 1:
        exp.missing(f"{path}.batches[{index}]", "one partition response")
        return None
    exp.error(f"{path}.expect.error (batch {index})", wanted, answers[0].error_code)
    return answers[0]


def judge_base_offsets(
    exp: Expectations, path: str, expect: Mapping[str, Any], offsets: Sequence[int]
) -> None:
    """``expect.base_offsets``, when given: the base offsets the batches got, in order."""
    if "base_offsets" in expect:
        wanted = [int64(o) for o in expect["base_offsets"]]
        exp.equal(f"{path}.expect.base_offsets", wanted, list(offsets))


def judge_committed(
    ctx: RunContext, exp: Expectations, path: str, response: Any, data: Mapping[str, Any]
) -> list[Mismatch]:
    """An OffsetCommit / TxnOffsetCommit answer to the step's ``partitions``: one error per
    partition, judged by the three rules above against ``expect``."""
    rows = (
        (t.name, p.partition_index, {"error": p.error_code})
        for t in response.topics
        for p in t.partitions
    )
    results = collect(exp, path, rows)
    asked = requested(ctx, data["partitions"])
    return judge(ctx, exp, path, asked, results, data.get("expect", {}))
