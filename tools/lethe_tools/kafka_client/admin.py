"""A small blocking admin client: bootstrap, Metadata, and DeleteRecords to partition leaders.

Theory of operation
-------------------
:meth:`AdminClient.delete_records` follows the Java admin's driver for
DeleteRecords (``DeleteRecordsHandler`` over ``PartitionLeaderStrategy``) so a
tool built on it reports what ``kafka-delete-records.sh`` reports::

              +---------------- unmapped ----------------+
              |                                          |
    start --> lookup (Metadata) --leader--> DeleteRecords to that leader --> done
              |   retry: unknown topic/partition,         |  NONE: low watermark
              |   no leader, leader-ish partition errors  |  InvalidMetadata error: unmapped
              |   fail: TOPIC_AUTHORIZATION_FAILED,       |  other retriable (e.g. 7): again
              |   INVALID_TOPIC_EXCEPTION, other errors   |  anything else: failed
              +-------------------------------------------+

Everything runs under one deadline, ``default.api.timeout.ms`` (Java's
``invokeDriver`` deadline); between rounds the client sleeps the Java
exponential backoff (``retry.backoff.ms`` doubling up to ``retry.backoff.max.ms``,
20 % jitter). Partitions still unresolved at the deadline fail with Java's
``TimeoutException`` text for a call that was waiting to be sent: "Timed out
waiting for a node assignment. Call: deleteRecords(api=METADATA)" while the
leader was unknown, ``api=DELETE_RECORDS`` after a retriable answer. So a topic
that does not exist ends in a timeout, as with the Java tool (it tolerates
unknown topics, a topic may be being created). A lost connection or a response
timeout is retried like a retriable error after a fresh lookup; a SASL refusal
(``AuthenticationException``) is not retried and fails every open partition.

The DeleteRecords request carries ``timeout_ms`` = the API timeout, as Java's
does, which bounds the broker's purgatory wait.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

from lethe_formats.protocol.error_codes import ErrorCode, is_retriable
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

from lethe_tools.kafka_client.config import ClientConfig
from lethe_tools.kafka_client.connection import (
    AuthenticationFailedError,
    BrokerConnection,
    ClientError,
)
from lethe_tools.kafka_client.java_errors import (
    INVALID_METADATA_CODES,
    JavaException,
    java_exception,
)

__all__ = ["AdminClient", "DeleteRecordsOutcome", "TopicPartition"]

_BOOTSTRAP = -1
_TIMEOUT = "org.apache.kafka.common.errors.TimeoutException"
_API_EXCEPTION = "org.apache.kafka.common.errors.ApiException"
_RETRY_TOPIC_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.BROKER_NOT_AVAILABLE,
}
_RETRY_PARTITION_ERRORS = {
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.REPLICA_NOT_AVAILABLE,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.BROKER_NOT_AVAILABLE,
    ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
}


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:  # Java's TopicPartition.toString
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class DeleteRecordsOutcome:
    """One partition's result: a low watermark, or the exception Java would raise."""

    low_watermark: int | None = None
    error: JavaException | None = None


@dataclass(slots=True)
class _Round:
    """Per-call state of one delete_records run."""

    offsets: Mapping[TopicPartition, int]
    api_timeout_ms: int
    deadline: float
    results: dict[TopicPartition, DeleteRecordsOutcome]
    unmapped: set[TopicPartition]
    leaders: dict[TopicPartition, int]


