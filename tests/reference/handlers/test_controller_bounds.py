"""Kafka 4.0's per-request bounds on CreateTopics / CreatePartitions, and long
creations done in background slices (loopback: real bytes, no sockets).

Expected answers: Kafka 4.0's ``ReplicationControlManager`` (10,000 partitions
per CreateTopics request, 10,000 records per controller operation) and a run
on Kafka 4.0.0 (CreatePartitions of a 1-partition topic to 20,000:
UNKNOWN_SERVER_ERROR, null message; CreateTopics of 10,001 partitions:
POLICY_VIOLATION "Excessively large number of partitions per request.", of
10,000: POLICY_VIOLATION "Unable to perform excessively large batch operation.").
"""

from __future__ import annotations

from pathlib import Path

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.metadata import MetadataRequest, MetadataResponse
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.handlers.after_jobs import INLINE_LOGS
from lethe_reference.handlers.java_order import java_hash_set_order
from lethe_reference.protocol.loopback import LoopbackClient

TOO_MANY = "Excessively large number of partitions per request."
TOO_LARGE = "Unable to perform excessively large batch operation."


def broker_at(tmp_path: Path, **static: str) -> Broker:
    clock = ManualClock(1_700_000_000_000)  # next_due_ms is compared with now
    broker = Broker(tmp_path / "logs", config=BrokerConfig(static), clock=clock, durable=False)
    broker.startup()
    return broker


def create_topics(broker: Broker, *topics: CreatableTopic) -> list[tuple[str, int, str | None]]:
    request = CreateTopicsRequest(topics=topics, timeout_ms=30_000)
    response = LoopbackClient(broker).call(request, CreateTopicsResponse, 7)
    return [(t.name, t.error_code, t.error_message) for t in response.topics]


def grow(*rows: tuple[str, int], validate_only: bool = False) -> CreatePartitionsRequest:
    topics = tuple(CreatePartitionsTopic(name, count, None) for name, count in rows)
    return CreatePartitionsRequest(topics=topics, timeout_ms=30_000, validate_only=validate_only)


def produce_request(topic: str, partition: int, value: bytes) -> ProduceRequest:
    records = build_batch([RecordSpec(key=None, value=value, timestamp=0)], base_offset=0)
    data = (TopicProduceData(topic, (PartitionProduceData(partition, records),)),)
    return ProduceRequest(acks=1, timeout_ms=1000, topic_data=data)


def results(response: CreatePartitionsResponse) -> list[tuple[str, int, str | None]]:
    return [(r.name, r.error_code, r.error_message) for r in response.results]


def dirs(broker: Broker, topic: str) -> int:
    return sum(1 for p in broker.log_dir.iterdir() if p.name.startswith(f"{topic}-"))


def test_create_topics_over_10000_partitions_per_request_changes_nothing(tmp_path: Path) -> None:
    broker = broker_at(tmp_path, **{"num.partitions": "4001"})
    over = [
        (CreatableTopic("one", 10_001, 1, (), ()),),
        (CreatableTopic("a", 6_000, 1, (), ()), CreatableTopic("b", -1, 1, (), ())),
    ]
    for topics in over:
        answer = create_topics(broker, *topics)
        assert answer == [(t.name, ErrorCode.POLICY_VIOLATION, TOO_MANY) for t in topics]
    # exactly 10,000 partitions pass the first bound; 10,001 records fail the second
    answer = create_topics(broker, CreatableTopic("edge", 10_000, 1, (), ()))
    assert answer == [("edge", ErrorCode.POLICY_VIOLATION, TOO_LARGE)]
    assert len(broker.metadata) == 0
    assert list(broker.log_dir.glob("*-0")) == []


