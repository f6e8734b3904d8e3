"""The extensions from a client: KIP-694's ``delete_partitions`` and KIP-87's tombstone flag.

Theory of operation
-------------------
Designers of the unadopted KIPs try them the way their users would: through a
client. No Python Kafka client can set a record's attributes byte or call an
API key Kafka does not have, so lethe ships a small blocking client shaped like
the ones users know (kafka-python's ``KafkaProducer.send``, ``KafkaConsumer
.assign/seek/poll``, the admin's ``create_partitions``), built on
:class:`~lethe_tools.kafka_client.admin.AdminClient` and lethe's protocol
definitions:

* :class:`ExtensionAdmin` ``.delete_partitions({topic: DeletePartitions(total_count,
  immediate_delete, delay_ms)})``: KIP-694's ``deletePartitions(Map<String,
  DeletePartitions>)`` with the KIP's ``totalCount`` and ``immediateDelete``
  and the request's ``delete_partitions_delay``; one :class:`DeletePartitionsResult`
  per topic (the removed partitions' modes, or the Java exception), never an
  exception for one topic's refusal.
* :class:`Producer` ``.send(ProducerRecord(..., tombstone=True))``: KIP-87's
  ``ProducerRecord`` with its tombstone parameter. As the KIP's compatibility
  section says, a record built without it is a tombstone exactly when its value
  is null, and a null value that is *not* a tombstone is refused (an old
  consumer would take it for one). The record travels with bit 0 of its
  attributes set (catalog KIP87-BIT-1), one Produce per send, ``acks`` all.
* :class:`Consumer` ``.poll()`` returns :class:`ConsumerRecord` with
  ``is_tombstone`` (a null value or bit 0). It sends the Fetch tagged field
  ``tombstone_flag_aware`` (KIP87-PRD-6), so the broker does not down-convert;
  ``Consumer(..., tombstone_flag_aware=False)`` reads as a stock client does.

Partitions are explicit (``partition=0`` by default): the client has no
partitioner, since keyed partitioning is beside the point of either KIP.

Leaders move (an election, a reassignment, a broker stopped). The producer and the
consumer cache each partition's leader and leader epoch from Metadata; an answer that
says the cache is stale (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ...) or a lost
connection drops the entry, and the call is retried on the leader a new Metadata names,
as the Java clients do, until the request timeout.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from lethe_formats.errors import FormatError
from lethe_formats.model import Header, RecordBatch
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_partitions import (
    DELETE_PARTITIONS_API_KEY,
    DeletePartitionsRequest,
    DeletePartitionsResponse,
    DeletePartitionsTopic,
)
from lethe_formats.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log

from lethe_tools.kafka_client.admin import AdminClient, TopicPartition
from lethe_tools.kafka_client.config import ClientConfig, parse_bootstrap_servers
from lethe_tools.kafka_client.connection import BrokerConnection, ConnectionLostError
from lethe_tools.kafka_client.java_errors import JavaException, java_exception

__all__ = [
    "Consumer",
    "ConsumerRecord",
    "DeletePartitions",
    "DeletePartitionsResult",
    "ExtensionAdmin",
    "ExtensionError",
    "Producer",
    "ProducerRecord",
    "RecordMetadata",
    "TopicPartition",
]

_FETCH_TOPIC_IDS_FROM = 13
T = TypeVar("T")
#: errors that mean "the leader you asked is not (or no longer) the leader": the client
#: forgets the leader and asks Metadata again (``Errors`` that are
#: ``InvalidMetadataException`` in Kafka's Java client)
STALE_LEADER_ERRORS = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)
_FETCH_BYTES = 1 << 20


class ExtensionError(Exception):
    """A refused call; ``java`` is the exception Kafka's Java client would raise."""

    def __init__(self, java: JavaException, code: int = ErrorCode.UNKNOWN_SERVER_ERROR) -> None:
        super().__init__(str(java))
        self.java = java
        self.code = code


def _config(bootstrap_servers: str, client_id: str) -> ClientConfig:
    return ClientConfig(parse_bootstrap_servers(bootstrap_servers), client_id=client_id)