class AdminClient:
    """Connections by node id (-1: the bootstrap broker), opened on first use."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self._connections: dict[int, BrokerConnection] = {}
        self._nodes: dict[int, tuple[str, int]] = {}

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    # -- connections -------------------------------------------------------

    def _open(self, host: str, port: int) -> BrokerConnection:
        return BrokerConnection.open(
            host,
            port,
            client_id=self.config.client_id,
            connect_timeout=self.config.connect_timeout_ms / 1000,
            request_timeout=self.config.request_timeout_ms / 1000,
            sasl=self.config.sasl,
            tls=self.config.tls,
        )

    def _connection(self, node: int) -> BrokerConnection:
        connection = self._connections.get(node)
        if connection is not None:
            return connection
        if node == _BOOTSTRAP:
            connection = self._open_bootstrap()
        else:
            host, port = self._nodes[node]
            connection = self._open(host, port)
        self._connections[node] = connection
        return connection

    def _open_bootstrap(self) -> BrokerConnection:
        failure: ClientError | None = None
        for host, port in self.config.bootstrap_servers:
            try:
                return self._open(host, port)
            except ClientError as error:
                failure = error
        assert failure is not None, "bootstrap_servers is never empty"
        raise failure

    def _drop(self, node: int) -> None:
        connection = self._connections.pop(node, None)
        if connection is not None:
            connection.close()

    def any_connection(self) -> BrokerConnection:
        """A connection for a call any broker can answer: one already open, else bootstrap."""
        return self._connection(self._any_node())

    def node_connection(self, node: int) -> BrokerConnection:
        """A connection to broker ``node`` (learnt from the last Metadata answer)."""
        return self._connection(node)

    def learn_node(self, node: int, host: str, port: int) -> None:
        """Record a broker's address learnt outside Metadata (a FindCoordinator answer)."""
        self._nodes[node] = (host, port)

    def _any_node(self) -> int:
        """A node to ask for metadata: one already connected, else the bootstrap broker."""
        return next(iter(self._connections), _BOOTSTRAP)

    # -- Metadata ----------------------------------------------------------

    def metadata(self, topics: Iterable[str] | None) -> MetadataResponse:
        """One Metadata request (None: all topics); no auto-creation. Learns the brokers."""
        node = self._any_node()
        request = MetadataRequest(
            topics=None if topics is None else tuple(MetadataRequestTopic(name=t) for t in topics),
            allow_auto_topic_creation=False,
        )
        try:
            response = cast(
                MetadataResponse,
                self._connection(node).request(
                    request, timeout=self.config.request_timeout_ms / 1000
                ),
            )
        except ClientError:
            self._drop(node)
            raise
        self._nodes.update({b.node_id: (b.host, b.port) for b in response.brokers})
        return response

    # -- DeleteRecords -----------------------------------------------------

    def delete_records(
        self, offsets: Mapping[TopicPartition, int], *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, DeleteRecordsOutcome]:
        """Delete records below each offset (-1: the high watermark); one outcome per partition."""
        api_timeout = self.config.default_api_timeout_ms if timeout_ms is None else timeout_ms
        state = _Round(
            offsets=offsets,
            api_timeout_ms=api_timeout,
            deadline=time.monotonic() + api_timeout / 1000,
            results={},
            unmapped=set(offsets),
            leaders={},
        )
        attempt = 0
        while state.unmapped or state.leaders:
            if attempt and not self._back_off(attempt - 1, state.deadline):
                break
            attempt += 1
            if state.unmapped:
                self._lookup(state)
            for node, partitions in _by_node(state.leaders).items():
                self._delete_on(node, partitions, state)
        for tp in state.unmapped:
            state.results[tp] = _timed_out("METADATA")
        for tp in state.leaders:
            state.results[tp] = _timed_out("DELETE_RECORDS")
        return {tp: state.results[tp] for tp in offsets}

    def _back_off(self, attempt: int, deadline: float) -> bool:
        """Sleep the Java backoff; False when the deadline comes first."""
        base = min(self.config.retry_backoff_max_ms, self.config.retry_backoff_ms * 2**attempt)
        pause = base * random.uniform(0.8, 1.2) / 1000
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(pause, remaining))
        return time.monotonic() < deadline

    def _lookup(self, state: _Round) -> None:
        """Metadata for the unmapped partitions' topics: leaders, failures, or retry."""
        topics = sorted({tp.topic for tp in state.unmapped})
        try:
            response = self.metadata(topics)
        except AuthenticationFailedError as error:
            _fail_all(state, error.java)
            return
        except ClientError:
            return  # retried after the backoff, like a failed lookup call
        for topic in response.topics:
            if topic.name is None:
                continue
            wanted = {tp for tp in state.unmapped if tp.topic == topic.name}
            if topic.error_code != ErrorCode.NONE:
                self._topic_error(topic.name, topic.error_code, wanted, state)
                continue
            for partition in topic.partitions:
                tp = TopicPartition(topic.name, partition.partition_index)
                if tp not in wanted:
                    continue
                if partition.error_code != ErrorCode.NONE:
                    if partition.error_code not in _RETRY_PARTITION_ERRORS:
                        message = f"Unexpected error during metadata lookup for {tp}"
                        _finish(state, tp, error=java_exception(partition.error_code, message))
                elif partition.leader_id >= 0 and partition.leader_id in self._nodes:
                    state.unmapped.discard(tp)
                    state.leaders[tp] = partition.leader_id

    @staticmethod
    def _topic_error(topic: str, code: int, wanted: set[TopicPartition], state: _Round) -> None:
        if code in _RETRY_TOPIC_ERRORS:
            return
        for tp in wanted:
            if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                text = (
                    f"Failed to fetch metadata for partition {tp} due to topic authorization "
                    "failure"
                )
            elif code == ErrorCode.INVALID_TOPIC_EXCEPTION:
                text = f"Failed to fetch metadata for partition {tp} due to invalid topic `{topic}`"
            else:
                text = (
                    f"Failed to fetch metadata for partition {tp} due to unexpected error "
                    f"for topic `{topic}`"
                )
            _finish(state, tp, error=java_exception(code, text))

    def _delete_on(self, node: int, partitions: list[TopicPartition], state: _Round) -> None:
        """One DeleteRecords request to ``node`` for ``partitions``; sort out each answer."""
        request = _delete_request(partitions, state.offsets, state.api_timeout_ms)
        try:
            connection = self._connection(node)
            timeout = min(self.config.request_timeout_ms / 1000, _remaining(state.deadline))
            response = cast(DeleteRecordsResponse, connection.request(request, timeout=timeout))
        except AuthenticationFailedError as error:
            _fail_all(state, error.java)
            return
        except ClientError:
            self._drop(node)
            for tp in partitions:
                del state.leaders[tp]
                state.unmapped.add(tp)
            return
        answered: set[TopicPartition] = set()
        for topic in response.topics:
            for result in topic.partitions:
                tp = TopicPartition(topic.name, result.partition_index)
                if tp not in state.leaders:
                    continue
                answered.add(tp)
                _sort_out(state, tp, result.error_code, result.low_watermark)
        if not any(tp in state.unmapped for tp in partitions):
            for tp in set(partitions) - answered:
                text = (
                    f"The response from broker {node} did not contain a result for topic "
                    f"partition {tp}"
                )
                _finish(state, tp, error=JavaException(_API_EXCEPTION, text))


