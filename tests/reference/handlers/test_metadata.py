"""Metadata against Kafka 4.0's answers in the golden wire recording, and its rules.

Golden responses are compared field by field except topic ids (random per
cluster) and throttle times; the broker is configured like the recorded one
(node 1, advertised 127.0.0.1:19092, the recorded cluster id).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseTopic,
)
from lethe_formats.protocol.schema import ZERO_UUID, Struct
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.handlers.metadata import to_protocol_uuid
from lethe_reference.protocol.loopback import LoopbackClient

WIRE = fixtures_root() / "golden" / "wire"
CASE = json.loads((WIRE / "case.json").read_text())
FRAMES = [json.loads(line) for line in (WIRE / "frames.jsonl").read_text().splitlines()]
TOPIC_OPERATIONS = 3576  # Kafka 4.0's answer in exchange #0223 (no authorizer)


def golden_broker(tmp_path: Path, **static: str) -> Broker:
    settings = {k: v for k, v in CASE["broker"]["settings"].items() if k != "log.dirs"}
    broker = Broker(
        tmp_path,
        config=BrokerConfig({**settings, **static}),
        clock=ManualClock(1_795_289_550_000),
        host="127.0.0.1",
        port=19092,
        cluster_id=CASE["broker"]["cluster_id"],
        durable=False,
    )
    broker.startup()
    return broker


def exchange(seq: int) -> tuple[dict[str, Any], dict[str, Any]]:
    req = next(f for f in FRAMES if f["seq"] == seq)
    resp = next(
        f
        for f in FRAMES
        if f["dir"] == "response"
        and (f["conn"], f["correlation_id"], f["api_key"])
        == (req["conn"], req["correlation_id"], req["api_key"])
    )
    return req, resp


def without_ids(value: Any) -> Any:
    """``value`` with every topic_id zeroed and throttle_time_ms 0."""
    if isinstance(value, tuple):
        return tuple(without_ids(v) for v in value)
    if not isinstance(value, Struct):
        return value
    changes = {}
    for field in dataclasses.fields(value):
        item = getattr(value, field.name)
        if field.name == "topic_id":
            changes[field.name] = ZERO_UUID
        elif field.name == "throttle_time_ms":
            changes[field.name] = 0
        else:
            changes[field.name] = without_ids(item)
    return dataclasses.replace(value, **changes)


def replay(broker: Broker, seq: int) -> tuple[Any, Any]:
    req, resp = exchange(seq)
    client = LoopbackClient(broker)
    expect = (req["correlation_id"], req["api_key"], req["api_version"])
    client.send_raw(bytes.fromhex(req["hex"]), expect=expect)
    ((_, ours),) = client.responses()
    _, theirs = decode_response(req["api_key"], req["api_version"], bytes.fromhex(resp["hex"])[4:])
    return ours, theirs


@pytest.mark.parametrize(
    "seq",
    [3, 15, 48, 143, 223, 231],
    ids=["brokers-only", "rd-producer", "rd-consumer", "kpy-producer", "authz-ops", "kpy-kv"],
)
def test_golden_metadata_exchanges(tmp_path: Path, seq: int) -> None:
    broker = golden_broker(tmp_path)
    for name in ("wire-rd-events", "wire-kp-events", "wire-kp-kv"):
        broker.create_topic(name, 1)
    ours, theirs = replay(broker, seq)
    assert without_ids(ours) == without_ids(theirs)
    for mine in ours.topics:
        assert mine.topic_id == to_protocol_uuid(broker.metadata.get(mine.name).topic_id)


def metadata(broker: Broker, version: int = 12, **fields: Any) -> MetadataResponse:
    response = LoopbackClient(broker).request(MetadataRequest(**fields), version)
    assert isinstance(response, MetadataResponse)
    return response


def named(*names: str) -> tuple[MetadataRequestTopic, ...]:
    return tuple(MetadataRequestTopic(name=n) for n in names)


def test_null_topics_lists_every_topic_with_internal_ones_flagged(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("b", 2)
    broker.create_topic("__consumer_offsets", 1, {"cleanup.policy": "compact"})
    topics = metadata(broker, topics=None).topics
    assert [(t.name, t.is_internal, len(t.partitions)) for t in topics] == [
        ("__consumer_offsets", True, 1),
        ("b", False, 2),
    ]


def test_v0_empty_array_means_all_topics_and_later_versions_none(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("b", 1)
    assert [t.name for t in metadata(broker, 0, topics=()).topics] == ["b"]
    assert metadata(broker, 1, topics=()).topics == ()


def test_unknown_topic_without_auto_creation(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    topics = metadata(broker, topics=named("nope", "bad name"), allow_auto_topic_creation=False)
    assert [(t.name, t.error_code, t.partitions, t.topic_id) for t in topics.topics] == [
        ("nope", 3, (), ZERO_UUID),
        ("bad name", 17, (), ZERO_UUID),
    ]
    assert "nope" not in broker.metadata


def test_auto_creation_answers_unknown_first_and_creates_with_num_partitions(tmp_path: Path):
    broker = golden_broker(tmp_path, **{"num.partitions": "3"})
    first = metadata(broker, topics=named("auto"), allow_auto_topic_creation=True).topics
    assert [(t.name, t.error_code, t.partitions) for t in first] == [("auto", 3, ())]
    second = metadata(broker, topics=named("auto"), allow_auto_topic_creation=True).topics
    assert (second[0].error_code, len(second[0].partitions)) == (0, 3)
    assert broker.log("auto", 2) is not None


def test_auto_creation_disabled_by_the_broker(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path, **{"auto.create.topics.enable": "false"})
    metadata(broker, topics=named("auto"), allow_auto_topic_creation=True)
    assert "auto" not in broker.metadata


def test_auto_creation_of_an_illegal_name_is_invalid_topic(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    topics = metadata(broker, topics=named("a/b"), allow_auto_topic_creation=True).topics
    assert (topics[0].error_code, topics[0].is_internal) == (17, False)


def test_consumer_offsets_auto_created_with_the_group_coordinator_settings(tmp_path: Path):
    broker = golden_broker(tmp_path, **{"offsets.topic.num.partitions": "4"})
    first = metadata(broker, topics=named("__consumer_offsets")).topics[0]
    assert (first.error_code, first.is_internal) == (3, True)
    info = broker.metadata.get("__consumer_offsets")
    assert info is not None and info.partitions == 4
    assert dict(info.configs) == {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "segment.bytes": "104857600",
    }


def test_topic_ids_from_v12(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    info = broker.create_topic("t", 1)
    unknown = uuid.uuid4()
    request = (MetadataRequestTopic(topic_id=to_protocol_uuid(info.topic_id), name=None),)
    request += (MetadataRequestTopic(topic_id=unknown, name=None),)
    topics = metadata(broker, 12, topics=request).topics
    assert topics[0] == MetadataResponseTopic(error_code=100, name=None, topic_id=unknown)
    assert (topics[1].name, topics[1].error_code) == ("t", 0)


def test_topic_id_before_v12_is_an_invalid_request_for_every_topic(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    some_id = uuid.uuid4()
    response = metadata(broker, 11, topics=(MetadataRequestTopic(topic_id=some_id, name="x"),))
    assert response.brokers == ()
    assert [(t.name, t.error_code, t.topic_id) for t in response.topics] == [("x", 42, some_id)]


def test_duplicate_names_are_answered_once(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    assert [t.name for t in metadata(broker, topics=named("t", "t")).topics] == ["t"]


def test_authorized_operations_only_when_asked(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    plain = metadata(broker, 10, topics=named("t"))
    assert plain.topics[0].topic_authorized_operations == -(2**31)
    assert plain.cluster_authorized_operations == -(2**31)
    asked = metadata(
        broker,
        10,
        topics=named("t"),
        include_topic_authorized_operations=True,
        include_cluster_authorized_operations=True,
    )
    assert asked.topics[0].topic_authorized_operations == TOPIC_OPERATIONS
    assert asked.cluster_authorized_operations == 8096


@pytest.mark.parametrize("version", range(14))
def test_every_version_answers_brokers_and_partitions(tmp_path: Path, version: int) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 2)
    topics = None if version else ()
    response = metadata(broker, version, topics=topics)
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(1, "127.0.0.1", 19092)]
    (topic,) = response.topics
    assert [
        (p.partition_index, p.leader_id, p.replica_nodes, p.isr_nodes) for p in topic.partitions
    ] == [
        (0, 1, (1,), (1,)),
        (1, 1, (1,), (1,)),
    ]
