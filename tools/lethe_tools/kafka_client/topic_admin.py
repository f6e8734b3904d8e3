"""Topic administration over one broker: list, describe, create, delete, grow, shrink.

Theory of operation
-------------------
``lethe topics`` needs six calls the Java admin makes for ``kafka-topics.sh``,
plus KIP-694's DeletePartitions. Each is one request/response on a connection
of :class:`~lethe_tools.kafka_client.admin.AdminClient` (the bootstrap broker,
or one already open): in KRaft every broker forwards CreateTopics,
DeleteTopics, CreatePartitions and DeletePartitions to the controller, so
"any broker" is where the Java admin sends them too (``LeastLoadedNodeProvider``)::

    Metadata(all)        -> topic names, ids, partitions, leaders, replicas, ISR, modes
    DescribeConfigs      -> the topic's config entries and their sources
    CreateTopics         -> one topic result (error code + message)
    DeleteTopics         -> one topic result
    CreatePartitions     -> one topic result      (N > current count)
    DeletePartitions     -> one topic result      (N < current count, key 10694, KIP-694)
    ListOffsets + Fetch  -> per partition, to its leader: the first records, for keys

A topic-level error becomes :class:`TopicCallError` holding the Java exception
the admin would complete the future with (``Errors.exception(message)``: the
broker's message when it sent one, else the code's default), which the command
prints. Nothing is retried: the topic tool passes ``retryOnQuotaViolation(false)``
and a failed call ends the command, as in Kafka's tool.

Keys. :meth:`TopicCaller.holds_keys` answers "does this topic hold keyed
records?" (KIP-694's first warning) from a bounded sample: one Fetch per
partition (``max_wait_ms`` 0, at most 64 KiB) from its log start offset, which
a ListOffsets EARLIEST asks for first (a Fetch below the log start is answered
OFFSET_OUT_OF_RANGE with log start -1, as Kafka does); control batches are
skipped and a batch cut short by the byte limit ends the look::

    ListOffsets(t-p, -2) -> start    Fetch(t-p, start, 64 KiB) -> batches -> any key?

Modes. Metadata v9+ carries a partition's KIP-694 mode as a tagged field
(``MetadataResponsePartition.mode``: 0 ReadWrite, 1 ReadOnly, -1 None); the
client asks at the highest version both sides speak, so a mode is seen whenever
the broker has one to report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import cast

from lethe_formats.errors import FormatError
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsRequest,
    DeletePartitionsResponse,
    DeletePartitionsTopic,
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
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.metadata import MetadataResponseTopic
from lethe_formats.protocol.schema import Struct
from lethe_formats.records.scan import read_log

from lethe_tools.kafka_client.admin import AdminClient
from lethe_tools.kafka_client.connection import BrokerConnection
from lethe_tools.kafka_client.java_errors import JavaException, java_exception

__all__ = [
    "DEFAULT_CONFIG_SOURCE",
    "ConfigEntry",
    "TopicCallError",
    "TopicCaller",
]

#: ``DescribeConfigs`` resource type of a topic (``ConfigResource.Type.TOPIC``).
_TOPIC_RESOURCE = 2
#: ``ConfigSource.DEFAULT_CONFIG``: the entries ``kafka-topics.sh --describe`` leaves out.
DEFAULT_CONFIG_SOURCE = 5
#: Bytes fetched per partition to look for keys (the first batches from the log start).
_SAMPLE = 64 * 1024
#: ListOffsets timestamp asking for the log start offset (Java: EARLIEST_TIMESTAMP).
_EARLIEST = -2


class TopicCallError(Exception):
    """A topic-level error answer; ``java`` is the admin future's exception."""

    def __init__(self, java: JavaException) -> None:
        super().__init__(java.message)
        self.java = java


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    name: str
    value: str | None
    source: int

    @property
    def is_default(self) -> bool:
        return self.source == DEFAULT_CONFIG_SOURCE


