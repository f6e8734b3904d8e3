"""DescribeTopicPartitions (75) against what Kafka 4.0.0 answered ``kafka-topics.sh
--describe`` (fixtures/golden/admin-tools) and the rules of
``DescribeTopicPartitionsRequestHandler`` / ``KRaftMetadataCache``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from admin_tools_support import exchanges, replay, roundtrip_bytes, stdout, tool_broker
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_topic_partitions import (
    DescribeTopicPartitionsCursor as Cursor,
)
from lethe_formats.protocol.messages.describe_topic_partitions import (
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsRequestTopic,
    DescribeTopicPartitionsResponse,
)
from lethe_formats.protocol.schema import ZERO_UUID
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_reference.broker import Broker
from lethe_reference.protocol.loopback import LoopbackClient

KEY = ApiKey.DESCRIBE_TOPIC_PARTITIONS
ALL_OPERATIONS = 3576  # Kafka's bit field for a topic without an authorizer


def _recorded_ids() -> dict[str, Any]:
    """The topic ids of Kafka's answers."""
    ids = {}
    for _, resp in exchanges(KEY):
        payload = bytes.fromhex(resp["hex"])[4:]
        _, body = decode_response(resp["api_key"], resp["api_version"], payload)
        ids.update({t.name: t.topic_id for t in body.topics})
    return ids


def _kafka_world(tmp_path: Path) -> Broker:
    """alpha (3 partitions) and beta (2), with the ids Kafka gave them."""
    broker = tool_broker(tmp_path)
    ids = _recorded_ids()
    broker.create_topic("alpha", 3, topic_id=KafkaUuid(ids["alpha"].bytes))
    broker.create_topic(
        "beta", 2, {"retention.ms": "86400000"}, topic_id=KafkaUuid(ids["beta"].bytes)
    )
    return broker


def test_the_recording_has_the_tools_requests() -> None:
    steps = [req["step"] for req, _ in exchanges(KEY)]
    assert steps == ["describe-alpha", "describe-paged", "describe-paged", "describe-paged"]


@pytest.mark.parametrize("index", range(4))
def test_kafkas_frames_reencode_byte_for_byte(index: int) -> None:
    req, resp = exchanges(KEY)[index]
    for frame in (req, resp):
        recorded, ours = roundtrip_bytes(frame)
        assert ours == recorded


@pytest.mark.parametrize("index", range(4))
def test_replayed_requests_get_kafkas_answers(tmp_path: Path, index: int) -> None:
    """Every answer of the recording, the pages of ``--partition-size-limit-per-response 2``
    and their cursors included, field for field (ids too: the topics carry Kafka's)."""
    broker = _kafka_world(tmp_path)
    ours, theirs = replay(broker, *exchanges(KEY)[index])
    assert ours == theirs


def _tool_lines(responses: list[DescribeTopicPartitionsResponse]) -> list[str]:
    """The partition lines ``kafka-topics.sh --describe`` prints from the answers."""

    def ids(nodes: tuple[int, ...] | None) -> str:
        return "N/A" if nodes is None else ",".join(str(n) for n in nodes)

    return [
        f"\tTopic: {t.name}\tPartition: {p.partition_index}\tLeader: {p.leader_id}\t"
        f"Replicas: {ids(p.replica_nodes)}\tIsr: {ids(p.isr_nodes)}\t"
        f"Elr: {ids(p.eligible_leader_replicas)}\tLastKnownElr: {ids(p.last_known_elr)}"
        for r in responses
        for t in r.topics
        for p in t.partitions
    ]


@pytest.mark.parametrize("step", ["describe-alpha", "describe-paged"])
def test_the_tool_prints_what_it_printed_against_kafka(tmp_path: Path, step: str) -> None:
    broker = _kafka_world(tmp_path)
    answers = [replay(broker, req, resp)[0] for req, resp in exchanges(KEY, step)]
    printed = [line for line in stdout(step).splitlines() if line.startswith("\tTopic:")]
    assert sorted(_tool_lines(answers)) == sorted(printed)
    assert all("Elr: \tLastKnownElr: " in line for line in printed)  # never N/A


