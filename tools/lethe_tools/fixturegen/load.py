"""Read a spec file: JSON -> schema check -> rule check -> resolved :mod:`.spec` values.

Two layers of checking, both reported as :class:`~.spec.SpecError` naming the
file and the JSON path (``$.topics[0].partitions[0].batches[2].codec``):

1. The JSON Schema (``fixtures/schema/log-spec.schema.json``, draft 2020-12,
   checked with ``jsonschema``): shapes, types, enums, int64 strings. All
   schema errors are collected; the first (in document order) is raised and
   the rest are attached as ``SpecError.others``.
2. Rules that need context (:mod:`.rules`, and partition/topic checks here): offsets that
   go backwards, features a magic does not have (headers or zstd below v2,
   timestamps in v0), a control batch with records, a KIP-87 flag on a record
   that has a value, int64 strings out of range.

Resolution: a batch without ``base_offset`` starts at the previous batch's
next offset; ``offset_deltas`` default to 0..n-1 and ``last_offset_delta`` to
the last of them; producer fields default to -1 (none) and the partition
leader epoch to 0 (what a broker at epoch 0 stamps).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root

from lethe_tools.fixturegen import rules
from lethe_tools.fixturegen.spec import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_SEGMENT_BYTES,
    CheckpointMode,
    CheckpointSpec,
    CleanupPolicy,
    EpochCheckpointSpec,
    EpochEntry,
    LogDirSpec,
    MetaPropertiesSpec,
    OffsetEntry,
    PartitionSpec,
    SpecError,
    TopicSpec,
)

__all__ = ["load_spec", "parse_spec", "schema_path"]

Json = Mapping[str, Any]


def schema_path() -> Path:
    return fixtures_root() / "schema" / "log-spec.schema.json"


@functools.cache
def _validator() -> Any:
    """The schema's validator; jsonschema is imported here so that the rest of the
    ``lethe`` CLI (which imports every command module) starts without it."""
    import jsonschema  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_spec(path: Path) -> LogDirSpec:
    """Read, check and resolve the spec file at ``path``."""
    file = str(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SpecError(f"cannot read: {error.strerror}", file=file) from None
    except UnicodeDecodeError as error:
        raise SpecError(f"not UTF-8 ({error.reason} at byte {error.start})", file=file) from None
    except json.JSONDecodeError as error:
        message = f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        raise SpecError(message, file=file) from None
    spec = parse_spec(document, file=file)
    if spec.name != path.stem:
        raise SpecError(
            f"name {spec.name!r} differs from the file name {path.stem!r}", file=file, path="$.name"
        )
    return spec


def parse_spec(document: object, *, file: str) -> LogDirSpec:
    """Check ``document`` (parsed JSON) and resolve it; ``file`` is used in errors."""
    _check_schema(document, file)
    assert isinstance(document, Mapping)
    ctx = rules.Context(file)
    topics = tuple(_topic(ctx, t, f"$.topics[{i}]") for i, t in enumerate(document["topics"]))
    _check_unique_topics(ctx, topics)
    checkpoints = {
        name: _checkpoint(ctx, node, f"$.checkpoints['{name}']")
        for name, node in sorted(document.get("checkpoints", {}).items())
    }
    shutdown = document.get("clean_shutdown")
    return LogDirSpec(
        name=document["name"],
        description=document["description"],
        file=file,
        meta_properties=_meta(ctx, document.get("meta_properties")),
        clean_shutdown_broker_epoch=(
            None if shutdown is None else ctx.int64(shutdown["broker_epoch"], "$.clean_shutdown")
        ),
        checkpoints=checkpoints,
        topics=topics,
    )


def _check_schema(document: object, file: str) -> None:
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(map(str, e.path)))
    if not errors:
        return
    found = [SpecError(_schema_message(e), file=file, path=e.json_path) for e in errors]
    first = found[0]
    raise SpecError(first.message, file=file, path=first.path, others=tuple(found[1:]))


def _schema_message(error: Any) -> str:
    """jsonschema's message, made specific where a ``oneOf`` hides the real fault.

    A ``oneOf`` that failed says only "not valid under any of the given
    schemas"; say instead what was expected (the schema's ``title``), or the
    failure of the branch whose type did match (e.g. a string failing the
    int64 pattern). The schema's ``title`` states the expectation.
    """
    if error.validator != "oneOf" or not error.context:
        return str(error.message)
    title = error.schema.get("title") if isinstance(error.schema, dict) else None
    if title:
        return f"{error.instance!r} is not valid here: expected {title}"
    same_type = [e for e in error.context if e.validator != "type"]
    if same_type:
        from jsonschema.exceptions import (  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
            best_match,
        )

        return str(best_match(same_type).message)
    return str(error.message)


def _check_unique_topics(ctx: rules.Context, topics: tuple[TopicSpec, ...]) -> None:
    seen: set[str] = set()
    for index, topic in enumerate(topics):
        if topic.name in seen:
            ctx.fail(f"topic {topic.name!r} appears twice", f"$.topics[{index}].name")
        seen.add(topic.name)


def _meta(ctx: rules.Context, node: Json | None) -> MetaPropertiesSpec | None:
    if node is None:
        return None
    return MetaPropertiesSpec(
        version=node.get("version", 1),
        cluster_id=node["cluster_id"],
        node_id=node["node_id"],
        directory_id=node.get("directory_id"),
        comment_date=node["comment_date"],
    )


def _checkpoint(ctx: rules.Context, node: Json, path: str) -> CheckpointSpec:
    if "derive" in node:
        return CheckpointSpec(CheckpointMode.DERIVE)
    if "empty_file" in node:
        return CheckpointSpec(CheckpointMode.EMPTY_FILE)
    entries = tuple(
        OffsetEntry(e["topic"], e["partition"], ctx.int64(e["offset"], f"{path}.entries[{i}]"))
        for i, e in enumerate(node["entries"])
    )
    return CheckpointSpec(CheckpointMode.ENTRIES, entries)


def _epoch_checkpoint(ctx: rules.Context, node: Json | None, path: str) -> EpochCheckpointSpec:
    if node is None or "derive" in node:
        return EpochCheckpointSpec(CheckpointMode.DERIVE)
    if "empty_file" in node:
        return EpochCheckpointSpec(CheckpointMode.EMPTY_FILE)
    entries = tuple(
        EpochEntry(e["epoch"], ctx.int64(e["start_offset"], f"{path}.entries[{i}].start_offset"))
        for i, e in enumerate(node["entries"])
    )
    return EpochCheckpointSpec(CheckpointMode.ENTRIES, entries)


def _topic(ctx: rules.Context, node: Json, path: str) -> TopicSpec:
    partitions = tuple(
        _partition(ctx, p, f"{path}.partitions[{i}]") for i, p in enumerate(node["partitions"])
    )
    seen: set[int] = set()
    for index, partition in enumerate(partitions):
        if partition.partition in seen:
            ctx.fail(
                f"partition {partition.partition} appears twice", f"{path}.partitions[{index}]"
            )
        seen.add(partition.partition)
    policy = CleanupPolicy(node.get("cleanup_policy", "delete"))
    if policy.compacts:
        for partition in partitions:
            rules.check_compacted_keys(ctx, partition.batches)
    return TopicSpec(
        name=node["name"],
        topic_id=node.get("topic_id"),
        cleanup_policy=policy,
        segment_bytes=node.get("segment_bytes", DEFAULT_SEGMENT_BYTES),
        index_interval_bytes=node.get("index_interval_bytes", DEFAULT_INDEX_INTERVAL_BYTES),
        partitions=partitions,
    )


def _partition(ctx: rules.Context, node: Json, path: str) -> PartitionSpec:
    batch_nodes = node["batches"]
    first_batch_offset = None
    if batch_nodes and "base_offset" in batch_nodes[0]:
        first_batch_offset = ctx.int64(batch_nodes[0]["base_offset"], f"{path}.batches[0]")
    start = (
        ctx.int64(node["start_offset"], f"{path}.start_offset")
        if "start_offset" in node
        else (first_batch_offset if first_batch_offset is not None else 0)
    )
    if start < 0:
        ctx.fail("start_offset must not be negative", f"{path}.start_offset")
    batches = []
    next_offset = start
    for index, batch_node in enumerate(batch_nodes):
        batch = rules.resolve_batch(ctx, batch_node, f"{path}.batches[{index}]", next_offset)
        if index == 0 and batch.roll:
            ctx.fail("the first batch cannot roll; use start_offset", f"{path}.batches[0].roll")
        batches.append(batch)
        next_offset = batch.last_offset + 1
    log_end = next_offset
    log_start = start
    if "log_start_offset" in node:
        log_start = ctx.int64(node["log_start_offset"], f"{path}.log_start_offset")
        if not start <= log_start <= log_end:
            ctx.fail(
                f"log_start_offset {log_start} is outside [{start}, {log_end}] "
                "(first segment base offset, log end offset)",
                f"{path}.log_start_offset",
            )
    return PartitionSpec(
        partition=node["partition"],
        start_offset=start,
        log_start_offset=log_start,
        leader_epoch_checkpoint=_epoch_checkpoint(
            ctx, node.get("leader-epoch-checkpoint"), f"{path}['leader-epoch-checkpoint']"
        ),
        batches=tuple(batches),
        path=path,
    )
