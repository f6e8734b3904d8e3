"""CreateTopics, DeleteTopics and CreatePartitions: Kafka 4.0's golden answers and its
controller's rules and messages (ReplicationControlManager, ControllerApis, kafka-facts 6)."""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from lethe_formats.protocol.messages.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
)
from lethe_formats.protocol.schema import ZERO_UUID, Struct
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.config.topic import EXTENSION_TOPIC_CONFIGS
from lethe_reference.handlers.metadata import to_protocol_uuid
from lethe_reference.protocol.loopback import LoopbackClient

WIRE = fixtures_root() / "golden" / "wire"
CASE = json.loads((WIRE / "case.json").read_text())
FRAMES = [json.loads(line) for line in (WIRE / "frames.jsonl").read_text().splitlines()]


def golden_broker(tmp_path: Path, **static: str) -> Broker:
    settings = {k: v for k, v in CASE["broker"]["settings"].items() if k != "log.dirs"}
    broker = Broker(
        tmp_path,
        config=BrokerConfig({**settings, **static}),
        clock=ManualClock(1_795_289_550_000),
        port=19092,
        cluster_id=CASE["broker"]["cluster_id"],
        durable=False,
    )
    broker.startup()
    return broker


def without_ids(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(without_ids(v) for v in value)
    if not isinstance(value, Struct):
        return value
    changes = {}
    for field in dataclasses.fields(value):
        item = getattr(value, field.name)
        if field.name in ("topic_id", "throttle_time_ms"):
            changes[field.name] = ZERO_UUID if field.name == "topic_id" else 0
        else:
            changes[field.name] = without_ids(item)
    return dataclasses.replace(value, **changes)


def without_extension_configs(response: CreateTopicsResponse) -> CreateTopicsResponse:
    """Our answer minus lethe's extension configs, which Kafka 4.0 does not have."""
    topics = tuple(
        dataclasses.replace(
            t, configs=tuple(c for c in t.configs if c.name not in EXTENSION_TOPIC_CONFIGS)
        )
        for t in response.topics
    )
    return dataclasses.replace(response, topics=topics)


def replay(broker: Broker, seq: int) -> tuple[Any, Any]:
    req = next(f for f in FRAMES if f["seq"] == seq)
    resp = next(
        f
        for f in FRAMES
        if f["dir"] == "response"
        and (f["conn"], f["correlation_id"], f["api_key"])
        == (req["conn"], req["correlation_id"], req["api_key"])
    )
    client = LoopbackClient(broker)
    expect = (req["correlation_id"], req["api_key"], req["api_version"])
    client.send_raw(bytes.fromhex(req["hex"]), expect=expect)
    ((_, ours),) = client.responses()
    _, theirs = decode_response(req["api_key"], req["api_version"], bytes.fromhex(resp["hex"])[4:])
    return ours, theirs


# --- CreateTopics -----------------------------------------------------------------------------


@pytest.mark.parametrize("seq", [8, 133], ids=["rdkafka-v4", "kafka-python-v7"])
def test_golden_create_topics(tmp_path: Path, seq: int) -> None:
    broker = golden_broker(tmp_path)
    ours, theirs = replay(broker, seq)
    assert without_ids(without_extension_configs(ours)) == without_ids(theirs)
    for result in ours.topics:
        info = broker.metadata.get(result.name)
        assert info is not None and broker.log(result.name, 0) is not None
        if seq == 133:
            assert result.topic_id == to_protocol_uuid(info.topic_id)
    assert dict(broker.metadata.get(ours.topics[1].name).configs) == {"cleanup.policy": "compact"}


def create(broker: Broker, *topics: CreatableTopic, version: int = 7, **kw: Any) -> list[Any]:
    response = LoopbackClient(broker).request(CreateTopicsRequest(topics=topics, **kw), version)
    assert isinstance(response, CreateTopicsResponse)
    return [(t.name, t.error_code, t.error_message) for t in response.topics]


def topic(name: str, partitions: int = 1, rf: int = 1, **configs: str | None) -> CreatableTopic:
    entries = tuple(CreatableTopicConfig(k.replace("_", "."), v) for k, v in configs.items())
    return CreatableTopic(name, partitions, rf, (), entries)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "the empty string is not allowed"),
        (".", "'.' is not allowed"),
        ("..", "'..' is not allowed"),
        ("a" * 250, f"the length of '{'a' * 250}' is longer than the max allowed length 249"),
        (
            "a b",
            "'a b' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'",
        ),
    ],
)
def test_illegal_names(tmp_path: Path, name: str, reason: str) -> None:
    broker = golden_broker(tmp_path)
    assert create(broker, topic(name)) == [(name, 17, f"Topic name is invalid: {reason}")]


