"""One function per request the runner makes: typed arguments in, typed response out.

Each function builds the request body from lethe_formats' message classes, sends
it through :class:`~lethe_conformance.client.connection.KafkaConnection` (at the
negotiated version unless ``version`` is given) and returns the response body
unchanged: judging the answer is the runner's job, not the client's. Nothing
here retries or hides an error code.

Fetch needs a topic id from v13 on; :func:`fetch` asks Metadata for it when the
version it will use needs one and the caller did not pass it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
)
from lethe_formats.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResponse,
)
from lethe_formats.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from lethe_formats.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.incremental_alter_configs import (
    IncrementalAlterableConfig,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResource,
    IncrementalAlterConfigsResponse,
)
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
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

from lethe_conformance.client.connection import KafkaConnection

__all__ = [
    "RESOURCE_BROKER",
    "RESOURCE_TOPIC",
    "create_topic",
    "delete_records",
    "delete_topics",
    "describe_configs",
    "fetch",
    "find_coordinator",
    "incremental_alter_configs",
    "list_offsets",
    "metadata",
    "offset_commit",
    "offset_fetch",
    "produce",
    "topic_id",
]

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
OP_SET = 0
OP_DELETE = 1
_FETCH_TOPIC_IDS_FROM = 13
_DELETE_TOPICS_STATES_FROM = 6
_FIND_COORDINATOR_BATCH_FROM = 4
_OFFSET_FETCH_GROUPS_FROM = 8
#: (topic, partition, offset-ish value) rows used by several requests.
PartitionValues = Sequence[tuple[str, int, int]]


def create_topic(
    conn: KafkaConnection,
    name: str,
    partitions: int,
    configs: Mapping[str, str],
    *,
    replication_factor: int = 1,
    timeout_ms: int = 30_000,
) -> CreateTopicsResponse:
    topic = CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication_factor,
        configs=tuple(CreatableTopicConfig(k, v) for k, v in configs.items()),
    )
    return conn.call(CreateTopicsRequest((topic,), timeout_ms), CreateTopicsResponse)


def delete_topics(
    conn: KafkaConnection, names: Sequence[str], *, timeout_ms: int = 30_000
) -> DeleteTopicsResponse:
    chosen = conn.version_for(ApiKey.DELETE_TOPICS)
    if chosen >= _DELETE_TOPICS_STATES_FROM:
        request = DeleteTopicsRequest(
            topics=tuple(DeleteTopicState(name=n) for n in names), timeout_ms=timeout_ms
        )
    else:
        request = DeleteTopicsRequest(topic_names=tuple(names), timeout_ms=timeout_ms)
    return conn.call(request, DeleteTopicsResponse, version=chosen, timeout=_wait(timeout_ms))


def metadata(conn: KafkaConnection, topics: Sequence[str] | None) -> MetadataResponse:
    """Metadata for ``topics`` (None = all), never creating a topic."""
    request = MetadataRequest(
        topics=None if topics is None else tuple(MetadataRequestTopic(name=t) for t in topics),
        allow_auto_topic_creation=False,
    )
    return conn.call(request, MetadataResponse)


def topic_id(conn: KafkaConnection, topic: str) -> uuid.UUID:
    """The topic's id from Metadata (the zero UUID when unknown)."""
    for found in metadata(conn, [topic]).topics:
        if found.name == topic:
            return found.topic_id
    return uuid.UUID(int=0)


def produce(
    conn: KafkaConnection,
    topic: str,
    partition: int,
    records: bytes,
    *,
    acks: int = -1,
    timeout_ms: int = 30_000,
    version: int | None = None,
) -> ProduceResponse:
    """Append ``records`` (raw batch bytes, sent as they are) to one partition."""
    data = TopicProduceData(topic, (PartitionProduceData(partition, records),))
    request = ProduceRequest(acks=acks, timeout_ms=timeout_ms, topic_data=(data,))
    return conn.call(request, ProduceResponse, version=version)


def delete_records(
    conn: KafkaConnection,
    rows: PartitionValues,
    *,
    timeout_ms: int = 30_000,
    version: int | None = None,
) -> DeleteRecordsResponse:
    """DeleteRecords for ``(topic, partition, offset)`` rows, grouped by topic in order."""
    topics = tuple(
        DeleteRecordsTopic(name, tuple(DeleteRecordsPartition(p, o) for p, o in parts))
        for name, parts in _by_topic(rows).items()
    )
    request = DeleteRecordsRequest(topics, timeout_ms)
    return conn.call(request, DeleteRecordsResponse, version=version, timeout=_wait(timeout_ms))


def list_offsets(
    conn: KafkaConnection,
    rows: PartitionValues,
    *,
    isolation_level: int = 0,
    version: int | None = None,
) -> ListOffsetsResponse:
    """ListOffsets for ``(topic, partition, timestamp)`` rows (-1 latest, -2 earliest, ...)."""
    topics = tuple(
        ListOffsetsTopic(name, tuple(ListOffsetsPartition(p, timestamp=t) for p, t in parts))
        for name, parts in _by_topic(rows).items()
    )
    request = ListOffsetsRequest(replica_id=-1, isolation_level=isolation_level, topics=topics)
    return conn.call(request, ListOffsetsResponse, version=version)


