"""Helpers for the in-process cluster tests: a 3-broker cluster on a virtual clock,
requests sent over the wire (lethe_conformance's client) or dispatched in the loop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lethe_conformance.client import calls
from lethe_conformance.client.batches import build_records
from lethe_conformance.client.connection import KafkaConnection
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec
from lethe_reference.clock import ManualClock
from lethe_reference.embedded_cluster import EmbeddedCluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import dispatch

START_MS = 1_800_000_000_000
SETTINGS = {"log.retention.check.interval.ms": "1000", "log.segment.delete.delay.ms": "0"}


@contextmanager
def running_cluster(tmp_path: Path) -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(tmp_path, 3, overrides=SETTINGS, clock=ManualClock(START_MS)) as c:
        yield c


def connect(cluster: EmbeddedCluster, node: int) -> KafkaConnection:
    return KafkaConnection.open("127.0.0.1", cluster.port(node))


def create(cluster: EmbeddedCluster, topic: str, configs: dict[str, str] | None = None) -> None:
    with connect(cluster, 1) as conn:
        answer = calls.create_topic(conn, topic, 1, configs or {}, replication_factor=3)
    assert answer.topics[0].error_code == 0, answer


def produce(cluster: EmbeddedCluster, node: int, topic: str, count: int, acks: int = -1) -> int:
    records = build_records([RecordSpec(b"k", b"v%d" % i, (), START_MS) for i in range(count)])
    with connect(cluster, node) as conn:
        response = calls.produce(conn, topic, 0, records, acks=acks)
    answer = response.responses[0].partition_responses[0]
    assert answer.error_code == 0, answer
    return answer.base_offset


def offsets(cluster: EmbeddedCluster, node: int, topic: str) -> tuple[int, int, int]:
    """(log start offset, HW, LEO) of broker ``node``'s replica."""

    def read() -> tuple[int, int, int]:
        log = cluster.broker(node).log(topic, 0)
        assert log is not None
        return log.log_start_offset, log.high_watermark, log.log_end_offset

    return cluster.call(read)


def delete_in_loop(
    cluster: EmbeddedCluster, node: int, topic: str, offset: int, timeout_ms: int
) -> Any:
    """DeleteRecords dispatched on broker ``node`` in the loop thread: the response, or
    the Deferred still waiting for it."""
    request = DeleteRecordsRequest(
        (DeleteRecordsTopic(topic, (DeleteRecordsPartition(0, offset),)),), timeout_ms
    )
    ctx = RequestContext(int(ApiKey.DELETE_RECORDS), 2, 1, "test", 1)
    return cluster.call(lambda: dispatch(cluster.broker(node), ctx, request))


def result_of(answer: Any) -> tuple[int, int]:
    """(error code, low watermark) of a one-partition DeleteRecords response."""
    partition = answer.topics[0].partitions[0]
    return partition.error_code, partition.low_watermark


def segment_bases(cluster: EmbeddedCluster, node: int, topic: str) -> list[int]:
    """Base offsets of broker ``node``'s segments of partition 0."""

    def read() -> list[int]:
        log = cluster.broker(node).log(topic, 0)
        assert log is not None
        return [segment.base_offset for segment in log.segments]

    return cluster.call(read)


def produce_in_loop(
    cluster: EmbeddedCluster, node: int, topic: str, count: int, *, acks: int, timeout_ms: int
) -> Any:
    """Produce dispatched on broker ``node`` in the loop thread: the response or a Deferred."""
    records = build_records([RecordSpec(b"k", b"v%d" % i, (), START_MS) for i in range(count)])
    data = TopicProduceData(topic, (PartitionProduceData(0, records),))
    request = ProduceRequest(acks=acks, timeout_ms=timeout_ms, topic_data=(data,))
    ctx = RequestContext(int(ApiKey.PRODUCE), 9, 1, "test", 1)
    return cluster.call(lambda: dispatch(cluster.broker(node), ctx, request))
