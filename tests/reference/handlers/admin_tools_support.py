"""Kafka 4.0.0's admin tools against a real Kafka 4.0.0 broker (fixtures/golden/admin-tools):
the frames they exchanged and what they printed, and replaying their requests on lethe."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.envelope import (
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from lethe_formats.protocol.schema import ZERO_UUID, Struct
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.protocol.loopback import LoopbackClient
from partition_ops_support import produce

__all__ = [
    "FRAMES",
    "LEADERSHIP_QUOTAS",
    "OUTPUTS",
    "SCRAM_USERS",
    "exchanges",
    "gamma_world",
    "load_frames",
    "replay",
    "roundtrip_bytes",
    "stdout",
    "tool_broker",
    "without",
]

ADMIN_TOOLS = fixtures_root() / "golden" / "admin-tools" / "kafka"
#: leadership_quotas.py's recording (elections, reassignments, client quotas, ApiVersions)
LEADERSHIP_QUOTAS = fixtures_root() / "golden" / "admin-tools" / "leadership-quotas"
#: scram_users.py's recording (kafka-configs.sh on SCRAM users), then scram_probes.py's
SCRAM_USERS = fixtures_root() / "golden" / "admin-tools" / "scram-users"


def load_frames(folder: Path, *names: str) -> list[dict[str, Any]]:
    return [
        {**json.loads(line), "source": name}
        for name in names
        for line in (folder / name).read_text().splitlines()
    ]


#: the tools' frames (record.py), then lethe's client's OffsetForLeaderEpoch ones (epochs.py)
FRAMES: list[dict[str, Any]] = load_frames(ADMIN_TOOLS, "frames.jsonl", "epochs.jsonl")
OUTPUTS: list[dict[str, Any]] = json.loads((ADMIN_TOOLS / "outputs.json").read_text())


def stdout(step: str, outputs: list[dict[str, Any]] | None = None) -> str:
    """What the step's command printed against Kafka."""
    return next(o["stdout"] for o in outputs or OUTPUTS if o["step"] == step)


def exchanges(
    api_key: int, step: str | None = None, frames: list[dict[str, Any]] | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) frames of ``api_key``, in the order the tools sent them."""
    frames = FRAMES if frames is None else frames
    out = []
    for req in frames:
        if req["dir"] != "request" or req["api_key"] != api_key:
            continue
        if step is not None and req["step"] != step:
            continue
        resp = next(
            f
            for f in frames
            if f["dir"] == "response"
            and (f["source"], f["conn"], f["correlation_id"])
            == (req["source"], req["conn"], req["correlation_id"])
        )
        out.append((req, resp))
    return out


def replay(broker: Broker, req: dict[str, Any], resp: dict[str, Any]) -> tuple[Any, Any]:
    """lethe's answer to the recorded request bytes, and Kafka's recorded answer."""
    client = LoopbackClient(broker)
    client.send_raw(
        bytes.fromhex(req["hex"]),
        expect=(req["correlation_id"], req["api_key"], req["api_version"]),
    )
    ((_, ours),) = client.responses()
    _, theirs = decode_response(req["api_key"], req["api_version"], bytes.fromhex(resp["hex"])[4:])
    return ours, theirs


def without(value: Any, *names: str) -> Any:
    """``value`` with the named fields (at any depth) set to a neutral value: topic ids
    are random per cluster, sizes depend on timestamps and batching."""
    if isinstance(value, tuple):
        return tuple(without(v, *names) for v in value)
    if not isinstance(value, Struct):
        return value
    changes = {}
    for field in dataclasses.fields(value):
        item = getattr(value, field.name)
        if field.name in names:
            changes[field.name] = ZERO_UUID if field.name == "topic_id" else None
        else:
            changes[field.name] = without(item, *names)
    return dataclasses.replace(value, **changes)


def roundtrip_bytes(frame: dict[str, Any]) -> tuple[bytes, bytes]:
    """(recorded payload, lethe's re-encoding of what it decoded from it)."""
    payload = bytes.fromhex(frame["hex"])[4:]
    if frame["dir"] == "request":
        header, body = decode_request(payload)
        return payload, encode_request(header, body)
    header, body = decode_response(frame["api_key"], frame["api_version"], payload)
    return payload, encode_response(frame["api_version"], header, body)


def tool_broker(tmp_path: Path) -> Broker:
    """A fresh single node, as the recorded Kafka was (node 1)."""
    broker = Broker(
        tmp_path, config=BrokerConfig({}), clock=ManualClock(1_795_289_550_000), durable=False
    )
    broker.startup()
    return broker


#: how the console producer's keys k00..k39 fell on gamma's partitions (Kafka's sizes:
#: 1501 = 19 x 79 bytes, 1659 = 21 x 79; its one idempotent producer, id 0 epoch 0,
#: last sequence 18 on partition 0)
GAMMA_BATCHES = {0: 19, 1: 21}
NOW = 1_795_289_550_000  # tool_broker's clock: time retention keeps the records


def gamma_world(tmp_path: Path) -> Broker:
    """The recorded actions up to the DeleteRecords: alpha, beta, and gamma
    (``segment.bytes=500``) with its 40 one-record batches from producer 0."""
    broker = tool_broker(tmp_path)
    broker.create_topic("alpha", 3)
    broker.create_topic("beta", 2, {"retention.ms": "86400000"})
    broker.create_topic("gamma", 2, {"segment.bytes": "500"})
    key = 0
    for partition, count in GAMMA_BATCHES.items():
        for sequence in range(count):
            spec = RecordSpec(f"k{key:02d}".encode(), f"value-{key:02d}".encode(), (), NOW)
            batch = build_batch(
                [spec], base_offset=0, producer_id=0, producer_epoch=0, base_sequence=sequence
            )
            assert produce(broker, "gamma", partition, batch).error_code == 0
            key += 1
    return broker