class TopicCaller:
    """The topic calls on an open :class:`AdminClient` (see the module docstring)."""

    def __init__(self, admin: AdminClient) -> None:
        self.admin = admin

    def _request(self, body: Struct) -> Struct:
        connection = self.admin.any_connection()
        return connection.request(body, timeout=self.admin.config.request_timeout_ms / 1000)

    def supports(self, api_key: int) -> bool:
        """Whether the broker listed ``api_key`` in its ApiVersions answer."""
        return api_key in self.admin.any_connection().broker_versions

    def topics(self) -> dict[str, MetadataResponseTopic]:
        """Every topic the broker knows (internal ones included), by name."""
        response = self.admin.metadata(None)
        return {t.name: t for t in response.topics if t.name is not None}

    def configs(self, topic: str) -> list[ConfigEntry]:
        """The topic's config entries in the broker's order (DescribeConfigs, no synonyms)."""
        request = DescribeConfigsRequest(
            resources=(DescribeConfigsResource(_TOPIC_RESOURCE, topic, None),),
            include_synonyms=False,
            include_documentation=False,
        )
        response = cast(DescribeConfigsResponse, self._request(request))
        (result,) = response.results
        _raise_for(result.error_code, result.error_message)
        return [ConfigEntry(c.name, c.value, c.config_source) for c in result.configs]

    def create_topic(
        self,
        topic: str,
        partitions: int | None,
        replication_factor: int | None,
        configs: Mapping[str, str],
        timeout_ms: int,
    ) -> None:
        """CreateTopics for one topic; -1 asks for the broker's default count / factor."""
        entry = CreatableTopic(
            name=topic,
            num_partitions=-1 if partitions is None else partitions,
            replication_factor=-1 if replication_factor is None else replication_factor,
            assignments=(),
            configs=tuple(CreatableTopicConfig(k, v) for k, v in configs.items()),
        )
        request = CreateTopicsRequest(topics=(entry,), timeout_ms=timeout_ms, validate_only=False)
        response = cast(CreateTopicsResponse, self._request(request))
        (result,) = response.topics
        _raise_for(result.error_code, result.error_message)

    def delete_topic(self, topic: str, timeout_ms: int) -> None:
        version = self.admin.any_connection().version_for(ApiKey.DELETE_TOPICS)
        if version >= 6:
            request = DeleteTopicsRequest(
                topics=(DeleteTopicState(name=topic),), timeout_ms=timeout_ms
            )
        else:
            request = DeleteTopicsRequest(topic_names=(topic,), timeout_ms=timeout_ms)
        response = cast(DeleteTopicsResponse, self._request(request))
        (result,) = response.responses
        _raise_for(result.error_code, result.error_message)

    def create_partitions(self, topic: str, count: int, timeout_ms: int) -> None:
        request = CreatePartitionsRequest(
            topics=(CreatePartitionsTopic(topic, count, None),),
            timeout_ms=timeout_ms,
            validate_only=False,
        )
        response = cast(CreatePartitionsResponse, self._request(request))
        (result,) = response.results
        _raise_for(result.error_code, result.error_message)

    def delete_partitions(
        self, topic: str, count: int, delay_ms: int, timeout_ms: int
    ) -> dict[int, int]:
        """DeletePartitions (KIP-694) down to ``count``; partition -> its new mode."""
        request = DeletePartitionsRequest(
            timeout_ms=timeout_ms,
            immediate_delete=delay_ms == 0,
            delete_partitions_delay_ms=delay_ms,
            topics=(DeletePartitionsTopic(topic, count),),
        )
        response = cast(DeletePartitionsResponse, self._request(request))
        _raise_for(response.error_code, response.error_message)
        (result,) = response.responses
        _raise_for(result.error_code, result.error_message)
        modes: dict[int, int] = {}
        for partition in result.partitions:
            _raise_for(partition.error_code, partition.error_message)
            modes[partition.partition_index] = partition.status_code
        return modes

    def holds_keys(self, topic: MetadataResponseTopic) -> bool:
        """Whether a sample of the topic's records has a key (see the module docstring).

        Per partition with a leader: ListOffsets EARLIEST (-2) for its log start
        offset, then one Fetch from there of at most ``_SAMPLE`` bytes, no wait.
        A partition answering with an error is skipped.
        """
        name = topic.name or ""
        for partition in topic.partitions:
            if partition.leader_id < 0:
                continue
            connection = self.admin.node_connection(partition.leader_id)
            start = self._log_start(connection, name, partition.partition_index)
            if start is None:
                continue
            request = _fetch_request(name, partition.partition_index, start)
            if connection.version_for(ApiKey.FETCH) >= 13:
                fetched = replace(request.topics[0], topic_id=topic.topic_id)
                request = replace(request, topics=(fetched,))
            response = cast(FetchResponse, connection.request(request, timeout=self._timeout()))
            answer = response.responses[0].partitions[0]
            if answer.error_code == ErrorCode.NONE and _first_key_found(
                bytes(answer.records or b"")
            ):
                return True
        return False

    def _log_start(self, connection: BrokerConnection, topic: str, partition: int) -> int | None:
        wanted = ListOffsetsTopic(topic, (ListOffsetsPartition(partition, timestamp=_EARLIEST),))
        request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(wanted,))
        response = cast(ListOffsetsResponse, connection.request(request, timeout=self._timeout()))
        answer = response.topics[0].partitions[0]
        return answer.offset if answer.error_code == ErrorCode.NONE else None

    def _timeout(self) -> float:
        return self.admin.config.request_timeout_ms / 1000


def _fetch_request(topic: str, partition: int, offset: int) -> FetchRequest:
    wanted = FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=_SAMPLE)
    return FetchRequest(
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=_SAMPLE,
        isolation_level=0,
        topics=(FetchTopic(topic=topic, partitions=(wanted,)),),
    )


def _raise_for(code: int, message: str | None) -> None:
    if code != ErrorCode.NONE:
        raise TopicCallError(java_exception(code, message or None))


def _first_key_found(records: bytes) -> bool:
    """Whether a data record in ``records`` (a Fetch answer's bytes) has a key.

    Control batches (transaction markers) carry keys of their own and are
    skipped; a torn last batch (Fetch cuts at ``partition_max_bytes``) or any
    undecodable entry ends the look, counting only what was read before it.
    """
    batches = read_log(records, verify_crc=False)
    while True:
        try:
            entry = next(batches)
        except (StopIteration, FormatError):
            return False
        if isinstance(entry, RecordBatch):
            if entry.header.is_control:
                continue
            if any(record.key is not None for record in entry.records):
                return True
        elif any(m.key is not None for m in (entry.inner or (entry,))):
            return True
