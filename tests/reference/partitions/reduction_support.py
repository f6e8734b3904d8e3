"""Helpers for the KIP-694 tests: a broker with the feature on, requests through the
in-process loopback connection (sans-IO), time moved by hand."""

from __future__ import annotations

from pathlib import Path

from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsRequest,
    DeletePartitionsResponse,
    DeletePartitionsTopic,
)
from lethe_formats.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponsePartition,
)
from lethe_formats.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
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
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_reference.server.defaults import broker_config

START_MS = 1_800_000_000_000
#: ``log.segment.delete.delay.ms`` of the test brokers (the -delete dir removal delay).
FILE_DELETE_DELAY_MS = 5000
INTERVAL_MS = 300_000


def new_broker(
    log_dir: Path, *, enable: bool = True, overrides: dict[str, str] | None = None
) -> Broker:
    settings = {
        "log.segment.delete.delay.ms": str(FILE_DELETE_DELAY_MS),
        "group.initial.rebalance.delay.ms": "0",
        **(overrides or {}),
    }
    if enable:  # otherwise the default (false) applies
        settings["delete.topic.partition.enable"] = "true"
    broker = Broker(
        log_dir,
        config=broker_config(overrides=settings),
        clock=ManualClock(START_MS),
        durable=False,
    )
    broker.startup()
    return broker


def restart(broker: Broker) -> Broker:
    """Clean shutdown, then a new broker on the same dir, config and clock."""
    broker.shutdown()
    again = Broker(broker.log_dir, config=broker.config, clock=broker.clock, durable=False)
    again.startup()
    return again


def advance(broker: Broker, ms: int) -> list[str]:
    """Move the clock ``ms`` forward, running every task at its due time on the way."""
    clock = broker.clock
    assert isinstance(clock, ManualClock)
    target = clock.now_ms() + ms
    ran: list[str] = []
    while True:
        due = broker.next_due_ms()
        if due is None or due > target:
            break
        clock.set(max(due, clock.now_ms()))
        ran += broker.run_due()
    clock.set(target)
    return ran


def delete_partitions(
    broker: Broker,
    *topics: tuple[str, int],
    delay_ms: int = 0,
    immediate: bool = False,
) -> DeletePartitionsResponse:
    request = DeletePartitionsRequest(
        timeout_ms=30000,
        immediate_delete=immediate,
        delete_partitions_delay_ms=delay_ms,
        topics=tuple(DeletePartitionsTopic(name, count) for name, count in topics),
    )
    return LoopbackClient(broker).call(request, DeletePartitionsResponse, 0)


def metadata(broker: Broker, topic: str, version: int = 12) -> list[MetadataResponsePartition]:
    request = MetadataRequest(
        topics=(MetadataRequestTopic(name=topic),), allow_auto_topic_creation=False
    )
    response = LoopbackClient(broker).call(request, MetadataResponse, version)
    (entry,) = response.topics
    return list(entry.partitions)


def produce(broker: Broker, topic: str, partition: int, value: bytes = b"v") -> tuple[int, int]:
    """(error code, base offset) of one single-record batch."""
    batch = build_batch([RecordSpec(b"k", value, (), START_MS)], base_offset=0)
    data = TopicProduceData(topic, (PartitionProduceData(partition, batch),))
    request = ProduceRequest(acks=-1, timeout_ms=30000, topic_data=(data,))
    response = LoopbackClient(broker).call(request, ProduceResponse)
    (answer,) = response.responses[0].partition_responses
    return answer.error_code, answer.base_offset


def commit(broker: Broker, group: str, topic: str, offsets: dict[int, int]) -> None:
    client = LoopbackClient(broker)
    client.call(FindCoordinatorRequest(key=group), FindCoordinatorResponse, 3)
    client.call(FindCoordinatorRequest(key=group), FindCoordinatorResponse, 3)
    parts = tuple(
        OffsetCommitRequestPartition(p, o, committed_metadata="") for p, o in offsets.items()
    )
    request = OffsetCommitRequest(group_id=group, topics=(OffsetCommitRequestTopic(topic, parts),))
    response = client.call(request, OffsetCommitResponse)
    assert all(p.error_code == 0 for t in response.topics for p in t.partitions)


def committed(broker: Broker, group: str, topic: str, partitions: list[int]) -> dict[int, int]:
    wanted = (OffsetFetchRequestTopic(topic, tuple(partitions)),)
    request = OffsetFetchRequest(groups=(OffsetFetchRequestGroup(group, topics=wanted),))
    response = LoopbackClient(broker).call(request, OffsetFetchResponse)
    return {
        p.partition_index: p.committed_offset
        for g in response.groups
        for t in g.topics
        for p in t.partitions
    }
