"""Requests whose fields are out of range get Kafka 4.0's error codes and change nothing.

Every request goes through :class:`LoopbackClient`, i.e. as bytes through the
same framing, header, version and dispatch code a socket client meets, at the
versions real clients send. After each refusal the log dir is byte-identical
(the manual clock runs nothing periodic), so "touches no stored data" is
checked on the files themselves, not on the broker's view of them.

Expected codes and messages come from Kafka's source (apache/kafka, see
kafka-facts.md section 0): KRaft ``ReplicationControlManager.createTopic`` /
``createPartitions`` and ``Topic.validate`` for the admin APIs; KafkaApis
(``metadataCache.contains`` -> UNKNOWN_TOPIC_OR_PARTITION 3) and
``ReplicaManager`` (``isValidRequiredAcks`` -> INVALID_REQUIRED_ACKS 21,
``readFromLog``, ``deleteRecordsOnLeader``) for the data plane (kafka-facts
1.2, 2.3); ``GroupCoordinatorService.joinGroup`` for session timeouts.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.protocol.messages import create_partitions as cp
from lethe_formats.protocol.messages import create_topics as ct
from lethe_formats.protocol.messages import delete_records as dr
from lethe_formats.protocol.messages import fetch as fm
from lethe_formats.protocol.messages import find_coordinator as fc
from lethe_formats.protocol.messages import join_group as jg
from lethe_formats.protocol.messages import list_offsets as lo
from lethe_formats.protocol.messages import offset_commit as oc
from lethe_formats.protocol.messages import produce as pm
from lethe_formats.records import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.metadata import CONSUMER_OFFSETS
from lethe_reference.protocol.loopback import LoopbackClient

START_MS = 1_700_000_000_000
TOPIC = "ranges"
UNKNOWN_SERVER_ERROR, OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION = -1, 1, 3
INVALID_TOPIC_EXCEPTION, NOT_COORDINATOR, INVALID_REQUIRED_ACKS = 17, 16, 21
INVALID_GROUP_ID = 24
INVALID_SESSION_TIMEOUT, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR = 26, 37, 38


def batch(*values: bytes) -> bytes:
    return build_batch(
        [RecordSpec(key=v, value=v, timestamp=START_MS) for v in values], base_offset=0
    )


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    """Topic ``ranges``: partition 0 holds offsets 0-1 (one batch), partition 1 offset 0."""
    config = BrokerConfig({"offsets.topic.replication.factor": "1"})
    broker = Broker(tmp_path / "logs", config=config, clock=ManualClock(START_MS), durable=False)
    broker.startup()
    broker.create_topic(TOPIC, 2, {})
    client = LoopbackClient(broker)
    for partition, values in ((0, (b"a", b"b")), (1, (b"c",))):
        data = (pm.TopicProduceData(TOPIC, (pm.PartitionProduceData(partition, batch(*values)),)),)
        response = client.request(pm.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=data), 9)
        assert isinstance(response, pm.ProduceResponse)
        assert response.responses[0].partition_responses[0].error_code == 0
    return broker


def snapshot(log_dir: Path) -> dict[str, str]:
    return {
        str(path.relative_to(log_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(log_dir.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def untouched(broker: Broker) -> Iterator[None]:
    """The test's requests leave every file under the log dir as it was."""
    before = snapshot(broker.log_dir)
    yield
    assert snapshot(broker.log_dir) == before


def ask(broker: Broker, body: Any, version: int) -> Any:
    return LoopbackClient(broker).request(body, version)


# --- CreateTopics / CreatePartitions (KRaft controller) -----------------------------------------

OTHER_CHARS = "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
POSITIVE = "Replication factor must be larger than 0, or -1 to use the default value."
PARTITIONS = "Number of partitions was set to an invalid non-positive value."


