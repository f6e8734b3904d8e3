"""``offset_delete`` and ``delete_groups``: removing a group's committed offsets.

Theory of operation
-------------------
Both ops send one request and judge the answer as the multi-partition ops do
(:mod:`.partitions`): every requested partition, or group, must be answered
exactly once; listed fields are compared, others are not.

``offset_delete`` (OffsetDelete, key 47). Kafka answers a *group* error
(GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, ...) at the top with no partitions, and
otherwise one code per partition (NONE, GROUP_SUBSCRIBED_TO_TOPIC,
UNKNOWN_TOPIC_OR_PARTITION). So ``expect.group_error`` (default NONE) is
compared first; only when it is expected NONE are the partitions judged
(``expect.error`` for all of them, ``expect.partitions[]`` one by one).

``delete_groups`` (DeleteGroups, key 42) for ``groups`` (symbols, as
``commit_offsets`` names groups): ``expect.error`` for every group, or
``expect.groups[] {group, error}`` one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lethe_conformance.client import group_calls
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import error_code
from lethe_conformance.scenarios.ops.partitions import collect, judge, requested
from lethe_conformance.scenarios.ops.registry import op

__all__ = ["delete_groups", "offset_delete"]


@op("offset_delete")
def offset_delete(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    asked = requested(ctx, data["partitions"])
    response = group_calls.offset_delete(
        ctx.conn(), ctx.group(data["group"]), asked, version=data.get("version")
    )
    expect = data.get("expect", {})
    exp = Expectations()
    wanted = error_code(expect.get("group_error", "NONE"))
    if not exp.error(f"{path}.expect.group_error", wanted, response.error_code) or wanted:
        return exp.mismatches
    rows = (
        (t.name, p.partition_index, {"error": p.error_code})
        for t in response.topics
        for p in t.partitions
    )
    results = collect(exp, path, rows)
    return judge(ctx, exp, path, asked, results, expect)


@op("delete_groups")
def delete_groups(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    names = {ctx.group(symbol): symbol for symbol in data["groups"]}
    response = group_calls.delete_groups(ctx.conn(), list(names), version=data.get("version"))
    exp = Expectations()
    answered: dict[str, int] = {}
    for result in response.results:
        if result.group_id in answered:
            exp.equal(
                f"{path} ({names.get(result.group_id, result.group_id)})", "one result", "two"
            )
        answered[result.group_id] = result.error_code
    for name, symbol in names.items():
        if name not in answered:
            exp.missing(f"{path}.groups", f"a result for group {symbol}")
    expect = data.get("expect", {})
    if "error" in expect:
        for name, symbol in names.items():
            if name in answered:
                label = f"{path}.expect.error ({symbol})"
                exp.error(label, error_code(expect["error"]), answered[name])
    for index, entry in enumerate(expect.get("groups", ())):
        got = answered.get(ctx.group(entry["group"]))
        where = f"{path}.expect.groups[{index}]"
        if got is None:
            exp.missing(where, f"a result for group {entry['group']}")
        elif "error" in entry:
            exp.error(f"{where}.error", error_code(entry["error"]), got)
    return exp.mismatches