def describe(broker: Broker, *names: str, limit: int = 2000, cursor: Cursor | None = None) -> Any:
    request = DescribeTopicPartitionsRequest(
        topics=tuple(DescribeTopicPartitionsRequestTopic(n) for n in names),
        response_partition_limit=limit,
        cursor=cursor,
    )
    return LoopbackClient(broker).request(request, 0)


def page(response: Any) -> tuple[list[tuple[str | None, int, list[int]]], Cursor | None]:
    return [
        (t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in response.topics
    ], response.next_cursor


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = tool_broker(tmp_path)
    broker.create_topic("b", 2)
    broker.create_topic("a", 3)
    broker.create_topic("c", 1)
    return broker


def test_named_topics_sorted_once_each_unknown_and_illegal_ones_flagged(broker: Broker) -> None:
    answer = describe(broker, "c", "nope", "a", "c", "bad name")
    assert page(answer) == (
        [("a", 0, [0, 1, 2]), ("bad name", 17, []), ("c", 0, [0]), ("nope", 3, [])],
        None,
    )
    missing = [t for t in answer.topics if t.error_code]
    assert [(t.topic_id, t.is_internal, t.topic_authorized_operations) for t in missing] == [
        (ZERO_UUID, False, ALL_OPERATIONS)
    ] * 2


def test_all_topics_leave_unknown_ones_out_and_page_at_the_limit(broker: Broker) -> None:
    assert page(describe(broker, limit=4)) == (
        [("a", 0, [0, 1, 2]), ("b", 0, [0])],
        Cursor("b", 1),
    )
    assert page(describe(broker, limit=4, cursor=Cursor("b", 1))) == (
        [("b", 0, [1]), ("c", 0, [0])],
        None,
    )


def test_a_limit_used_up_at_a_topic_boundary_points_at_the_next_topic(broker: Broker) -> None:
    """Kafka names the next topic at partition 0, whether it exists or not."""
    assert page(describe(broker, "a", "zz", limit=3)) == ([("a", 0, [0, 1, 2])], Cursor("zz", 0))
    assert page(describe(broker, "a", limit=3)) == ([("a", 0, [0, 1, 2])], None)


def test_the_limit_is_at_least_one_and_at_most_2000(tmp_path: Path) -> None:
    broker = tool_broker(tmp_path)
    broker.create_topic("many", 2001)
    assert page(describe(broker, "many", limit=0))[1] == Cursor("many", 1)
    answer = describe(broker, "many", limit=5000)
    assert (len(answer.topics[0].partitions), answer.next_cursor) == (2000, Cursor("many", 2000))


def test_a_cursor_past_the_topics_end_lists_no_partition(broker: Broker) -> None:
    assert page(describe(broker, cursor=Cursor("b", 7))) == ([("b", 0, []), ("c", 0, [0])], None)


@pytest.mark.parametrize(
    ("names", "cursor"),
    [(("a", "b"), Cursor("zzz", 0)), (("a",), Cursor("a", -1)), ((), Cursor("a", -1))],
    ids=["cursor-topic-not-named", "negative-partition", "negative-partition-all-topics"],
)
def test_a_bad_cursor_is_invalid_request_for_every_named_topic(
    broker: Broker, names: tuple[str, ...], cursor: Cursor
) -> None:
    answer = describe(broker, *names, cursor=cursor)
    assert page(answer) == ([(n, ErrorCode.INVALID_REQUEST, []) for n in names], None)
    assert all(t.topic_authorized_operations == -(1 << 31) for t in answer.topics)


def test_a_null_cursor_is_one_marker_byte() -> None:
    """Kafka writes a nullable struct as -1 (null) or 1 then the struct."""
    tail = (b"\x00\x00\x07\xd0", b"\x00")  # limit 2000, no tagged fields
    assert encode(DescribeTopicPartitionsRequest(), 0) == b"\x01" + tail[0] + b"\xff" + tail[1]
    with_cursor = encode(DescribeTopicPartitionsRequest(cursor=Cursor("a", 2)), 0)
    assert with_cursor == b"\x01" + tail[0] + b"\x01\x02a\x00\x00\x00\x02\x00" + tail[1]