@pytest.mark.parametrize("version", [4, 7])  # librdkafka's and the newest
@pytest.mark.parametrize(
    "case",
    [
        (0, 1, INVALID_PARTITIONS, PARTITIONS),
        (-2, 1, INVALID_PARTITIONS, PARTITIONS),
        (1, 0, INVALID_REPLICATION_FACTOR, POSITIVE),
        (1, -2, INVALID_REPLICATION_FACTOR, POSITIVE),
        (0, 0, INVALID_REPLICATION_FACTOR, POSITIVE),  # the factor is checked first
    ],
)
def test_create_topics_counts_out_of_range(
    broker: Broker, untouched: None, version: int, case: tuple[int, int, int, str]
) -> None:
    partitions, factor, code, message = case
    topic = ct.CreatableTopic("fresh", partitions, factor, (), ())
    response = ask(broker, ct.CreateTopicsRequest((topic,)), version)
    assert isinstance(response, ct.CreateTopicsResponse)
    (result,) = response.topics
    assert (result.name, result.error_code, result.error_message) == ("fresh", code, message)
    assert "fresh" not in broker.metadata


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (".", "'.' is not allowed"),
        ("..", "'..' is not allowed"),
        ("x" * 250, f"the length of '{'x' * 250}' is longer than the max allowed length 249"),
        (
            "bad name",
            f"'bad name' {OTHER_CHARS}",
        ),
        (
            "tópico",
            f"'tópico' {OTHER_CHARS}",
        ),
        (
            "a/b",
            f"'a/b' {OTHER_CHARS}",
        ),
    ],
)
def test_create_topics_invalid_names(
    broker: Broker, untouched: None, name: str, reason: str
) -> None:
    response = ask(broker, ct.CreateTopicsRequest((ct.CreatableTopic(name, 1, 1, (), ()),)), 7)
    assert isinstance(response, ct.CreateTopicsResponse)
    (result,) = response.topics
    assert (result.error_code, result.error_message) == (
        INVALID_TOPIC_EXCEPTION,
        f"Topic name is invalid: {reason}",
    )
    assert name not in broker.metadata


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (2, "Topic already has 2 partition(s)."),
        (1, f"The topic {TOPIC} currently has 2 partition(s); 1 would not be an increase."),
        (-1, f"The topic {TOPIC} currently has 2 partition(s); -1 would not be an increase."),
    ],
)
def test_create_partitions_never_shrinks(
    broker: Broker, untouched: None, count: int, message: str
) -> None:
    request = cp.CreatePartitionsRequest(
        (cp.CreatePartitionsTopic(TOPIC, count, None),), 1000, False
    )
    response = ask(broker, request, 3)
    assert isinstance(response, cp.CreatePartitionsResponse)
    (result,) = response.results
    assert (result.error_code, result.error_message) == (INVALID_PARTITIONS, message)
    assert broker.metadata.get(TOPIC).partitions == 2  # type: ignore[union-attr]


# --- Produce ----------------------------------------------------------------------------------


def produce(broker: Broker, partition: int, *, acks: int = -1) -> tuple[int, int, int]:
    """(error code, base offset, log start offset) of one Produce v9 of one batch."""
    data = (pm.TopicProduceData(TOPIC, (pm.PartitionProduceData(partition, batch(b"new")),)),)
    response = ask(broker, pm.ProduceRequest(acks=acks, timeout_ms=1000, topic_data=data), 9)
    assert isinstance(response, pm.ProduceResponse)
    (answer,) = response.responses[0].partition_responses
    assert answer.index == partition
    return answer.error_code, answer.base_offset, answer.log_start_offset


@pytest.mark.parametrize("partition", [-1, 2, 10])
def test_produce_to_a_partition_the_topic_lacks(
    broker: Broker, untouched: None, partition: int
) -> None:
    assert produce(broker, partition) == (UNKNOWN_TOPIC_OR_PARTITION, -1, -1)


@pytest.mark.parametrize("acks", [2, -2, 100])
def test_produce_with_acks_outside_minus_one_zero_one(
    broker: Broker, untouched: None, acks: int
) -> None:
    assert produce(broker, 0, acks=acks) == (INVALID_REQUIRED_ACKS, -1, -1)
    assert broker.log(TOPIC, 0).log_end_offset == 2  # type: ignore[union-attr]


# --- Fetch ------------------------------------------------------------------------------------