def _sort_out(state: _Round, tp: TopicPartition, code: int, low_watermark: int) -> None:
    if code == ErrorCode.NONE:
        _finish(state, tp, low_watermark=low_watermark)
    elif code in INVALID_METADATA_CODES:
        del state.leaders[tp]
        state.unmapped.add(tp)
    elif not is_retriable(code):
        _finish(state, tp, error=java_exception(code))
    # other retriable codes (REQUEST_TIMED_OUT...): stay mapped, asked again next round


def _finish(
    state: _Round,
    tp: TopicPartition,
    *,
    low_watermark: int | None = None,
    error: JavaException | None = None,
) -> None:
    state.unmapped.discard(tp)
    state.leaders.pop(tp, None)
    state.results[tp] = DeleteRecordsOutcome(low_watermark, error)


def _fail_all(state: _Round, error: JavaException) -> None:
    """Authentication failures are not retried: every open partition gets ``error``."""
    for tp in [*state.unmapped, *state.leaders]:
        _finish(state, tp, error=error)


def _timed_out(api: str) -> DeleteRecordsOutcome:
    text = f"Timed out waiting for a node assignment. Call: deleteRecords(api={api})"
    return DeleteRecordsOutcome(error=JavaException(_TIMEOUT, text))


def _remaining(deadline: float) -> float:
    return max(0.001, deadline - time.monotonic())


def _by_node(leaders: Mapping[TopicPartition, int]) -> dict[int, list[TopicPartition]]:
    grouped: dict[int, list[TopicPartition]] = {}
    for tp, node in sorted(leaders.items()):
        grouped.setdefault(node, []).append(tp)
    return grouped


def _delete_request(
    partitions: list[TopicPartition], offsets: Mapping[TopicPartition, int], timeout_ms: int
) -> DeleteRecordsRequest:
    topics: dict[str, list[DeleteRecordsPartition]] = {}
    for tp in partitions:
        topics.setdefault(tp.topic, []).append(DeleteRecordsPartition(tp.partition, offsets[tp]))
    return DeleteRecordsRequest(
        topics=tuple(DeleteRecordsTopic(name, tuple(parts)) for name, parts in topics.items()),
        timeout_ms=min(timeout_ms, 2**31 - 1),
    )
