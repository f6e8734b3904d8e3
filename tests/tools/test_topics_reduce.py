"""``lethe topics --alter --partitions N`` below the current count: KIP-694's topic tool.

KIP694-CLI-1: the reduction is accepted, ``--delete-partitions-delay`` is passed on
(default 0: deleted at once) and DeletePartitions is sent. KIP694-CLI-2: the three
warnings of the KIP's "Kafka Topic Command changes" section (keyed records, feature
disabled, topic under change), quoted here from the KIP text. The broker's state
and its Metadata modes (KIP694-MODE-1) are read from the embedded reference broker
on a manual clock, never from the tool's output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_reference.server.defaults import broker_config
from tools_support import Run

LetheRun = Callable[..., Run]
START_MS = 1_800_000_000_000
INTERVAL_MS = 300_000  # delete.topic.partition.interval.delay.ms default (KIP694-CFG-2)
READ_WRITE, READ_ONLY = 0, 1
ERROR = "Error while executing topic command : "
#: The KIP's warnings, verbatim ("Kafka Topic Command changes").
KEYED = (
    "WARNING: If partitions are increased for a topic that has a key, the partition logic "
    "or ordering of the messages will be affected"
)
DISABLED = (
    "WARNING: This feature is only enabled with Metadata version above 10 and "
    "delete.topic.partition.enable turned on"
)
UNDER_CHANGE = "WARNING: The topic is currently under changes"


def start(log_dir: Path, *, enable: bool) -> EmbeddedBroker:
    overrides = {"log.segment.delete.delay.ms": "5000"}
    if enable:
        overrides["delete.topic.partition.enable"] = "true"
    broker = EmbeddedBroker(
        log_dir, config=broker_config(overrides=overrides), clock=ManualClock(START_MS)
    )
    return broker.start()


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    broker = start(tmp_path / "logs", enable=True)
    try:
        broker.call(lambda b: b.create_topic("t", 5))
        yield broker
    finally:
        broker.stop()


def alter(lethe: LetheRun, kafka: EmbeddedBroker, topic: str, count: int, *extra: str) -> Run:
    return lethe(
        "topics",
        "--bootstrap-server",
        kafka.bootstrap,
        "--alter",
        "--topic",
        topic,
        "--partitions",
        str(count),
        *extra,
    )


def modes(kafka: EmbeddedBroker, topic: str) -> dict[int, int]:
    """Partition -> mode, from a Metadata v12 answer of the broker (KIP694-META-1)."""

    def ask(b: Broker) -> dict[int, int]:
        request = MetadataRequest(
            topics=(MetadataRequestTopic(name=topic),), allow_auto_topic_creation=False
        )
        (entry,) = LoopbackClient(b).call(request, MetadataResponse, 12).topics
        return {p.partition_index: p.mode for p in entry.partitions}

    return kafka.call(ask)


def produce(kafka: EmbeddedBroker, topic: str, partition: int, key: bytes | None) -> None:
    def send(b: Broker) -> int:
        batch = build_batch([RecordSpec(key, b"v", (), START_MS)], base_offset=0)
        data = TopicProduceData(topic, (PartitionProduceData(partition, batch),))
        request = ProduceRequest(acks=-1, timeout_ms=30000, topic_data=(data,))
        response = LoopbackClient(b).call(request, ProduceResponse)
        return response.responses[0].partition_responses[0].error_code

    assert kafka.call(send) == 0


# -- KIP694-CLI-1 ------------------------------------------------------------------


def test_alter_below_the_count_with_a_delay_keeps_the_removed_partitions_read_only(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-1: --delete-partitions-delay reaches the broker; KIP694-MODE-1 modes."""
    run = alter(lethe, kafka, "t", 3, "--delete-partitions-delay", "60000")
    assert run.status == 0
    assert run.err == ""
    assert run.lines == ["Partitions 3,4 of topic t: read-only, deleted after 60000 ms."]
    assert modes(kafka, "t") == {0: 0, 1: 0, 2: 0, 3: READ_ONLY, 4: READ_ONLY}
    reduction = kafka.call(lambda b: b.metadata.get("t").reduction)  # type: ignore[union-attr]
    assert reduction is not None
    assert (reduction.count, reduction.delay_ms) == (3, 60000)
    kafka.advance(INTERVAL_MS)  # the first check after the delay deletes them
    assert modes(kafka, "t") == {0: READ_WRITE, 1: READ_WRITE, 2: READ_WRITE}