def fetch(
    broker: Broker,
    partitions: dict[int, int],
    *,
    max_bytes: int = 0x7FFFFFFF,
    partition_max: int = 1 << 20,
) -> dict[int, tuple[int, int, int, bytes]]:
    """partition -> (error, high watermark, log start offset, records) of a Fetch v12
    (sessionless, no wait) of ``{partition: fetch offset}``."""
    topic = fm.FetchTopic(
        topic=TOPIC,
        partitions=tuple(
            fm.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=partition_max)
            for p, o in partitions.items()
        ),
    )
    request = fm.FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=max_bytes, topics=(topic,))
    response = ask(broker, request, 12)
    assert isinstance(response, fm.FetchResponse)
    assert response.error_code == 0
    return {
        p.partition_index: (p.error_code, p.high_watermark, p.log_start_offset, p.records or b"")
        for t in response.responses
        for p in t.partitions
    }


@pytest.mark.parametrize("partition", [-1, 2])
def test_fetch_from_a_partition_the_topic_lacks(
    broker: Broker, untouched: None, partition: int
) -> None:
    assert fetch(broker, {partition: 0}) == {partition: (UNKNOWN_TOPIC_OR_PARTITION, -1, -1, b"")}


@pytest.mark.parametrize("offset", [-1, -2, -1000])
def test_fetch_at_a_negative_offset_is_out_of_range(
    broker: Broker, untouched: None, offset: int
) -> None:
    # UnifiedLog.read: an offset below the log start offset (0) is OffsetOutOfRangeException,
    # answered with HW and log start offset -1 (kafka-facts 2.3).
    assert fetch(broker, {0: offset}) == {0: (OFFSET_OUT_OF_RANGE, -1, -1, b"")}


