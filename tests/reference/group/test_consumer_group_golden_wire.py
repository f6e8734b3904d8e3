"""A KIP-848 consumer group replayed from Kafka 4.0.0 (fixtures/golden/consumer-protocol-groups).

Two librdkafka members (``group.protocol=consumer``) and ``kafka-consumer-groups.sh``
talked to a real Kafka 4.0.0; the recording holds every ConsumerGroupHeartbeat,
ConsumerGroupDescribe, OffsetCommit, OffsetFetch and ListGroups frame. Replaying
the requests, in the order Kafka read them, on a lethe broker holding the same
topic (same name, id and partition count) must give Kafka's responses byte for
byte: member epochs, the revocation before the reassignment (member-b's first
answer is epoch 2 with no partition while member-a still holds them), the
uniform assignor's split for these member ids, the offsets, the describe output
the tool printed. The heartbeats Kafka answered NOT_COORDINATOR (16) and
COORDINATOR_LOAD_IN_PROGRESS (14) while it loaded ``__consumer_offsets`` are left
out: lethe loads inside the request (see group_runtime). One answer is compared
decoded, with partitions sorted: OffsetFetch for *all* of a group's partitions,
which Kafka lists in the iteration order of its offsets hash table (2, 0, 1
here) and lethe in partition order; which order is not part of the protocol.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.coordinator import decode_record
from lethe_formats.coordinator.classic import OffsetCommitValue
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.envelope import decode_request, decode_response
from lethe_formats.records.scan import read_log
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.config import BrokerConfig
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_reference.storage.log_reads import FetchIsolation, read

RECORDING = fixtures_root() / "golden" / "consumer-protocol-groups" / "kafka"
OFFSETS_SEGMENT = RECORDING / "consumer-offsets-36.segment"
FRAMES: list[dict[str, Any]] = [
    json.loads(line) for line in (RECORDING / "frames.jsonl").read_text().splitlines()
]
LOADING = {14, 16}


def exchanges() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) pairs in the order Kafka read the requests."""
    answers = {
        (f["conn"], f["correlation_id"], f["api_key"]): f for f in FRAMES if f["dir"] == "response"
    }
    pairs = []
    for req in FRAMES:
        if req["dir"] != "request":
            continue
        resp = answers[req["conn"], req["correlation_id"], req["api_key"]]
        if req["api_key"] == 68 and _error_code(resp) in LOADING:
            continue
        pairs.append((req, resp))
    return pairs


def _decoded(frame: dict[str, Any]) -> Any:
    return decode_response(frame["api_key"], frame["api_version"], bytes.fromhex(frame["hex"])[4:])[
        1
    ]


def _error_code(frame: dict[str, Any]) -> int:
    return int(_decoded(frame).error_code)


def _topic_id() -> KafkaUuid:
    for req, resp in exchanges():
        body = _decoded(resp)
        if req["api_key"] == 68 and body.assignment and body.assignment.topic_partitions:
            return KafkaUuid(body.assignment.topic_partitions[0].topic_id.bytes)
    raise AssertionError("no assignment in the recording")


def _fetches_everything(req: dict[str, Any]) -> bool:
    if req["api_key"] != 9:
        return False
    body = decode_request(bytes.fromhex(req["hex"])[4:])[1]
    return any(group.topics is None for group in body.groups)


def _sorted_fetch(body: Any) -> Any:
    groups = tuple(
        replace(
            group,
            topics=tuple(
                replace(topic, partitions=tuple(sorted(topic.partitions, key=_index)))
                for topic in group.topics
            ),
        )
        for group in body.groups
    )
    return replace(body, groups=groups)


def _index(partition: Any) -> int:
    return int(partition.partition_index)


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    config = BrokerConfig({"offsets.topic.replication.factor": "1"})
    broker = Broker(tmp_path, config=config, clock=ManualClock(1_795_814_000_000), durable=False)
    broker.startup()
    broker.create_topic("orders", 3, topic_id=_topic_id())
    runtime_of(broker).find_coordinator(0, "cg848")  # creates __consumer_offsets
    return broker