def test_the_partition_bound_is_checked_before_the_names(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    answer = create_topics(broker, CreatableTopic("bad name!", 10_001, 1, (), ()))
    assert answer == [("bad name!", ErrorCode.POLICY_VIOLATION, TOO_MANY)]


def test_create_partitions_over_the_record_bound_fails_and_changes_nothing(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    broker.create_topic("t", 1)
    client = LoopbackClient(broker)
    for count in (20_000, 10_002):
        answer = client.call(grow(("t", count)), CreatePartitionsResponse, 3)
        assert results(answer) == [("t", ErrorCode.UNKNOWN_SERVER_ERROR, None)]
    assert broker.metadata.get("t").partitions == 1
    assert len(broker.background) == 0
    assert dirs(broker, "t") == 1


def test_create_partitions_shares_one_budget_in_request_order(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    for name in ("va", "vb", "vc"):
        broker.create_topic(name, 1)
    rows = [("va", 6_001), ("missing", 5), ("vb", 6_001), ("vc", 2)]
    answer = LoopbackClient(broker).call(
        grow(*rows, validate_only=True), CreatePartitionsResponse, 3
    )
    # Kafka 4.0.0's answer to this very request (HashSet order, then the shared budget)
    assert results(answer) == [
        ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None),
        ("va", ErrorCode.NONE, None),
        ("vb", ErrorCode.UNKNOWN_SERVER_ERROR, None),  # overflows the 10,000 records
        ("vc", ErrorCode.UNKNOWN_SERVER_ERROR, None),  # Kafka's list is full from then on
    ]
    assert [broker.metadata.get(n).partitions for n in ("va", "vb", "vc")] == [1, 1, 1]


def test_duplicates_and_topics_come_in_kafkas_hash_set_order(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    for name in ("same", "less", "more"):
        broker.create_topic(name, 3)
    broker.create_partitions("more", 5)
    rows = [("same", 4), ("dup", 2), ("less", 4), ("dup", 3), ("same", 9), ("more", 5)]
    answer = LoopbackClient(broker).call(
        grow(*rows, validate_only=True), CreatePartitionsResponse, 3
    )
    assert results(answer) == [  # Kafka 4.0.0's answer to this very request
        ("same", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("dup", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("more", ErrorCode.INVALID_PARTITIONS, "Topic already has 5 partition(s)."),
        ("less", ErrorCode.NONE, None),
    ]


def test_exactly_10000_new_partitions_fit(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    broker.create_topic("va", 1)
    client = LoopbackClient(broker)
    fits = client.call(grow(("va", 10_001), validate_only=True), CreatePartitionsResponse, 3)
    over = client.call(grow(("va", 10_002), validate_only=True), CreatePartitionsResponse, 3)
    assert results(fits) == [("va", ErrorCode.NONE, None)]
    assert results(over) == [("va", ErrorCode.UNKNOWN_SERVER_ERROR, None)]


def test_a_large_creation_runs_in_slices_while_others_are_served(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    broker.create_topic("big", 1)
    broker.create_topic("other", 1)
    count = 1 + 20 * INLINE_LOGS
    admin, other = LoopbackClient(broker), LoopbackClient(broker)
    admin.send(grow(("big", count)), 3)
    assert admin.responses() == []  # deferred: only the registry changed so far
    assert len(broker.background) == 1
    # another client is answered while the job is pending (nothing ran it yet)
    metadata = other.call(MetadataRequest(topics=None), MetadataResponse, 12)
    assert {t.name: len(t.partitions) for t in metadata.topics} == {"big": count, "other": 1}
    produced = other.call(produce_request("other", 0, b"v"), ProduceResponse, 9)
    assert produced.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    slices = 0
    while broker.background.pending:
        assert broker.next_due_ms() == broker.clock.now_ms()
        broker.run_due()
        slices += 1
    assert slices > 1
    [(_, answer)] = admin.responses()
    assert isinstance(answer, CreatePartitionsResponse)
    assert results(answer) == [("big", ErrorCode.NONE, None)]
    assert dirs(broker, "big") == count


def test_a_small_creation_is_answered_at_once(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    answer = create_topics(broker, CreatableTopic("s", INLINE_LOGS, 1, (), ()))
    assert answer[0][1:] == (ErrorCode.NONE, None)
    assert dirs(broker, "s") == INLINE_LOGS
    assert not broker.background.pending


def test_a_restart_creates_the_logs_an_interrupted_job_left(tmp_path: Path) -> None:
    broker = broker_at(tmp_path)
    client = LoopbackClient(broker)
    client.send(CreateTopicsRequest((CreatableTopic("big", 40, 1, (), ()),), 30_000), 7)
    broker.run_due()
    made = dirs(broker, "big")
    assert 0 < made < 40
    broker.shutdown()  # abandons the job; the registry already says 40
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    again = broker_at(tmp_path)
    assert again.metadata.get("big").partitions == 40
    assert dirs(again, "big") == 40


def test_java_hash_set_order_matches_the_jdk() -> None:
    # HashSet iteration orders printed by JDK 17 (jshell: new HashSet<>(List.of(...))
    # built by add() in the order given)
    assert java_hash_set_order(["va", "missing", "vb", "vc"]) == ["missing", "va", "vb", "vc"]
    grown = [f"t{i}" for i in range(20)]  # 20 names: the table grew to 32 bins
    assert ",".join(java_hash_set_order(grown)) == (
        "t4,t5,t6,t7,t8,t9,t10,t12,t11,t14,t13,t16,t15,t18,t17,t0,t1,t19,t2,t3"
    )
    mixed = ["orders", "payments", "a", "b", "zz", "topic-1", "topic-10", "topic-2", "Ünïcode"]
    assert ",".join(java_hash_set_order([*mixed, "x.y"])) == (
        "zz,a,b,x.y,payments,orders,topic-1,topic-2,Ünïcode,topic-10"
    )
    removed = java_hash_set_order([f"topic-{i}" for i in range(13)], {"topic-3", "topic-11"})
    assert ",".join(removed) == (
        "topic-6,topic-7,topic-8,topic-9,topic-0,topic-1,topic-2,topic-10,topic-4,topic-5,topic-12"
    )