def fetch(
    conn: KafkaConnection,
    topic: str,
    partition: int,
    offset: int,
    *,
    max_bytes: int = 1 << 20,
    max_wait_ms: int = 0,
    isolation_level: int = 0,
    log_start_offset: int = -1,
    version: int | None = None,
    tombstone_flag_aware: bool = False,
) -> FetchResponse:
    """A consumer Fetch of one partition (no fetch session); ``log_start_offset`` is the
    request's follower field, which a broker must ignore from a consumer;
    ``tombstone_flag_aware`` the KIP-87 tagged field (v12+; dropped below)."""
    chosen = conn.version_for(ApiKey.FETCH) if version is None else version
    ident = topic_id(conn, topic) if chosen >= _FETCH_TOPIC_IDS_FROM else uuid.UUID(int=0)
    part = FetchPartition(
        partition=partition,
        fetch_offset=offset,
        log_start_offset=log_start_offset,
        partition_max_bytes=max_bytes,
    )
    request = FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=max_bytes,
        isolation_level=isolation_level,
        topics=(FetchTopic(topic=topic, topic_id=ident, partitions=(part,)),),
        tombstone_flag_aware=tombstone_flag_aware,
    )
    return conn.call(request, FetchResponse, version=chosen, timeout=_wait(max_wait_ms))


def find_coordinator(conn: KafkaConnection, key: str, key_type: int = 0) -> tuple[int, int]:
    """(error code, coordinator node id) of a group (``key_type`` 0) or a transactional
    id (1), at the negotiated version."""
    chosen = conn.version_for(ApiKey.FIND_COORDINATOR)
    if chosen >= _FIND_COORDINATOR_BATCH_FROM:
        request = FindCoordinatorRequest(key_type=key_type, coordinator_keys=(key,))
        response = conn.call(request, FindCoordinatorResponse, version=chosen)
        found = [c for c in response.coordinators if c.key == key]
        return (found[0].error_code, found[0].node_id) if found else (-1, -1)
    request = FindCoordinatorRequest(key=key, key_type=key_type)
    response = conn.call(request, FindCoordinatorResponse, version=chosen)
    return response.error_code, response.node_id


def offset_commit(
    conn: KafkaConnection, group: str, rows: PartitionValues, *, version: int | None = None
) -> OffsetCommitResponse:
    """A commit outside group membership (generation -1, no member id), as assign() + commit."""
    topics = tuple(
        OffsetCommitRequestTopic(
            name, tuple(OffsetCommitRequestPartition(p, o, committed_metadata="") for p, o in parts)
        )
        for name, parts in _by_topic(rows).items()
    )
    request = OffsetCommitRequest(group_id=group, topics=topics)
    return conn.call(request, OffsetCommitResponse, version=version)


def offset_fetch(
    conn: KafkaConnection,
    group: str,
    partitions: Sequence[tuple[str, int]],
    *,
    version: int | None = None,
) -> OffsetFetchResponse:
    chosen = conn.version_for(ApiKey.OFFSET_FETCH) if version is None else version
    by_topic: dict[str, list[int]] = {}
    for name, index in partitions:
        by_topic.setdefault(name, []).append(index)
    topics = tuple(OffsetFetchRequestTopic(n, tuple(p)) for n, p in by_topic.items())
    if chosen >= _OFFSET_FETCH_GROUPS_FROM:
        request = OffsetFetchRequest(groups=(OffsetFetchRequestGroup(group, topics=topics),))
    else:
        request = OffsetFetchRequest(group_id=group, topics=topics)
    return conn.call(request, OffsetFetchResponse, version=chosen)


def describe_configs(
    conn: KafkaConnection,
    resource_type: int,
    name: str,
    keys: Sequence[str] | None = None,
    *,
    version: int | None = None,
) -> DescribeConfigsResponse:
    resource = DescribeConfigsResource(resource_type, name, None if keys is None else tuple(keys))
    request = DescribeConfigsRequest((resource,), include_synonyms=False)
    return conn.call(request, DescribeConfigsResponse, version=version)


def incremental_alter_configs(
    conn: KafkaConnection,
    resource_type: int,
    name: str,
    configs: Mapping[str, str | None],
    *,
    version: int | None = None,
) -> IncrementalAlterConfigsResponse:
    """SET each config with a value; DELETE (back to the default) each one mapped to None."""
    entries = tuple(
        IncrementalAlterableConfig(k, OP_DELETE if v is None else OP_SET, v)
        for k, v in configs.items()
    )
    resource = IncrementalAlterConfigsResource(resource_type, name, entries)
    request = IncrementalAlterConfigsRequest((resource,))
    return conn.call(request, IncrementalAlterConfigsResponse, version=version)


def _by_topic(rows: PartitionValues) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = {}
    for name, partition, value in rows:
        grouped.setdefault(name, []).append((partition, value))
    return grouped


def _wait(timeout_ms: int) -> float | None:
    """A response timeout that outlasts the broker-side wait the request asks for."""
    return None if timeout_ms <= 0 else timeout_ms / 1000 + 10.0