def test_every_recorded_answer_is_reproduced_byte_for_byte(broker: Broker) -> None:
    clients: dict[int, LoopbackClient] = {}
    compared: dict[int, int] = {}
    for req, resp in exchanges():
        client = clients.setdefault(req["conn"], LoopbackClient(broker))
        expect = (req["correlation_id"], req["api_key"], req["api_version"])
        client.send_raw(bytes.fromhex(req["hex"]), expect=expect)
        (payload,) = client.raw_frames()
        theirs = bytes.fromhex(resp["hex"])[4:]
        step = f"step {req['step']}, frame {req['seq']}"
        if _fetches_everything(req):
            ours = decode_response(req["api_key"], req["api_version"], payload)[1]
            assert _sorted_fetch(ours) == _sorted_fetch(_decoded(resp)), step
        elif payload != theirs:
            ours = decode_response(req["api_key"], req["api_version"], payload)[1]
            assert ours == _decoded(resp), step
            assert payload == theirs, step
        compared[req["api_key"]] = compared.get(req["api_key"], 0) + 1
    assert compared == {68: 29, 69: 10, 8: 1, 9: 5, 16: 1}  # every exchange but the 11 loading


def _records(data: bytes) -> list[tuple[Any, Any]]:
    """(key, value) of every record, commit timestamps left out (each run's clock)."""
    out = []
    for entry in read_log(data):
        assert isinstance(entry, RecordBatch)
        for record in entry.records:
            decoded = decode_record(record)
            value = decoded.value
            if isinstance(value, OffsetCommitValue):
                value = replace(value, commit_timestamp=0)
            out.append((decoded.key, value))
    return out


def test_the_group_is_stored_with_kafkas_records(broker: Broker) -> None:
    """After the replay, ``__consumer_offsets`` holds the records Kafka wrote for the
    same requests (kafka/consumer-offsets-36.segment, see its .dump.txt): member, topic
    metadata, epochs, target and current assignments, offsets, tombstones."""
    test_every_recorded_answer_is_reproduced_byte_for_byte(broker)
    partition = runtime_of(broker).coordinator.partition_for("cg848")
    log = broker.log("__consumer_offsets", partition)
    assert log is not None
    ours = _records(read(log, 0, 1 << 20, isolation=FetchIsolation.LOG_END).records)
    theirs = _records(OFFSETS_SEGMENT.read_bytes())
    assert len(theirs) == 27
    assert ours == theirs


def test_the_recording_shows_the_revocation_before_the_reassignment() -> None:
    """What the replay pins, read from Kafka's frames (not from lethe)."""
    answers = [
        (req["step"], _decoded(resp))
        for req, resp in exchanges()
        if req["api_key"] == 68 and req["step"] == "member-b"
    ]
    first_b = answers[0][1]
    assert (first_b.member_epoch, first_b.assignment.topic_partitions) == (2, ())
    revoke = answers[1][1]
    assert revoke.member_epoch == 1
    assert [tp.partitions for tp in revoke.assignment.topic_partitions] == [(0,)]


def test_describe_groups_answers_for_a_consumer_group_as_kafka(broker: Broker) -> None:
    """DescribeGroups v5/v6 naming the (then empty) consumer group and an unknown one,
    replayed from kafka/describe-groups.jsonl: Kafka's answer per group. Kafka lists
    the groups by ``__consumer_offsets`` partition in hash order, lethe in request
    order (see handlers/groups.py), so the groups are compared by id."""
    test_every_recorded_answer_is_reproduced_byte_for_byte(broker)
    client = LoopbackClient(broker)
    lines = (RECORDING / "describe-groups.jsonl").read_text().splitlines()
    for line in map(json.loads, lines):
        version = line["api_version"]
        client.send_raw(bytes.fromhex(line["request"]), expect=(version, 15, version))
        (payload,) = client.raw_frames()
        ours = decode_response(15, version, payload)[1]
        theirs = decode_response(15, version, bytes.fromhex(line["response"])[4:])[1]
        assert sorted(ours.groups, key=_group_id) == sorted(theirs.groups, key=_group_id)


def _group_id(group: Any) -> str:
    return str(group.group_id)
