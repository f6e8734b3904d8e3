"""ElectLeaders (43), AlterPartitionReassignments (45) and ListPartitionReassignments (46)
on a single broker, against what a single-node Kafka 4.0.0 answered Kafka's own tools
(fixtures/golden/admin-tools/leadership-quotas: ``kafka-leader-election.sh``,
``kafka-reassign-partitions.sh``), and the rules of ``ReplicationControlManager``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from admin_tools_support import (
    LEADERSHIP_QUOTAS,
    exchanges,
    load_frames,
    replay,
    roundtrip_bytes,
    tool_broker,
)
from lethe_formats.protocol.envelope import decode_request
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignableTopic,
)
from lethe_formats.protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
    ElectLeadersTopic,
)
from lethe_reference.broker import Broker
from lethe_reference.handlers.java_order import timeline_hash_order
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_tools.kafka_client.java_errors import java_exception

FRAMES = load_frames(LEADERSHIP_QUOTAS, "frames.jsonl")
OUTPUTS: list[dict[str, Any]] = json.loads((LEADERSHIP_QUOTAS / "outputs.json").read_text())
KEYS = (43, 45, 46)


def recorded(key: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return exchanges(key, frames=FRAMES)


@pytest.fixture
def delta(tmp_path: Path) -> Broker:
    """As the recorded Kafka: a fresh node 1 with topic delta (2 partitions)."""
    broker = tool_broker(tmp_path)
    broker.create_topic("delta", 2)
    return broker


def test_the_recording_has_the_tools_requests() -> None:
    steps = [(req["step"], req["api_key"]) for key in KEYS for req, _ in recorded(key)]
    assert steps == [
        ("elect-preferred-all", 43),
        ("elect-preferred-one", 43),
        ("elect-unclean-one", 43),
        ("elect-unknown-topic", 43),
        ("elect-unknown-partition", 43),
        ("reassign-execute", 45),
        ("reassign-list-none", 46),
        ("reassign-execute", 46),
        ("reassign-verify", 46),
        ("reassign-list-after", 46),
        ("reassign-absent-broker", 46),
        ("reassign-absent-topic", 46),
    ]


@pytest.mark.parametrize("key", KEYS)
def test_kafkas_frames_reencode_byte_for_byte(key: int) -> None:
    for pair in recorded(key):
        for frame in pair:
            original, ours = roundtrip_bytes(frame)
            assert ours == original


@pytest.mark.parametrize("key", KEYS)
def test_replayed_requests_get_kafkas_answers(delta: Broker, key: int) -> None:
    for req, resp in recorded(key):
        ours, theirs = replay(delta, req, resp)
        assert ours == theirs, req["step"]


def test_every_partition_of_a_single_node_needs_no_election(delta: Broker) -> None:
    for election in (0, 1):
        request = ElectLeadersRequest(election, (ElectLeadersTopic("delta", (1, 0)),))
        answer = LoopbackClient(delta).request(request, 2)
        assert isinstance(answer, ElectLeadersResponse)
        ((topic,),) = [answer.replica_election_results]
        assert [
            (p.partition_id, p.error_code, p.error_message) for p in topic.partition_result
        ] == [
            (1, 84, "Leader election not needed for topic partition."),
            (0, 84, "Leader election not needed for topic partition."),
        ]


def test_an_unknown_election_type_fails_the_whole_request(delta: Broker) -> None:
    request = ElectLeadersRequest(5, (ElectLeadersTopic("delta", (0,)),))
    answer = LoopbackClient(delta).request(request, 2)
    assert isinstance(answer, ElectLeadersResponse)
    assert answer.error_code == ErrorCode.INVALID_REQUEST
    assert [p.error_message for p in answer.replica_election_results[0].partition_result] == [
        "Unknown election type 5"
    ]


def test_every_partition_lists_topics_in_the_controllers_hash_order(delta: Broker) -> None:
    for name in ("alpha", "omega", "kappa", "zulu", "b"):
        delta.create_topic(name, 1)
    answer = LoopbackClient(delta).request(ElectLeadersRequest(0, None), 2)
    assert isinstance(answer, ElectLeadersResponse)
    names = [t.topic for t in answer.replica_election_results]
    assert names == timeline_hash_order(["delta", "alpha", "omega", "kappa", "zulu", "b"])
    assert sorted(names) == ["alpha", "b", "delta", "kappa", "omega", "zulu"]
    assert all(t.partition_result == () for t in answer.replica_election_results)


def test_timeline_hash_order_follows_base_hash_table() -> None:
    """``BaseHashTable.findSlot`` by hand: the slot is the top bits of
    hashCode * -7046029254386353131 (a Java long). "a" (97), "b" (98) and "c" (99)
    give top bits 11, 10 and 00: with 2 slots a and b sit in slot 1, c in slot 0;
    the third name grows the table to 4 slots first ((2 + 1) * 0.75 > 2)."""
    top = [((h * -7046029254386353131) & (1 << 64) - 1) >> 62 for h in (97, 98, 99)]
    assert top == [3, 2, 0]
    assert timeline_hash_order(["a", "c"]) == ["c", "a"]
    assert timeline_hash_order(["b", "a"]) == ["b", "a"]  # one slot: insertion order
    assert timeline_hash_order(["a", "b", "c"]) == ["c", "b", "a"]
    assert timeline_hash_order(["a", "b", "c"], removed=["b"]) == ["c", "a"]


def alter(
    broker: Broker, *partitions: ReassignablePartition, topic: str = "delta"
) -> AlterPartitionReassignmentsResponse:
    request = AlterPartitionReassignmentsRequest(topics=(ReassignableTopic(topic, partitions),))
    answer = LoopbackClient(broker).request(request, 0)
    assert isinstance(answer, AlterPartitionReassignmentsResponse)
    return answer


def test_a_single_node_refuses_other_brokers_and_bad_lists_as_the_controller_does(
    delta: Broker,
) -> None:
    answer = alter(
        delta,
        ReassignablePartition(0, (1, 2)),
        ReassignablePartition(1, ()),
        ReassignablePartition(0, (1, 1)),
        ReassignablePartition(1, None),
        ReassignablePartition(9, (1,)),
    )
    assert (answer.error_code, answer.error_message) == (0, None)
    assert [(p.error_code, p.error_message) for p in answer.responses[0].partitions] == [
        (
            39,
            "The manual partition assignment includes broker 2, but no such broker is registered.",
        ),
        (39, "The manual partition assignment includes an empty replica list."),
        (39, "The manual partition assignment includes the broker 1 more than once."),
        (85, "No partition reassignment is in progress."),
        (3, "Unable to find partition delta:9."),
    ]
    absent = alter(delta, ReassignablePartition(0, (1,)), topic="nosuch")
    assert [(p.error_code, p.error_message) for p in absent.responses[0].partitions] == [
        (3, "Unable to find a topic named nosuch.")
    ]


ELECTION_NAMES = {0: "PREFERRED", 1: "UNCLEAN"}


def tool_lines(answer: ElectLeadersResponse, election_type: int) -> list[str]:
    """What ``kafka-leader-election.sh`` prints for an answer (``LeaderElectionCommand``:
    successes, partitions that needed no election, then one line per failure)."""
    name = ELECTION_NAMES[election_type]
    done, not_needed, failed = [], [], []
    for topic in answer.replica_election_results:
        for p in topic.partition_result:
            tp = f"{topic.topic}-{p.partition_id}"
            if p.error_code == ErrorCode.NONE:
                done.append(tp)
            elif p.error_code == ErrorCode.ELECTION_NOT_NEEDED:
                not_needed.append(tp)
            else:
                failed.append(f"{tp}: {java_exception(p.error_code, p.error_message)}")
    lines = []
    if done:
        lines.append(
            f"Successfully completed leader election ({name}) for partitions {', '.join(done)}"
        )
    if not_needed:
        lines.append(f"Valid replica already elected for partitions {', '.join(not_needed)}")
    lines += [f"Error completing leader election ({name}) for partition: {f}" for f in failed]
    return lines


@pytest.mark.parametrize(
    "step",
    [
        "elect-preferred-all",
        "elect-preferred-one",
        "elect-unclean-one",
        "elect-unknown-topic",
        "elect-unknown-partition",
    ],
)
def test_the_election_tool_prints_what_it_printed_against_kafka(delta: Broker, step: str) -> None:
    ((req, resp),) = [(q, r) for q, r in recorded(43) if q["step"] == step]
    ours, _ = replay(delta, req, resp)
    request = decode_request(bytes.fromhex(req["hex"])[4:])[1]
    printed = next(o for o in OUTPUTS if o["step"] == step)
    assert tool_lines(ours, request.election_type) == printed["stdout"].splitlines()
    assert printed["exit"] == (1 if "unknown" in step else 0)
