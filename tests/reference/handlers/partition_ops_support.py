"""Helpers of the data-plane handler tests: a broker on a temp dir, requests, golden data.

Expected values in these tests come from the golden files Kafka 4.0 wrote
(fixtures/golden, see its README.md), from kafka-facts.md and from Kafka's
source, never from running lethe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
)
from lethe_formats.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.handlers import delete_records as delete_records_handler
from lethe_reference.handlers import fetch as fetch_handler
from lethe_reference.handlers import list_offsets as list_offsets_handler
from lethe_reference.handlers import produce as produce_handler
from lethe_reference.handlers.context import RequestContext
from lethe_reference.purgatory import Deferred

GOLDEN = fixtures_root() / "golden"
#: When DeleteRecords ran in the golden delete-records case (case.json ``at_ms``).
DELREC_AT_MS = 1795289205425
DELREC_TOPIC = "golden-delrec"
DELREC_CONFIGS = {"segment.bytes": "700", "index.interval.bytes": "100"}


def case_json(case: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((GOLDEN / case / "case.json").read_text("utf-8"))
    return result


def new_broker(log_dir: Path, start_ms: int = DELREC_AT_MS) -> Broker:
    broker = Broker(log_dir=log_dir, clock=ManualClock(start_ms))
    broker.startup()
    return broker


def ctx(api_key: ApiKey, version: int, client_id: str = "lethe-test") -> RequestContext:
    return RequestContext(int(api_key), version, 1, client_id, 1)


#: The handlers under test, called directly (not through the dispatch table, which
#: would import every handler module of the package).
HANDLERS: dict[ApiKey, Callable[[Broker, RequestContext, Any], Any]] = {
    ApiKey.PRODUCE: produce_handler.handle,
    ApiKey.FETCH: fetch_handler.handle,
    ApiKey.LIST_OFFSETS: list_offsets_handler.handle,
    ApiKey.DELETE_RECORDS: delete_records_handler.handle,
}


def call(broker: Broker, context: RequestContext, request: Any) -> Any:
    """Run the handler; returns the response (a completed deferred's result, or the deferred)."""
    result = HANDLERS[ApiKey(context.api_key)](broker, context, request)
    if isinstance(result, Deferred) and result.done:
        return result.result()
    return result


def produce(
    broker: Broker,
    topic: str,
    partition: int,
    records: bytes | None,
    *,
    acks: int = -1,
    version: int = 9,
    transactional_id: str | None = None,
    client_id: str = "lethe-test",
) -> PartitionProduceResponse:
    request = ProduceRequest(
        transactional_id=transactional_id,
        acks=acks,
        timeout_ms=30000,
        topic_data=(TopicProduceData(topic, (PartitionProduceData(partition, records),)),),
    )
    response = call(broker, ctx(ApiKey.PRODUCE, version, client_id), request)
    assert isinstance(response, ProduceResponse)
    return response.responses[0].partition_responses[0]


def list_offsets(
    broker: Broker,
    topic: str,
    partitions: dict[int, int],
    *,
    version: int = 10,
    isolation_level: int = 0,
    replica_id: int = -1,
) -> dict[int, ListOffsetsPartitionResponse]:
    request = ListOffsetsRequest(
        replica_id=replica_id,
        isolation_level=isolation_level,
        topics=(
            ListOffsetsTopic(
                topic,
                tuple(ListOffsetsPartition(p, -1, ts) for p, ts in partitions.items()),
            ),
        ),
    )
    response = call(broker, ctx(ApiKey.LIST_OFFSETS, version), request)
    assert isinstance(response, ListOffsetsResponse)
    return {p.partition_index: p for t in response.topics for p in t.partitions}


def delete_records(
    broker: Broker, topic: str, offsets: dict[int, int], *, version: int = 2
) -> dict[int, tuple[int, int]]:
    """partition -> (low watermark, error code)."""
    request = DeleteRecordsRequest(
        topics=(
            DeleteRecordsTopic(
                topic, tuple(DeleteRecordsPartition(p, o) for p, o in offsets.items())
            ),
        ),
        timeout_ms=30000,
    )
    response = call(broker, ctx(ApiKey.DELETE_RECORDS, version), request)
    assert isinstance(response, DeleteRecordsResponse)
    return {
        p.partition_index: (p.low_watermark, p.error_code)
        for t in response.topics
        for p in t.partitions
    }


def fetch_request(
    topic: str,
    partitions: dict[int, int],
    *,
    max_wait_ms: int = 0,
    min_bytes: int = 1,
    max_bytes: int = 0x7FFFFFFF,
    partition_max_bytes: int = 1048576,
    isolation_level: int = 0,
    session_id: int = 0,
    session_epoch: int = -1,
    topic_id: Any = None,
) -> FetchRequest:
    fetch_topic = FetchTopic(
        topic=topic,
        partitions=tuple(
            FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=partition_max_bytes)
            for p, o in partitions.items()
        ),
    )
    if topic_id is not None:
        fetch_topic = FetchTopic(topic_id=topic_id, partitions=fetch_topic.partitions)
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation_level,
        session_id=session_id,
        session_epoch=session_epoch,
        topics=(fetch_topic,),
    )


def fetch(broker: Broker, request: FetchRequest, *, version: int = 12) -> FetchResponse:
    response = call(broker, ctx(ApiKey.FETCH, version), request)
    assert isinstance(response, FetchResponse)
    return response


def delrec_rounds() -> list[dict[int, list[RecordSpec]]]:
    """The golden producer's rounds: per round, the records of each partition."""
    rounds = []
    for step in case_json("delete-records")["steps"]:
        if step["op"] != "produce":
            continue
        by_partition: dict[int, list[RecordSpec]] = {}
        for record in step["records"]:
            spec = RecordSpec(
                key=record["key"].encode(),
                value=record["value"].encode(),
                timestamp=record["timestamp"],
            )
            by_partition.setdefault(record["partition"], []).append(spec)
        rounds.append(by_partition)
    return rounds


def delrec_broker(log_dir: Path) -> Broker:
    """The golden delete-records topic, filled through the Produce handler as the
    idempotent librdkafka producer did (producer id 0, epoch 0, one batch per
    partition per round, sequence = offset)."""
    broker = new_broker(log_dir)
    broker.create_topic(DELREC_TOPIC, 3, dict(DELREC_CONFIGS))
    sequences = {0: 0, 1: 0, 2: 0}
    for round_ in delrec_rounds():
        for partition, specs in sorted(round_.items()):
            batch = build_batch(
                specs,
                base_offset=0,
                producer_id=0,
                producer_epoch=0,
                base_sequence=sequences[partition],
            )
            result = produce(broker, DELREC_TOPIC, partition, batch)
            assert result.error_code == 0, result
            assert result.base_offset == sequences[partition]
            sequences[partition] += len(specs)
    return broker