def _raise_for(code: int, message: str | None = None) -> None:
    if code != ErrorCode.NONE:
        raise ExtensionError(java_exception(code, message or None), code)


# -- KIP-694 -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeletePartitions:
    """KIP-694's ``DeletePartitions``: the topic's new total count, and when to delete.

    ``immediate_delete`` True (the default) removes the partitions at once;
    otherwise they stay ReadOnly for ``delay_ms`` and are removed after it.
    """

    total_count: int
    immediate_delete: bool = True
    delay_ms: int = 0

    def __post_init__(self) -> None:
        if self.total_count < 1:
            raise ValueError(f"total_count must be at least 1, not {self.total_count}")
        if self.delay_ms < 0 or (self.immediate_delete and self.delay_ms):
            raise ValueError("delay_ms must be >= 0, and 0 with immediate_delete")


@dataclass(frozen=True, slots=True)
class DeletePartitionsResult:
    """One topic's answer: removed partition -> mode (1 ReadOnly, -1 None), or the error."""

    modes: Mapping[int, int] = field(default_factory=dict)
    error: JavaException | None = None


class ExtensionAdmin:
    """An admin client for the extensions' calls (``with`` closes its connections)."""

    def __init__(self, bootstrap_servers: str, *, client_id: str = "lethe-admin") -> None:
        self._admin = AdminClient(_config(bootstrap_servers, client_id))

    def __enter__(self) -> ExtensionAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._admin.close()

    def delete_partitions(
        self, partitions: Mapping[str, DeletePartitions], *, timeout_ms: int = 30_000
    ) -> dict[str, DeletePartitionsResult]:
        """KIP-694 ``deletePartitions``: one DeletePartitions request per delay setting.

        The request carries one ``immediate_delete`` and one delay, so topics are
        grouped by them. A broker without the API (a stock Kafka, or the switch
        off) fails every topic with ``UnsupportedVersionException``.
        """
        results: dict[str, DeletePartitionsResult] = {}
        groups: dict[tuple[bool, int], list[tuple[str, int]]] = {}
        for topic, wanted in partitions.items():
            groups.setdefault((wanted.immediate_delete, wanted.delay_ms), []).append(
                (topic, wanted.total_count)
            )
        connection = self._admin.any_connection()
        for (immediate, delay_ms), topics in groups.items():
            if DELETE_PARTITIONS_API_KEY not in connection.broker_versions:
                error = java_exception(
                    ErrorCode.UNSUPPORTED_VERSION,
                    "The broker does not support DELETE_PARTITIONS (KIP-694)",
                )
                results.update({t: DeletePartitionsResult(error=error) for t, _ in topics})
                continue
            request = DeletePartitionsRequest(
                timeout_ms=timeout_ms,
                immediate_delete=immediate,
                delete_partitions_delay_ms=delay_ms,
                topics=tuple(DeletePartitionsTopic(t, count) for t, count in topics),
            )
            response = cast(
                DeletePartitionsResponse,
                connection.request(request, timeout=self._admin.config.request_timeout_ms / 1000),
            )
            results.update(_delete_partitions_results(response, [t for t, _ in topics]))
        return results


def _delete_partitions_results(
    response: DeletePartitionsResponse, asked: Sequence[str]
) -> dict[str, DeletePartitionsResult]:
    if response.error_code != ErrorCode.NONE:
        refused = java_exception(response.error_code, response.error_message or None)
        return {t: DeletePartitionsResult(error=refused) for t in asked}
    results: dict[str, DeletePartitionsResult] = {}
    for topic in response.responses:
        error: JavaException | None = None
        if topic.error_code != ErrorCode.NONE:
            error = java_exception(topic.error_code, topic.error_message or None)
        for partition in topic.partitions:
            if error is None and partition.error_code != ErrorCode.NONE:
                error = java_exception(partition.error_code, partition.error_message or None)
        modes = {p.partition_index: p.status_code for p in topic.partitions}
        results[topic.name] = DeletePartitionsResult({} if error else modes, error)
    for topic_name in asked:
        if topic_name not in results:
            missing = f"The response did not contain a result for topic {topic_name}"
            results[topic_name] = DeletePartitionsResult(error=java_exception(-1, missing))
    return results


