"""Ops that send one request and judge its answer: produce, delete_records,
list_offsets, fetch, commit_offsets, fetch_offsets, alter_configs, describe_configs.

Each op builds its request from the step (topic symbols resolved through the
run context, int64 strings parsed), sends it with ``client.calls`` at the
negotiated version or the step's ``version``, and compares the fields the
step's ``expect`` lists. A produce step with no ``expect.error`` expects NONE:
a batch that did not land would only make later steps fail for the wrong
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

from lethe_formats.errors import TruncatedError
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import Compression, Header
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log

from lethe_conformance.client import calls
from lethe_conformance.client.batches import (
    FetchedRecord,
    as_produced,
    build_records,
    fixture_entries,
    split_entries,
    visible_records,
)
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import ABSENT, Expectations, RunContext
from lethe_conformance.scenarios.model import ReplaySpec, error_code, int64, to_bytes
from lethe_conformance.scenarios.ops.batches import FoundBatch, judge_batches
from lethe_conformance.scenarios.ops.partitions import (
    collect,
    judge,
    judge_base_offsets,
    judge_committed,
    produced,
    requested,
)
from lethe_conformance.scenarios.ops.registry import op
from lethe_conformance.scenarios.ops.transactions import produce_in_transaction

__all__ = ["SPECIAL_TIMESTAMPS", "produce_payloads", "replay_entries"]

#: ListOffsets special timestamps (kafka-facts 2.1).
SPECIAL_TIMESTAMPS: Mapping[str, int] = {
    "latest": -1,
    "earliest": -2,
    "max_timestamp": -3,
    "earliest_local": -4,
    "latest_tiered": -5,
}
_ISOLATION = {"read_uncommitted": 0, "read_committed": 1}
_CODECS = {
    "none": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}


def replay_entries(spec: ReplaySpec) -> list[bytes]:
    """The fixture batches a replay names, as a producer sends them."""
    entries = fixture_entries(fixtures_root() / spec.log / spec.partition_dir)
    end = None if spec.count is None else spec.first + spec.count
    return [as_produced(entry) for entry in entries[spec.first : end]]


def produce_payloads(data: Mapping[str, Any], value: Callable[[Any], int] = int64) -> list[bytes]:
    """One records blob per Produce request: built batches, or replayed fixture batches.

    ``value`` resolves a record's timestamp (``RunContext.value``: a captured broker
    time plus an offset is how a virtual-clock step places a record at an exact age).
    """
    if "replay" in data:
        return replay_entries(ReplaySpec.from_json(data["replay"]))
    return [_batch(batch, value) for batch in data["batches"]]


def _batch(batch: Mapping[str, Any], value: Callable[[Any], int]) -> bytes:
    """A built batch; with ``producer`` an idempotent one (producer id, epoch, base sequence)."""
    records = [_record(r, value) for r in batch["records"]]
    codec = _CODECS[batch.get("compression", "none")]
    producer = batch.get("producer")
    if producer is None:
        return build_records(records, compression=codec)
    return build_batch(
        records,
        base_offset=0,
        compression=codec,
        producer_id=int64(producer["producer_id"]),
        producer_epoch=producer["producer_epoch"],
        base_sequence=producer["base_sequence"],
    )


def _record(data: Mapping[str, Any], value: Callable[[Any], int]) -> RecordSpec:
    headers = tuple(
        Header(h["key"].encode(), to_bytes(h["value"])) for h in data.get("headers", ())
    )
    return RecordSpec(
        to_bytes(data["key"]),
        to_bytes(data["value"]),
        headers,
        value(data["timestamp"]),
        attributes=data.get("attributes", 0),
    )


@op("produce")
def produce(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    if "transaction" in data:  # the producer's id, epoch and sequences (transactions.py)
        batches = [
            ([_record(r, ctx.value) for r in b["records"]], _CODECS[b.get("compression", "none")])
            for b in data["batches"]
        ]
        return produce_in_transaction(ctx, data, path, batches)
    topic, partition = ctx.topic(data["topic"]), data["partition"]
    expect = data.get("expect", {})
    exp = Expectations()
    offsets: list[int] = []
    wanted = error_code(expect.get("error", "NONE"))
    for index, payload in enumerate(produce_payloads(data, ctx.value)):
        response = calls.produce(
            ctx.conn(),
            topic,
            partition,
            payload,
            acks=data.get("acks", -1),
            version=data.get("version"),
        )
        answer = produced(exp, path, index, wanted, response)
        if answer is None:
            continue
        offsets.append(answer.base_offset)
        for name in data.get("capture", {}).values():
            ctx.capture(name, answer.log_append_time_ms)
    judge_base_offsets(exp, path, expect, offsets)
    return exp.mismatches


@op("delete_records")
def delete_records(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    rows = [(ctx.topic(p["topic"]), p["partition"], int64(p["offset"])) for p in data["partitions"]]
    response = calls.delete_records(
        ctx.conn(), rows, timeout_ms=data.get("timeout_ms", 30_000), version=data.get("version")
    )
    exp = Expectations()
    results = collect(
        exp,
        path,
        (
            (t.name, p.partition_index, {"error": p.error_code, "low_watermark": p.low_watermark})
            for t in response.topics
            for p in t.partitions
        ),
    )
    asked = requested(ctx, data["partitions"])
    return judge(ctx, exp, path, asked, results, data.get("expect", {}))


@op("list_offsets")
def list_offsets(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    rows = [
        (ctx.topic(p["topic"]), p["partition"], _timestamp(p["timestamp"]))
        for p in data["partitions"]
    ]
    response = calls.list_offsets(
        ctx.conn(),
        rows,
        isolation_level=_ISOLATION[data.get("isolation_level", "read_uncommitted")],
        version=data.get("version"),
    )
    exp = Expectations()
    results = collect(
        exp,
        path,
        (
            (
                t.name,
                p.partition_index,
                {
                    "error": p.error_code,
                    "offset": p.offset,
                    "timestamp": p.timestamp,
                    "leader_epoch": p.leader_epoch,
                },
            )
            for t in response.topics
            for p in t.partitions
        ),
    )
    asked = requested(ctx, data["partitions"])
    return judge(ctx, exp, path, asked, results, data.get("expect", {}))


def _timestamp(value: str) -> int:
    return SPECIAL_TIMESTAMPS[value] if value in SPECIAL_TIMESTAMPS else int64(value)


@op("fetch")
def fetch(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    topic, partition, offset = ctx.topic(data["topic"]), data["partition"], int64(data["offset"])
    isolation = _ISOLATION[data.get("isolation_level", "read_uncommitted")]
    response = calls.fetch(
        ctx.conn(),
        topic,
        partition,
        offset,
        max_bytes=data.get("max_bytes", 1 << 20),
        isolation_level=isolation,
        log_start_offset=int64(data.get("log_start_offset", "-1")),
        version=data.get("version"),
        tombstone_flag_aware=data.get("tombstone_flag_aware", False),
    )
    exp = Expectations()
    answers = [
        p for t in response.responses for p in t.partitions if p.partition_index == partition
    ]
    if len(answers) != 1:
        exp.missing(path, f"one result for {data['topic']}-{partition}")
        return exp.mismatches
    got = answers[0]
    records = None if got.records is None else bytes(got.records)  # decoded: already bytes
    expect = data.get("expect", {})
    where = f"{path}.expect"
    if "error" in expect:
        exp.error(f"{where}.error", error_code(expect["error"]), got.error_code)
    for field in ("high_watermark", "last_stable_offset", "log_start_offset"):
        if field in expect:
            exp.equal(f"{where}.{field}", int64(expect[field]), getattr(got, field))
    if "first_batch_offset" in expect:
        entries = split_entries(records or b"")
        first = int.from_bytes(entries[0][:8], "big", signed=True) if entries else None
        exp.equal(f"{where}.first_batch_offset", int64(expect["first_batch_offset"]), first)
    if "records" in expect:
        aborted = None  # read_uncommitted: every data record is seen
        if isolation == _ISOLATION["read_committed"]:
            aborted = [(a.producer_id, a.first_offset) for a in got.aborted_transactions or ()]
        seen = visible_records(records, offset, aborted)
        _judge_records(ctx, exp, f"{where}.records", expect["records"], seen)
    if "batches" in expect:
        judge_batches(ctx, exp, f"{where}.batches", expect["batches"], _fetched(records))
    return exp.mismatches


def _fetched(data: bytes | None) -> list[FoundBatch]:
    """The whole entries of a Fetch records blob (a torn last one is left out)."""
    found: list[FoundBatch] = []
    with suppress(TruncatedError):  # cut at max_bytes: consumers skip it too
        found.extend(FoundBatch(entry) for entry in read_log(data or b""))
    return found


def _judge_records(
    ctx: RunContext,
    exp: Expectations,
    path: str,
    wanted: list[Mapping[str, Any]],
    seen: list[FetchedRecord],
) -> None:
    if not exp.equal(
        f"{path} (offsets)", [int64(r["offset"]) for r in wanted], [r.offset for r in seen]
    ):
        return
    for index, (want, record) in enumerate(zip(wanted, seen, strict=True)):
        for field in ("key", "value"):
            if field in want:
                exp.equal(f"{path}[{index}].{field}", to_bytes(want[field]), getattr(record, field))
        if "timestamp" in want:
            ctx.judge_int(exp, f"{path}[{index}].timestamp", want["timestamp"], record.timestamp)
        if "attributes" in want:
            exp.equal(f"{path}[{index}].attributes", want["attributes"], record.attributes)
        if "headers" in want:
            headers = [(h["key"].encode(), to_bytes(h["value"])) for h in want["headers"]]
            exp.equal(
                f"{path}[{index}].headers", headers, [(h.key, h.value) for h in record.headers]
            )


@op("commit_offsets")
def commit_offsets(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    rows = [(ctx.topic(p["topic"]), p["partition"], int64(p["offset"])) for p in data["partitions"]]
    response = calls.offset_commit(
        ctx.conn(), ctx.group(data["group"]), rows, version=data.get("version")
    )
    return judge_committed(ctx, Expectations(), path, response, data)


@op("fetch_offsets")
def fetch_offsets(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    asked = requested(ctx, data["partitions"])
    response = calls.offset_fetch(
        ctx.conn(), ctx.group(data["group"]), asked, version=data.get("version")
    )
    rows = []
    if response.groups:
        for group in response.groups:
            for t in group.topics:
                for p in t.partitions:
                    code = group.error_code or p.error_code
                    rows.append(
                        (t.name, p.partition_index, {"error": code, "offset": p.committed_offset})
                    )
    else:
        for t in response.topics:
            for p in t.partitions:
                code = response.error_code or p.error_code
                rows.append(
                    (t.name, p.partition_index, {"error": code, "offset": p.committed_offset})
                )
    exp = Expectations()
    results = collect(exp, path, rows)
    return judge(ctx, exp, path, asked, results, data.get("expect", {}))


@op("find_coordinator")
def find_coordinator(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    code, _ = calls.find_coordinator(ctx.conn(), ctx.group(data["group"]))
    exp = Expectations()
    exp.error(f"{path}.expect.error", error_code(data.get("expect", {}).get("error", "NONE")), code)
    return exp.mismatches


@op("api_versions")
def api_versions(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    advertised = ctx.conn().versions
    exp = Expectations()
    for index, api in enumerate(data["expect"].get("apis", ())):
        where = f"{path}.expect.apis[{index}]"
        got = advertised.get(api["api_key"])
        if api.get("absent"):
            exp.equal(f"{where}.absent", None, got)
            continue
        if got is None:
            exp.missing(where, f"API key {api['api_key']} advertised")
            continue
        for field, value in (("min_version", got[0]), ("max_version", got[1])):
            if field in api:
                exp.equal(f"{where}.{field}", api[field], value)
    return exp.mismatches


@op("alter_configs")
def alter_configs(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    topic = ctx.topic(data["topic"])
    response = calls.incremental_alter_configs(
        ctx.conn(), calls.RESOURCE_TOPIC, topic, data["configs"], version=data.get("version")
    )
    exp = Expectations()
    wanted = error_code(data.get("expect", {}).get("error", "NONE"))
    answers = [r for r in response.responses if r.resource_name == topic]
    if len(answers) != 1:
        exp.missing(path, f"one result for topic {data['topic']}")
    else:
        exp.error(f"{path}.expect.error", wanted, answers[0].error_code)
    return exp.mismatches


@op("describe_configs")
def describe_configs(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    """DescribeConfigs of the step's topic (``describe_broker_configs`` asks the broker's)."""
    name = ctx.topic(data["topic"])
    response = calls.describe_configs(
        ctx.conn(), calls.RESOURCE_TOPIC, name, data.get("names"), version=data.get("version")
    )
    exp = Expectations()
    expect = data.get("expect", {})
    answers = [r for r in response.results if r.resource_name == name]
    if len(answers) != 1:
        exp.missing(path, f"one result for topic {data['topic']}")
        return exp.mismatches
    got = answers[0]
    exp.error(f"{path}.expect.error", error_code(expect.get("error", "NONE")), got.error_code)
    values = {c.name: c.value for c in got.configs}
    for name, value in expect.get("configs", {}).items():
        exp.equal(f"{path}.expect.configs.{name}", value, values.get(name, ABSENT))
    return exp.mismatches