def test_alter_below_the_count_without_a_delay_deletes_the_partitions_at_once(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-1: the delay defaults to 0, which deletes at once."""
    run = alter(lethe, kafka, "t", 2)
    assert (run.status, run.err) == (0, "")
    assert run.lines == ["Partitions 2,3,4 of topic t: deleted."]
    assert modes(kafka, "t") == {0: READ_WRITE, 1: READ_WRITE}
    assert kafka.call(lambda b: b.metadata.get("t").partitions) == 2  # type: ignore[union-attr]


def test_describe_shows_the_mode_of_partitions_pending_deletion(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-1 / KIP694-MODE-1: a pending reduction is visible in --describe."""
    alter(lethe, kafka, "t", 4, "--delete-partitions-delay", "60000")
    run = lethe("topics", "--bootstrap-server", kafka.bootstrap, "--describe", "--topic", "t")
    partition_lines = run.lines[1:]
    assert [line.endswith("\tMode: ReadOnly") for line in partition_lines] == [
        False,
        False,
        False,
        False,
        True,
    ]
    assert partition_lines[0].endswith("\tElr: N/A\tLastKnownElr: N/A")


def test_a_negative_delete_partitions_delay_is_refused_before_connecting(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-1: the delay is milliseconds, 0 or more (KIP694-ERR-6 on the broker)."""
    run = alter(lethe, kafka, "t", 3, "--delete-partitions-delay", "-1")
    assert run.status == 1
    assert run.err.splitlines()[0] == (
        "The delete-partitions-delay must be 0 or more (milliseconds)"
    )
    assert modes(kafka, "t") == dict.fromkeys(range(5), READ_WRITE)


# -- KIP694-CLI-2 ------------------------------------------------------------------


def test_a_topic_with_keyed_records_gets_the_keyed_warning_and_is_still_reduced(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-2: a record with a key in the topic's data triggers the warning."""
    produce(kafka, "t", 1, b"customer-7")
    run = alter(lethe, kafka, "t", 4)
    assert run.status == 0
    assert run.err.splitlines() == [KEYED]
    assert len(modes(kafka, "t")) == 4


def test_keyed_records_after_deleted_ones_are_found_from_the_log_start_offset(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-2: the sample starts at the log start offset, not at offset 0."""
    produce(kafka, "t", 0, None)
    produce(kafka, "t", 0, b"customer-7")

    def delete_first(b: Broker) -> int:
        target = DeleteRecordsTopic("t", (DeleteRecordsPartition(0, 1),))
        request = DeleteRecordsRequest(topics=(target,), timeout_ms=30000)
        response = LoopbackClient(b).call(request, DeleteRecordsResponse)
        return response.topics[0].partitions[0].low_watermark

    assert kafka.call(delete_first) == 1
    run = alter(lethe, kafka, "t", 4)
    assert run.status == 0
    assert run.err.splitlines() == [KEYED]


def test_a_topic_whose_records_have_no_key_is_reduced_without_the_keyed_warning(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-2: records without keys (and empty partitions) give no warning."""
    produce(kafka, "t", 0, None)
    produce(kafka, "t", 4, None)
    run = alter(lethe, kafka, "t", 4)
    assert (run.status, run.err) == (0, "")


def test_a_compacted_topic_counts_as_keyed_even_when_empty(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-2: cleanup.policy=compact only takes keyed records."""
    kafka.call(lambda b: b.create_topic("kv", 3, {"cleanup.policy": "compact"}))
    run = alter(lethe, kafka, "kv", 1)
    assert run.status == 0
    assert run.err.splitlines() == [KEYED]


def test_a_topic_already_under_change_gets_the_warning_and_the_brokers_refusal(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    """KIP694-CLI-2: Metadata shows ReadOnly partitions; the broker refuses (KIP694-ERR-5)."""
    alter(lethe, kafka, "t", 4, "--delete-partitions-delay", "60000")
    for count in (2, 6):  # a second reduction, and a growth, while one is pending
        run = alter(lethe, kafka, "t", count)
        assert run.status == 1
        assert run.err.splitlines() == [UNDER_CHANGE]
        (line,) = run.lines
        assert line.startswith(
            f"{ERROR}Topic 't': org.apache.kafka.common.errors.InvalidPartitionsException: "
        )
    assert modes(kafka, "t") == {0: 0, 1: 0, 2: 0, 3: 0, 4: READ_ONLY}


def test_a_broker_without_delete_partitions_gets_the_disabled_warning_and_exit_1(
    lethe: LetheRun, tmp_path: Path
) -> None:
    """KIP694-CLI-2: no 10694 in ApiVersions (delete.topic.partition.enable=false)."""
    kafka = start(tmp_path / "off", enable=False)
    try:
        kafka.call(lambda b: b.create_topic("t", 3))
        run = alter(lethe, kafka, "t", 1)
        assert run.status == 1
        assert run.err.splitlines() == [DISABLED]
        (line,) = run.lines
        assert line.startswith(f"{ERROR}Topic 't': ")
        assert "DeletePartitions (API key 10694" in line
        assert kafka.call(lambda b: b.metadata.get("t").partitions) == 3  # type: ignore[union-attr]
    finally:
        kafka.stop()