# -- KIP-87 ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProducerRecord:
    """KIP-87's ProducerRecord: ``tombstone`` None means "tombstone iff the value is null"."""

    topic: str
    value: bytes | None = None
    key: bytes | None = None
    partition: int = 0
    timestamp_ms: int | None = None
    headers: Sequence[tuple[str, bytes | None]] = ()
    tombstone: bool | None = None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None if self.tombstone is None else self.tombstone

    def __post_init__(self) -> None:
        if self.tombstone is False and self.value is None:
            raise ValueError(
                "a record with a null value must be a tombstone (KIP-87: an old consumer "
                "would read it as one)"
            )


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """A fetched record; ``is_tombstone``: a null value, or the KIP-87 flag."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    is_tombstone: bool


class _PartitionClient:
    """Leader lookup and connections shared by the producer and the consumer."""

    def __init__(self, bootstrap_servers: str, client_id: str) -> None:
        self._admin = AdminClient(_config(bootstrap_servers, client_id))
        self._leaders: dict[TopicPartition, int] = {}
        #: the leader epoch Metadata gave with the leader (a consumer's Fetch sends it, so a
        #: replica that is no longer the leader answers FENCED_LEADER_EPOCH, KIP-320)
        self._epochs: dict[TopicPartition, int] = {}

    def __enter__(self) -> _PartitionClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._admin.close()

    def _timeout(self) -> float:
        return self._admin.config.request_timeout_ms / 1000

    def _leader(self, tp: TopicPartition) -> BrokerConnection:
        """The partition leader's connection (Metadata when not known yet)."""
        node = self._leaders.get(tp)
        if node is None:
            response = self._admin.metadata([tp.topic])
            known = False
            for topic in response.topics:
                _raise_for(topic.error_code)
                for partition in topic.partitions:
                    known |= partition.partition_index == tp.partition
                    if partition.leader_id >= 0:
                        key = TopicPartition(tp.topic, partition.partition_index)
                        self._leaders[key] = partition.leader_id
                        self._epochs[key] = partition.leader_epoch
            node = self._leaders.get(tp)
            if node is None:
                _raise_for(
                    ErrorCode.LEADER_NOT_AVAILABLE
                    if known
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                )
        assert node is not None
        return self._admin.node_connection(node)

    def _on_leader(self, tp: TopicPartition, call: Callable[[BrokerConnection], T]) -> T:
        """``call(leader connection)``, retried on a fresh leader while the answer says the
        cached one is stale: the Java clients' ``retriable`` errors that request a metadata
        update (NOT_LEADER_OR_FOLLOWER, a fenced or unknown leader epoch, no leader yet)
        or a lost connection, backing off ``retry.backoff.ms`` up to the request timeout."""
        deadline = time.monotonic() + self._timeout()
        backoff = self._admin.config.retry_backoff_ms / 1000
        while True:
            try:
                return call(self._leader(tp))
            except (ExtensionError, ConnectionLostError) as error:
                code = error.code if isinstance(error, ExtensionError) else None
                if code is not None and code not in STALE_LEADER_ERRORS:
                    raise
                self._leaders.pop(tp, None)
                if time.monotonic() + backoff > deadline:
                    raise
                time.sleep(backoff)

    def _topic_id(self, topic: str) -> uuid.UUID:
        (found,) = self._admin.metadata([topic]).topics
        return found.topic_id


