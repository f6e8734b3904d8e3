"""Real-broker robustness without a real broker: a scripted peer that settles slowly.

The peer answers as Kafka 4.0 does right after CreateTopics or a restart:
Metadata already lists the leader, yet ListOffsets and Produce answer
NOT_LEADER_OR_FOLLOWER (6) a few times before the partition serves. The runner
must wait (the leader probe), retry what Kafka's clients retry, count every
retry, and still grade a wrong answer that persists. Also here: a valid setup
step the target refuses, and a connection closed on an API the target
advertises, are the target's FAIL with the step and the answer.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fake_broker import FakeBroker, api_versions_body, response_frame
from lethe_conformance.outcomes import Mismatch, Outcome
from lethe_conformance.scenarios import load_scenario, run_scenario
from lethe_conformance.scenarios.readiness import RETRIABLE, retriable_error
from lethe_conformance.targets.bootstrap import BootstrapTarget
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode
from lethe_formats.protocol.envelope import decode_request_header
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.delete_topics import DeleteTopicsResponse
from lethe_formats.protocol.messages.describe_configs import DescribeConfigsResponse
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)

RECORD = {"key": "k", "value": "v", "timestamp": "1795286504180"}
#: fixed timestamps need retention.ms -1 (scenarios/dates.py), even on this fake broker
TOPIC = {
    "name": "t",
    "partitions": 1,
    "configs": {"retention.ms": "-1", "message.timestamp.after.max.ms": "9223372036854775807"},
}
PRODUCE = {
    "op": "produce",
    "topic": "t",
    "partition": 0,
    "batches": [{"records": [RECORD]}],
    "expect": {"error": "NONE", "base_offsets": ["0"]},
}


class SettlingBroker:
    """Answers NOT_LEADER_OR_FOLLOWER to the first ``not_leader`` ListOffsets requests
    (the probe) and the first ``produce_not_leader`` Produce requests, then serves;
    ``produce_error`` (if set) is its lasting Produce answer."""

    def __init__(
        self, not_leader: int, *, produce_not_leader: int = 0, produce_error: int = 0
    ) -> None:
        self.left = {ApiKey.LIST_OFFSETS: not_leader, ApiKey.PRODUCE: produce_not_leader}
        self.produce_error = produce_error
        self.answered_not_leader = 0
        self._lock = threading.Lock()

    def _settling(self, key: int) -> bool:
        with self._lock:
            if self.left[key] > 0:
                self.left[key] -= 1
                self.answered_not_leader += 1
                return True
            return False

    def __call__(self, header: RequestHeader, payload: bytes) -> bytes | None:
        _, offset = decode_request_header(payload)
        body = payload[offset:]
        version = header.api_version
        key = header.api_key
        if key == ApiKey.API_VERSIONS:
            return response_frame(header, api_versions_body())
        if key == ApiKey.CREATE_TOPICS:
            request = decode(CreateTopicsRequest, version, body)
            results = tuple(
                CreatableTopicResult(name=t.name, error_code=ErrorCode.NONE) for t in request.topics
            )
            return response_frame(header, CreateTopicsResponse(topics=results))
        if key == ApiKey.METADATA:
            meta = decode(MetadataRequest, version, body)
            part = MetadataResponsePartition(partition_index=0, leader_id=1)
            topics = tuple(
                MetadataResponseTopic(name=t.name, partitions=(part,)) for t in meta.topics or ()
            )
            broker = MetadataResponseBroker(1, "127.0.0.1", 1)
            return response_frame(header, MetadataResponse(brokers=(broker,), topics=topics))
        if key == ApiKey.LIST_OFFSETS:
            lists = decode(ListOffsetsRequest, version, body)
            code = ErrorCode.NOT_LEADER_OR_FOLLOWER if self._settling(key) else ErrorCode.NONE
            topics = tuple(
                ListOffsetsTopicResponse(
                    name=t.name,
                    partitions=(
                        ListOffsetsPartitionResponse(partition_index=0, error_code=code, offset=0),
                    ),
                )
                for t in lists.topics
            )
            return response_frame(header, ListOffsetsResponse(topics=topics))
        if key == ApiKey.PRODUCE:
            produce = decode(ProduceRequest, version, body)
            code = ErrorCode.NOT_LEADER_OR_FOLLOWER if self._settling(key) else self.produce_error
            topics = tuple(
                TopicProduceResponse(
                    name=t.name,
                    partition_responses=(
                        PartitionProduceResponse(index=0, error_code=code, base_offset=0),
                    ),
                )
                for t in produce.topic_data
            )
            return response_frame(header, ProduceResponse(responses=topics))
        if key == ApiKey.DESCRIBE_CONFIGS:
            return response_frame(header, DescribeConfigsResponse())
        if key == ApiKey.DELETE_TOPICS:
            return response_frame(header, DeleteTopicsResponse())
        return None  # anything else: the connection closes


def scenario_file(tmp_path: Path, steps: list[dict[str, Any]], **setup: Any) -> Any:
    data = {
        "id": "kip107-t-settling",
        "description": "a test scenario",
        "requirements": ["KIP107-DEL-2"],
        "profile": "kip107",
        "requires": [],
        "setup": {"topics": [TOPIC], **setup},
        "steps": steps,
    }
    path = tmp_path / "kip107-t-settling.json"
    path.write_text(json.dumps(data))
    return load_scenario(path)


def test_the_leader_probe_waits_until_the_partition_serves(tmp_path: Path) -> None:
    peer_answers = SettlingBroker(not_leader=3)
    with FakeBroker(peer_answers) as peer:
        target = BootstrapTarget(f"127.0.0.1:{peer.port}")
        result = run_scenario(target, scenario_file(tmp_path, [PRODUCE]))
    assert result.outcome is Outcome.PASS, result.detail
    # three NOT_LEADER_OR_FOLLOWER answers absorbed by the probe, none reached the step
    assert result.retries == {"NOT_LEADER_OR_FOLLOWER": 3}
    assert peer_answers.answered_not_leader == 3


def test_a_step_answered_with_a_retriable_error_is_sent_again(tmp_path: Path) -> None:
    peer_answers = SettlingBroker(not_leader=0, produce_not_leader=2)
    with FakeBroker(peer_answers) as peer:
        target = BootstrapTarget(f"127.0.0.1:{peer.port}")
        result = run_scenario(target, scenario_file(tmp_path, [PRODUCE]))
    assert result.outcome is Outcome.PASS, result.detail
    assert result.retries == {"NOT_LEADER_OR_FOLLOWER": 2}
    assert peer_answers.answered_not_leader == 2


def test_a_lasting_wrong_answer_is_still_a_fail(tmp_path: Path) -> None:
    peer_answers = SettlingBroker(not_leader=0, produce_error=ErrorCode.INVALID_RECORD)
    with FakeBroker(peer_answers) as peer:
        result = run_scenario(
            BootstrapTarget(f"127.0.0.1:{peer.port}"), scenario_file(tmp_path, [PRODUCE])
        )
    assert result.outcome is Outcome.FAIL
    assert "INVALID_RECORD" in result.detail
    assert result.retries == {}


def test_only_retriable_answers_where_another_was_expected_are_retried() -> None:
    not_leader = "NOT_LEADER_OR_FOLLOWER (6)"
    assert retriable_error([Mismatch("$.e", "NONE (0)", not_leader)]) == "NOT_LEADER_OR_FOLLOWER"
    # the scenario expects the retriable error itself: its answer stands
    assert retriable_error([Mismatch("$.e", not_leader, "NONE (0)")]) is None
    # a second, non-retriable mismatch: the step is wrong anyway
    assert (
        retriable_error([Mismatch("$.e", "NONE (0)", not_leader), Mismatch("$.o", "1", "2")])
        is None
    )
    assert {
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "NOT_COORDINATOR",
    } <= RETRIABLE


def test_a_refused_valid_batch_in_setup_is_the_targets_fail_naming_step_and_answer(
    tmp_path: Path,
) -> None:
    replay = [
        {
            "log": "logs/codecs-v2",
            "partition_dir": "codecs-0",
            "first": 0,
            "count": 1,
            "topic": "t",
            "partition": 0,
        }
    ]
    peer_answers = SettlingBroker(not_leader=0, produce_error=ErrorCode.CORRUPT_MESSAGE)
    with FakeBroker(peer_answers) as peer:
        result = run_scenario(
            BootstrapTarget(f"127.0.0.1:{peer.port}"),
            scenario_file(tmp_path, [PRODUCE], replay=replay),
        )
    assert result.outcome is Outcome.FAIL
    assert result.detail == "setup: replay[0] batch 0: Produce answered CORRUPT_MESSAGE"


def test_a_connection_closed_on_an_advertised_api_is_the_targets_fail(tmp_path: Path) -> None:
    delete = {
        "op": "delete_records",
        "partitions": [{"topic": "t", "partition": 0, "offset": "0"}],
        "expect": {"error": "NONE"},
    }
    with FakeBroker(SettlingBroker(not_leader=0)) as peer:
        result = run_scenario(
            BootstrapTarget(f"127.0.0.1:{peer.port}"), scenario_file(tmp_path, [delete])
        )
    # the peer advertises DeleteRecords (api_versions_body lists it) and closes on it
    assert result.outcome is Outcome.FAIL
    assert "(DELETE_RECORDS): the target closed the connection" in result.detail
    assert "advertised" in result.detail