def test_a_249_character_name_is_legal(tmp_path: Path) -> None:
    assert create(golden_broker(tmp_path), topic("a" * 249))[0][1] == 0


def test_existing_and_colliding_names(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("a_b", 1)
    assert create(broker, topic("a_b"), topic("a.b")) == [
        ("a_b", 36, "Topic 'a_b' already exists."),
        ("a.b", 17, "Topic 'a.b' collides with existing topic: a_b"),
    ]


def test_replication_factor_and_partition_count_rules(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    assert create(
        broker, topic("rf2", rf=2), topic("rf0", rf=0), topic("p0", 0), topic("pm2", -2)
    ) == [
        (
            "rf2",
            38,
            "Unable to replicate the partition 2 time(s): The target replication factor of 2 "
            "cannot be reached because only 1 broker(s) are registered.",
        ),
        ("rf0", 38, "Replication factor must be larger than 0, or -1 to use the default value."),
        ("p0", 37, "Number of partitions was set to an invalid non-positive value."),
        ("pm2", 37, "Number of partitions was set to an invalid non-positive value."),
    ]
    assert len(broker.metadata) == 0


def test_minus_one_takes_the_broker_defaults(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path, **{"num.partitions": "3"})
    response = LoopbackClient(broker).request(CreateTopicsRequest((topic("d", -1, -1),)), 7)
    assert isinstance(response, CreateTopicsResponse)
    (result,) = response.topics
    assert (result.error_code, result.num_partitions, result.replication_factor) == (0, 3, 1)


def test_configs_are_validated(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    results = create(
        broker,
        topic("n", retention_ms=None, segment_ms=None),
        topic("u", no_such_config="1"),
        topic("v", retention_ms="abc"),
    )
    assert results == [
        ("n", 40, "Null value not supported for topic configs: retention.ms,segment.ms"),
        ("u", 40, "Unknown topic config name: no.such.config"),
        ("v", 40, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ]


def test_duplicates_and_cluster_metadata_are_listed_last(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    results = create(broker, topic("x"), topic("ok"), topic("x"), topic("__cluster_metadata"))
    assert results == [
        ("ok", 0, None),
        ("x", 42, "Duplicate topic name."),
        ("__cluster_metadata", 42, "Creation of internal topic __cluster_metadata is prohibited."),
    ]
    assert "x" not in broker.metadata


def test_validate_only_creates_nothing_but_answers_in_full(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    response = LoopbackClient(broker).request(
        CreateTopicsRequest((topic("v", 4, cleanup_policy="compact"),), validate_only=True), 7
    )
    assert isinstance(response, CreateTopicsResponse)
    (result,) = response.topics
    assert (result.error_code, result.num_partitions, result.replication_factor) == (0, 4, 1)
    assert any(c.name == "cleanup.policy" and c.value == "compact" for c in result.configs or ())
    assert "v" not in broker.metadata
    assert not (tmp_path / "v-0").exists()


def test_manual_assignments(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    ok = CreatableTopic(
        "m", -1, -1, (CreatableReplicaAssignment(0, (1,)), CreatableReplicaAssignment(1, (1,)))
    )
    other = CreatableTopic("o", -1, -1, (CreatableReplicaAssignment(0, (2,)),))
    gap = CreatableTopic("g", -1, -1, (CreatableReplicaAssignment(1, (1,)),))
    rf = CreatableTopic("r", -1, 1, (CreatableReplicaAssignment(0, (1,)),))
    assert create(broker, ok, other, gap, rf) == [
        ("m", 0, None),
        (
            "o",
            39,
            "The manual partition assignment includes broker 2, but no such broker is registered.",
        ),
        ("g", 39, "partitions should be a consecutive 0-based integer sequence"),
        (
            "r",
            42,
            "A manual partition assignment was specified, but replication factor "
            "was not set to -1.",
        ),
    ]
    assert broker.metadata.get("m").partitions == 2


def test_a_request_needing_more_than_10000_records_fails_whole(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    # 10,000 partitions pass the per-request bound; 2 + 10,000 records do not fit
    results = create(broker, topic("small"), topic("huge", 9_999))
    message = "Unable to perform excessively large batch operation."
    assert results == [("small", 44, message), ("huge", 44, message)]
    assert len(broker.metadata) == 0


# --- DeleteTopics -----------------------------------------------------------------------------


def delete(broker: Broker, request: DeleteTopicsRequest, version: int) -> list[Any]:
    response = LoopbackClient(broker).request(request, version)
    assert isinstance(response, DeleteTopicsResponse)
    return [(r.name, r.topic_id, r.error_code, r.error_message) for r in response.responses]


def test_delete_by_name_renames_the_partition_dirs(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("gone", 2)
    results = delete(broker, DeleteTopicsRequest(topic_names=("gone", "nope")), 5)
    assert results == [
        ("nope", ZERO_UUID, 3, "This server does not host this topic-partition."),
        ("gone", ZERO_UUID, 0, None),
    ]
    assert "gone" not in broker.metadata
    names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("gone-"))
    assert len(names) == 2 and all(n.endswith("-delete") for n in names)


def test_delete_by_id_and_the_request_shape_errors(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    by_id = broker.create_topic("by-id", 1)
    by_name = broker.create_topic("by-name", 1)
    known = to_protocol_uuid(by_id.topic_id)
    unknown = uuid.uuid4()
    request = DeleteTopicsRequest(
        topics=(
            DeleteTopicState(None, ZERO_UUID),
            DeleteTopicState("both", unknown),
            DeleteTopicState("dup", ZERO_UUID),
            DeleteTopicState("dup", ZERO_UUID),
            DeleteTopicState(None, known),
            DeleteTopicState(None, unknown),
            DeleteTopicState("by-name", ZERO_UUID),
        )
    )
    assert delete(broker, request, 6) == [
        (None, ZERO_UUID, 42, "Neither topic name nor id were specified."),
        ("both", unknown, 42, "You may not specify both topic name and topic id."),
        ("dup", ZERO_UUID, 42, "Duplicate topic name."),
        (None, unknown, 100, "This server does not host this topic ID."),
        ("by-id", known, 0, None),
        ("by-name", to_protocol_uuid(by_name.topic_id), 0, None),
    ]
    assert len(broker.metadata) == 0


def test_a_name_that_maps_to_a_given_id_is_refused(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    info = broker.create_topic("t", 1)
    known = to_protocol_uuid(info.topic_id)
    request = DeleteTopicsRequest(topics=(DeleteTopicState(None, known), DeleteTopicState("t")))
    assert delete(broker, request, 6) == [
        ("t", known, 42, "The provided topic name maps to an ID that was already supplied."),
    ]
    assert "t" in broker.metadata


@pytest.mark.parametrize(("version", "code"), [(2, 42), (3, 73), (6, 73)])
def test_delete_topic_enable_false(tmp_path: Path, version: int, code: int) -> None:
    broker = golden_broker(tmp_path, **{"delete.topic.enable": "false"})
    broker.create_topic("t", 1)
    if version < 6:
        request = DeleteTopicsRequest(topic_names=("t",))
    else:
        request = DeleteTopicsRequest(topics=(DeleteTopicState("t"),))
    assert [r[2] for r in delete(broker, request, version)] == [code]
    assert "t" in broker.metadata


# --- CreatePartitions -------------------------------------------------------------------------


def grow(broker: Broker, *topics: CreatePartitionsTopic, validate_only: bool = False) -> list[Any]:
    request = CreatePartitionsRequest(topics=topics, timeout_ms=1000, validate_only=validate_only)
    response = LoopbackClient(broker).request(request, 3)
    assert isinstance(response, CreatePartitionsResponse)
    return [(r.name, r.error_code, r.error_message) for r in response.results]


def test_partitions_only_grow_with_kraft_messages(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    for name in ("same", "less", "more"):
        broker.create_topic(name, 3)
    results = grow(
        broker,
        CreatePartitionsTopic("same", 3, None),
        CreatePartitionsTopic("less", 2, None),
        CreatePartitionsTopic("more", 5, None),
        CreatePartitionsTopic("nope", 5, None),
    )
    # Kafka 4.0.0's answer to this request: the order of ControllerApis' HashSet
    assert results == [
        ("same", 37, "Topic already has 3 partition(s)."),
        ("nope", 3, None),
        ("more", 0, None),
        ("less", 37, "The topic less currently has 3 partition(s); 2 would not be an increase."),
    ]
    assert broker.metadata.get("more").partitions == 5
    assert broker.log("more", 4) is not None
    assert broker.metadata.get("less").partitions == 3


def test_create_partitions_duplicates_assignments_and_validate_only(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    broker.create_topic("a", 1)
    results = grow(
        broker,
        CreatePartitionsTopic("t", 2, None),
        CreatePartitionsTopic("t", 3, None),
        CreatePartitionsTopic("a", 3, (CreatePartitionsAssignment((1,)),)),
    )
    assert results == [
        ("t", 42, "Duplicate topic name."),
        (
            "a",
            39,
            "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.",
        ),
    ]
    assert grow(broker, CreatePartitionsTopic("a", 4, None), validate_only=True) == [("a", 0, None)]
    assert broker.metadata.get("a").partitions == 1