class Producer(_PartitionClient):
    """``send`` one record and wait for its offset (acks all); see the module docstring."""

    def __init__(self, bootstrap_servers: str, *, client_id: str = "lethe-producer") -> None:
        super().__init__(bootstrap_servers, client_id)

    def __enter__(self) -> Producer:
        return self

    def send(self, record: ProducerRecord) -> RecordMetadata:
        stamp = int(time.time() * 1000) if record.timestamp_ms is None else record.timestamp_ms
        spec = RecordSpec(
            key=record.key,
            value=record.value,
            headers=tuple(Header(k.encode("utf-8"), v) for k, v in record.headers),
            timestamp=stamp,
            kip87_tombstone=record.is_tombstone,
        )
        batch = build_batch([spec], base_offset=0)
        data = TopicProduceData(record.topic, (PartitionProduceData(record.partition, batch),))
        request = ProduceRequest(acks=-1, timeout_ms=30_000, topic_data=(data,))
        tp = TopicPartition(record.topic, record.partition)

        def produce(leader: BrokerConnection) -> int:
            response = cast(ProduceResponse, leader.request(request, timeout=self._timeout()))
            answer = response.responses[0].partition_responses[0]
            _raise_for(answer.error_code, answer.error_message)
            return int(answer.base_offset)

        return RecordMetadata(record.topic, record.partition, self._on_leader(tp, produce))


class Consumer(_PartitionClient):
    """``assign``, ``seek``, ``poll``: a consumer without a group (see the module docstring)."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        tombstone_flag_aware: bool = True,
        client_id: str = "lethe-consumer",
    ) -> None:
        super().__init__(bootstrap_servers, client_id)
        self.tombstone_flag_aware = tombstone_flag_aware
        self._positions: dict[TopicPartition, int] = {}

    def __enter__(self) -> Consumer:
        return self

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read these partitions from offset 0 (``seek`` to start elsewhere)."""
        self._positions = {tp: 0 for tp in partitions}

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._positions[tp] = offset

    def position(self, tp: TopicPartition) -> int:
        return self._positions[tp]

    def poll(self, timeout_ms: int = 0) -> list[ConsumerRecord]:
        """One Fetch per assigned partition, waiting at most ``timeout_ms`` for data."""
        found: list[ConsumerRecord] = []
        for tp, offset in sorted(self._positions.items()):
            records = self._fetch(tp, offset, timeout_ms)
            if records:
                self._positions[tp] = records[-1].offset + 1
            found += records
        return found

    def _fetch(self, tp: TopicPartition, offset: int, wait_ms: int) -> list[ConsumerRecord]:
        return self._on_leader(tp, lambda leader: self._fetch_from(leader, tp, offset, wait_ms))

    def _fetch_from(
        self, connection: BrokerConnection, tp: TopicPartition, offset: int, wait_ms: int
    ) -> list[ConsumerRecord]:
        version = connection.version_for(ApiKey.FETCH)
        wanted = FetchPartition(
            tp.partition,
            current_leader_epoch=self._epochs.get(tp, -1),
            fetch_offset=offset,
            partition_max_bytes=_FETCH_BYTES,
        )
        if version >= _FETCH_TOPIC_IDS_FROM:
            topic = FetchTopic(topic_id=self._topic_id(tp.topic), partitions=(wanted,))
        else:
            topic = FetchTopic(topic=tp.topic, partitions=(wanted,))
        request = FetchRequest(
            max_wait_ms=wait_ms,
            min_bytes=1,
            max_bytes=_FETCH_BYTES,
            isolation_level=0,
            topics=(topic,),
            tombstone_flag_aware=self.tombstone_flag_aware,
        )
        timeout = self._timeout() + wait_ms / 1000
        response = cast(FetchResponse, connection.request(request, timeout=timeout))
        answer = response.responses[0].partitions[0]
        _raise_for(answer.error_code)
        return _records(tp, bytes(answer.records or b""), offset)


def _records(tp: TopicPartition, data: bytes, offset: int) -> list[ConsumerRecord]:
    """The data records at or after ``offset`` (control batches skipped, a torn tail ignored)."""
    found: list[ConsumerRecord] = []
    entries = read_log(data)
    while True:
        try:
            entry = next(entries)
        except (StopIteration, FormatError):
            return found
        if not isinstance(entry, RecordBatch) or entry.header.is_control:
            continue
        for record in entry.records:
            at = entry.offset_of(record)
            if at < offset:
                continue
            found.append(
                ConsumerRecord(
                    tp.topic,
                    tp.partition,
                    at,
                    entry.timestamp_of(record),
                    record.key,
                    record.value,
                    tuple((h.key.decode("utf-8", "replace"), h.value) for h in record.headers),
                    record.value is None or record.has_kip87_tombstone_flag,
                )
            )