def test_negative_max_bytes_fails_the_first_read_and_later_partitions_read_with_budget_zero(
    broker: Broker, untouched: None, caplog: pytest.LogCaptureFixture
) -> None:
    # readFromLog: the first partition reads with min(partition max, -1) < 0 and
    # LogSegment.read throws IllegalArgumentException -> UNKNOWN_SERVER_ERROR, HW -1;
    # the budget then becomes max(0, -1 - 0) = 0 and, nothing read yet, the next
    # partition still returns its first batch (minOneMessage).
    answers = fetch(broker, {0: 0, 1: 0}, max_bytes=-1)
    assert answers[0] == (UNKNOWN_SERVER_ERROR, -1, -1, b"")
    assert answers[1][:3] == (0, 1, 0)
    assert answers[1][3] == broker_bytes(broker, 1)
    (logged,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "Error processing fetch with max size -1 on partition ranges-0" in logged.getMessage()


def test_negative_partition_max_bytes_fails_every_partition_with_data(
    broker: Broker, untouched: None
) -> None:
    answers = fetch(broker, {0: 0, 1: 0}, partition_max=-5)
    assert answers == {
        0: (UNKNOWN_SERVER_ERROR, -1, -1, b""),
        1: (UNKNOWN_SERVER_ERROR, -1, -1, b""),
    }


def test_negative_max_bytes_at_the_high_watermark_reads_nothing_without_error(
    broker: Broker, untouched: None
) -> None:
    # LocalLog.read returns before any segment read when the offset is the upper bound.
    assert fetch(broker, {0: 2}, max_bytes=-1) == {0: (0, 2, 0, b"")}


def broker_bytes(broker: Broker, partition: int) -> bytes:
    """The whole .log file of the partition's only segment (one batch)."""
    log = broker.log(TOPIC, partition)
    assert log is not None
    return (log.directory / f"{0:020d}.log").read_bytes()


# --- ListOffsets and DeleteRecords ------------------------------------------------------------


@pytest.mark.parametrize("partition", [-1, 2])
def test_list_offsets_of_a_partition_the_topic_lacks(
    broker: Broker, untouched: None, partition: int
) -> None:
    topic = lo.ListOffsetsTopic(TOPIC, (lo.ListOffsetsPartition(partition, -1, -2),))
    response = ask(broker, lo.ListOffsetsRequest(-1, 0, (topic,)), 7)
    assert isinstance(response, lo.ListOffsetsResponse)
    (answer,) = response.topics[0].partitions
    assert (answer.partition_index, answer.error_code, answer.timestamp, answer.offset) == (
        partition,
        UNKNOWN_TOPIC_OR_PARTITION,
        -1,
        -1,
    )


@pytest.mark.parametrize(
    ("partition", "offset", "code"),
    [
        (0, -2, OFFSET_OUT_OF_RANGE),  # only -1 (the HW) is special; kafka-facts 1.2
        (0, -100, OFFSET_OUT_OF_RANGE),
        (-1, 1, UNKNOWN_TOPIC_OR_PARTITION),
        (2, 1, UNKNOWN_TOPIC_OR_PARTITION),
    ],
)
def test_delete_records_out_of_range(
    broker: Broker, untouched: None, partition: int, offset: int, code: int
) -> None:
    topic = dr.DeleteRecordsTopic(TOPIC, (dr.DeleteRecordsPartition(partition, offset),))
    response = ask(broker, dr.DeleteRecordsRequest((topic,), 1000), 2)
    assert isinstance(response, dr.DeleteRecordsResponse)
    (answer,) = response.topics[0].partitions
    assert (answer.partition_index, answer.low_watermark, answer.error_code) == (
        partition,
        -1,
        code,
    )
    assert broker.log(TOPIC, 0).log_start_offset == 0  # type: ignore[union-attr]


# --- Groups -----------------------------------------------------------------------------------


@pytest.mark.parametrize("partitions", [(-1,), (2,), (-1, 2, -7)])
def test_offset_commit_to_partitions_the_topic_lacks(
    broker: Broker, untouched: None, partitions: tuple[int, ...]
) -> None:
    commits = tuple(oc.OffsetCommitRequestPartition(p, 1, -1, "") for p in partitions)
    request = oc.OffsetCommitRequest(
        "g", -1, "", None, topics=(oc.OffsetCommitRequestTopic(TOPIC, commits),)
    )
    response = ask(broker, request, 8)
    assert isinstance(response, oc.OffsetCommitResponse)
    assert [(p.partition_index, p.error_code) for p in response.topics[0].partitions] == [
        (p, UNKNOWN_TOPIC_OR_PARTITION) for p in partitions
    ]
    # No valid partition is left, so Kafka does not ask the group coordinator at all.
    assert CONSUMER_OFFSETS not in broker.metadata


def join(
    broker: Broker, session_timeout_ms: int, member_id: str = "", group: str = "g"
) -> jg.JoinGroupResponse:
    protocol = jg.JoinGroupRequestProtocol("range", b"\x00\x01")
    request = jg.JoinGroupRequest(
        group, session_timeout_ms, 300_000, member_id, None, "consumer", (protocol,)
    )
    response = ask(broker, request, 7)
    assert isinstance(response, jg.JoinGroupResponse)
    return response


def coordinator_ready(broker: Broker) -> None:
    """FindCoordinator creates __consumer_offsets (first answer: not available yet)."""
    for _ in range(2):
        found = ask(broker, fc.FindCoordinatorRequest(key="g"), 3)
        assert isinstance(found, fc.FindCoordinatorResponse)
    assert found.error_code == 0


@pytest.mark.parametrize("timeout", [5_999, 0, -1, 1_800_001])
def test_join_group_session_timeout_outside_the_broker_limits(broker: Broker, timeout: int) -> None:
    coordinator_ready(broker)
    answer = join(broker, timeout, "someone")
    assert (answer.error_code, answer.member_id, answer.generation_id) == (
        INVALID_SESSION_TIMEOUT,
        "someone",
        -1,
    )


@pytest.mark.parametrize("timeout", [6_000, 1_800_000])
def test_join_group_session_timeout_at_the_limits_is_accepted(broker: Broker, timeout: int) -> None:
    coordinator_ready(broker)
    assert join(broker, timeout).error_code == 79  # MEMBER_ID_REQUIRED: admitted to the next step


def test_join_group_session_timeout_is_checked_before_the_coordinator_is_found(
    broker: Broker, untouched: None
) -> None:
    # GroupCoordinatorService.joinGroup refuses the timeout before routing the request
    # to the group's __consumer_offsets partition, which does not exist yet.
    assert join(broker, 1_000, "m").error_code == INVALID_SESSION_TIMEOUT
    assert join(broker, 10_000, "m").error_code == NOT_COORDINATOR
    # ... but after the group id check.
    assert join(broker, 1_000, "m", group="").error_code == INVALID_GROUP_ID
