"""DescribeProducers (61) as ``KafkaApis.handleDescribeProducersRequest`` answers it: a
partition's producer state in Kafka's hash-map order, and the per-topic errors with the
messages ``ApiError`` carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from admin_tools_support import (
    exchanges,
    gamma_world,
    replay,
    roundtrip_bytes,
    stdout,
    tool_broker,
    without,
)
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersRequestTopic,
    DescribeProducersResponse,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.protocol.loopback import LoopbackClient

NOW = 1_795_289_550_000  # tool_broker's clock


def _append(
    broker: Broker, producer_id: int, epoch: int, sequence: int, count: int, **kw: Any
) -> int:
    log = broker.log("t", 0)
    assert log is not None
    specs = [RecordSpec(b"k", b"v", timestamp=NOW + i) for i in range(count)]
    batch = build_batch(
        specs,
        base_offset=0,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        **kw,
    )
    return log.append_as_leader(batch, 0).first_offset


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = tool_broker(tmp_path)
    broker.create_topic("t", 2)
    return broker


def describe(broker: Broker, *topics: tuple[str, tuple[int, ...]]) -> DescribeProducersResponse:
    request = DescribeProducersRequest(
        tuple(DescribeProducersRequestTopic(n, p) for n, p in topics)
    )
    answer = LoopbackClient(broker).request(request, 0)
    assert isinstance(answer, DescribeProducersResponse)
    return answer


def test_active_producers_in_kafkas_map_order(broker: Broker) -> None:
    """Ids 5 then 16: Kafka's HashMap puts 16 (bucket 0) before 5 (bucket 5)."""
    _append(broker, 5, 0, 0, 3)
    _append(broker, 5, 0, 3, 2)
    first = _append(broker, 16, 1, 0, 1, is_transactional=True)
    ((partition,),) = [t.partitions for t in describe(broker, ("t", (0,))).topics]
    assert (partition.partition_index, partition.error_code, partition.error_message) == (
        0,
        0,
        None,
    )
    assert [
        (
            p.producer_id,
            p.producer_epoch,
            p.last_sequence,
            p.last_timestamp,
            p.coordinator_epoch,
            p.current_txn_start_offset,
        )
        for p in partition.active_producers
    ] == [(16, 1, 0, NOW, -1, first), (5, 0, 4, NOW + 1, -1, -1)]


def test_a_partition_without_producers_and_one_not_hosted(broker: Broker) -> None:
    (topic,) = describe(broker, ("t", (1, 2))).topics
    assert [
        (p.partition_index, p.error_code, p.error_message, p.active_producers)
        for p in topic.partitions
    ] == [
        (1, 0, None, ()),
        (2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None, ()),
    ]


def test_topic_errors_carry_kafkas_messages(broker: Broker) -> None:
    answer = describe(broker, ("nope", (0, 1)), ("bad name", (0,)))
    assert [
        (t.name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
        for t in answer.topics
    ] == [
        (
            "nope",
            [
                (0, 3, "This server does not host this topic-partition."),
                (1, 3, "This server does not host this topic-partition."),
            ],
        ),
        (
            "bad name",
            [
                (
                    0,
                    17,
                    "Topic name is invalid: 'bad name' contains one or more characters other "
                    "than ASCII alphanumerics, '.', '_' and '-'",
                )
            ],
        ),
    ]


def test_the_layout() -> None:
    """Flexible from v0: compact strings and arrays, a null message as 0, tagged bytes."""
    response = DescribeProducersResponse()
    assert encode(response, 0) == b"\x00\x00\x00\x00\x01\x00"
    request = DescribeProducersRequest((DescribeProducersRequestTopic("t", (3,)),))
    assert encode(request, 0) == b"\x02\x02t\x02\x00\x00\x00\x03\x00\x00"


def test_the_tools_request_gets_kafkas_answer(tmp_path: Path) -> None:
    """``kafka-transactions.sh describe-producers --topic gamma --partition 0`` against
    Kafka: producer 0, epoch 0, last sequence 18, no coordinator epoch, no transaction
    (the timestamp is the wall clock's of the recording)."""
    ((req, resp),) = exchanges(ApiKey.DESCRIBE_PRODUCERS)
    for frame in (req, resp):
        recorded, ours = roundtrip_bytes(frame)
        assert ours == recorded
    broker = gamma_world(tmp_path)
    ours, theirs = replay(broker, req, resp)
    assert without(ours, "last_timestamp") == without(theirs, "last_timestamp")
    assert [p.last_sequence for t in theirs.topics for p in t.partitions[0].active_producers] == [
        18
    ]
    printed = stdout("producers-gamma-0").splitlines()
    assert printed[1].split() == [
        "0",
        "0",
        "-1",
        "18",
        str(theirs.topics[0].partitions[0].active_producers[0].last_timestamp),
        "None",
    ]
