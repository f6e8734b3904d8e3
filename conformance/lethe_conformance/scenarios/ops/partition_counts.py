"""Ops about partition counts and modes: delete_partitions (KIP-694), create_partitions,
metadata, describe_broker_configs.

``delete_partitions`` sends DeletePartitions (lethe's extension key 10694; a
target without it makes the step UNSUPPORTED) for ``topics`` ``[{topic,
count}]`` with ``delay_ms`` (int64 string, default ``"0"``), ``immediate``
(default false) and ``timeout_ms``. ``expect.error`` is the request-level error;
each ``expect.topics[i]`` names a topic and compares its ``error`` and, when
given, its ``partitions`` exactly: the list of ``{partition, status}`` in the
order answered (``error`` per partition when listed). Every distinct requested
topic must be answered exactly once.

``create_partitions`` grows ``topic`` to ``count``; ``expect.error`` (default
NONE).

``metadata`` asks Metadata for one ``topic`` (never creating it) at the
negotiated version or ``version``, and compares ``expect.error`` (the topic's),
``partition_indexes`` (exactly the partitions listed, in order), per partition
``error``, ``leader_id``, ``isr`` (cluster-control: the in-sync replicas named by
role, in any order) and ``mode`` (the KIP-694 tag 10694; 0 when absent),
and ``canonical``: whether the response body re-encodes to exactly the bytes
received (no tagged field written at its default, so a ReadWrite partition
looks exactly as on Kafka). Read-only, so a ``wait`` can repeat it.

``describe_broker_configs`` asks DescribeConfigs of the broker the runner is
connected to (its node id from Metadata) for ``names`` (all when left out):
``expect.configs`` ``{name: value}`` and ``expect.read_only`` ``{name: bool}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_partitions import DeletePartitionsTopicResult
from lethe_formats.protocol.messages.metadata import MetadataResponseTopic

from lethe_conformance.client import calls, partition_calls
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import ABSENT, Expectations, RunContext
from lethe_conformance.scenarios.model import error_code, int64
from lethe_conformance.scenarios.ops.registry import op

__all__ = ["create_partitions", "delete_partitions", "describe_broker_configs", "metadata"]


@op("delete_partitions")
def delete_partitions(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    rows = [(ctx.topic(t["topic"]), t["count"]) for t in data["topics"]]
    response = partition_calls.delete_partitions(
        ctx.conn(),
        rows,
        delay_ms=int64(data.get("delay_ms", "0")),
        immediate=data.get("immediate", False),
        timeout_ms=data.get("timeout_ms", 30_000),
        version=data.get("version"),
    )
    exp = Expectations()
    expect = data.get("expect", {})
    if "error" in expect:
        exp.error(f"{path}.expect.error", error_code(expect["error"]), response.error_code)
    answers: dict[str, list[DeletePartitionsTopicResult]] = {}
    for result in response.responses:
        answers.setdefault(result.name, []).append(result)
    for name in dict.fromkeys(name for name, _ in rows):
        count = len(answers.get(name, ()))
        if count != 1:
            exp.equal(f"{path}.topics ({ctx.symbol(name)})", "one result", f"{count} results")
    for index, entry in enumerate(expect.get("topics", ())):
        found = answers.get(ctx.topic(entry["topic"]))
        where = f"{path}.expect.topics[{index}]"
        if not found:
            exp.missing(where, f"a result for topic {entry['topic']}")
        else:
            _judge_topic(exp, where, entry, found[0])
    return exp.mismatches


def _judge_topic(
    exp: Expectations, path: str, entry: Mapping[str, Any], got: DeletePartitionsTopicResult
) -> None:
    if "error" in entry:
        exp.error(f"{path}.error", error_code(entry["error"]), got.error_code)
    if "partitions" not in entry:
        return
    wanted = [(p["partition"], p["status"]) for p in entry["partitions"]]
    seen = [(p.partition_index, p.status_code) for p in got.partitions]
    if not exp.equal(f"{path}.partitions", wanted, seen):
        return
    for index, (want, answer) in enumerate(zip(entry["partitions"], got.partitions, strict=True)):
        if "error" in want:
            exp.error(
                f"{path}.partitions[{index}].error", error_code(want["error"]), answer.error_code
            )


@op("create_partitions")
def create_partitions(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    topic = ctx.topic(data["topic"])
    response = partition_calls.create_partitions(
        ctx.conn(), topic, data["count"], version=data.get("version")
    )
    exp = Expectations()
    answers = [r for r in response.results if r.name == topic]
    if len(answers) != 1:
        exp.missing(path, f"one result for topic {data['topic']}")
        return exp.mismatches
    wanted = error_code(data.get("expect", {}).get("error", "NONE"))
    exp.error(f"{path}.expect.error", wanted, answers[0].error_code)
    return exp.mismatches


@op("metadata")
def metadata(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    topic = ctx.topic(data["topic"])
    response, canonical = partition_calls.metadata_exact(
        ctx.conn(), [topic], version=data.get("version")
    )
    exp = Expectations()
    expect = data.get("expect", {})
    where = f"{path}.expect"
    if "canonical" in expect:
        exp.equal(f"{where}.canonical", expect["canonical"], canonical)
    answers = [t for t in response.topics if t.name == topic]
    if len(answers) != 1:
        exp.missing(path, f"one entry for topic {data['topic']}")
        return exp.mismatches
    _judge_metadata_topic(exp, where, expect, answers[0], ctx.roles)
    return exp.mismatches


def _judge_metadata_topic(
    exp: Expectations,
    where: str,
    expect: Mapping[str, Any],
    got: MetadataResponseTopic,
    roles: Mapping[str, int],
) -> None:
    if "error" in expect:
        exp.error(f"{where}.error", error_code(expect["error"]), got.error_code)
    if "partition_indexes" in expect:
        listed = [p.partition_index for p in got.partitions]
        exp.equal(f"{where}.partition_indexes", list(expect["partition_indexes"]), listed)
    by_index = {p.partition_index: p for p in got.partitions}
    for index, entry in enumerate(expect.get("partitions", ())):
        here = f"{where}.partitions[{index}]"
        partition = by_index.get(entry["partition"])
        if partition is None:
            exp.missing(here, f"partition {entry['partition']} listed")
            continue
        if "error" in entry:
            exp.error(f"{here}.error", error_code(entry["error"]), partition.error_code)
        for field in ("leader_id", "mode"):
            if field in entry:
                exp.equal(f"{here}.{field}", entry[field], getattr(partition, field))
        if "isr" in entry:
            named = {node: role for role, node in roles.items()}
            isr = sorted(named.get(n, str(n)) for n in partition.isr_nodes)
            exp.equal(f"{here}.isr", sorted(entry["isr"]), isr)


@op("describe_broker_configs")
def describe_broker_configs(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    conn = ctx.conn()
    brokers = calls.metadata(conn, []).brokers
    exp = Expectations()
    if not brokers:
        exp.missing(path, "a broker in Metadata")
        return exp.mismatches
    names: Sequence[str] | None = data.get("names")
    response = partition_calls.describe_broker_configs(
        conn, brokers[0].node_id, names, version=data.get("version")
    )
    expect = data.get("expect", {})
    if len(response.results) != 1:
        exp.missing(path, "one result for the broker")
        return exp.mismatches
    (got,) = response.results
    wanted = error_code(expect.get("error", "NONE"))
    exp.error(f"{path}.expect.error", wanted, got.error_code)
    if got.error_code != ErrorCode.NONE:
        return exp.mismatches
    entries = {c.name: c for c in got.configs}
    for name, value in expect.get("configs", {}).items():
        config = entries.get(name)
        exp.equal(
            f"{path}.expect.configs.{name}", value, ABSENT if config is None else config.value
        )
    for name, flag in expect.get("read_only", {}).items():
        config = entries.get(name)
        exp.equal(
            f"{path}.expect.read_only.{name}",
            flag,
            ABSENT if config is None else config.read_only,
        )
    return exp.mismatches
