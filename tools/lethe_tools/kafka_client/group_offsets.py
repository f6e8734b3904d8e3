"""What the consumer groups of a cluster have read: groups, committed offsets, subscriptions.

Theory of operation
-------------------
KIP-68's option 2 (``lethe consumed-retention``) needs, from any Kafka broker,
the same facts ``kafka-consumer-groups.sh --describe`` shows. Each group lives
on one coordinator, so the calls go where the Java admin sends them::

    ListGroups            -> every broker in Metadata (each lists only its own groups)
    FindCoordinator(g)    -> any broker: g's coordinator
    OffsetFetch(g, all)   -> the coordinator: committed offsets of every partition
    DescribeGroups(g)     -> the coordinator (classic "consumer" groups only): each
                             member's subscription, decoded with lethe_formats'
                             ConsumerProtocolSubscription
    ListOffsets(-2, -1)   -> each partition's leader: log start offset, high watermark

OffsetFetch asks with ``require_stable`` (v7+), so offsets of open transactions
are not taken for committed ones (a broker answers UNSTABLE_OFFSET_COMMIT, which
is retried). Retriable answers (a coordinator loading or moving, a leader
moving) are retried with the client's backoff until ``default.api.timeout.ms``;
anything else, or running out of time, is :class:`GroupReadError`: the caller
must then act on nothing (KIP-68: an exception while reading offsets means a
min committed offset of -1). A group whose members cannot be described
(KIP-848 ``consumer`` groups answer DescribeGroups with an error) simply has no
known subscription; its committed offsets still count.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar, cast

from lethe_formats.coordinator.consumer_protocol import decode_subscription
from lethe_formats.errors import FormatError
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode, error_name, is_retriable
from lethe_formats.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from lethe_formats.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchResponse,
)

from lethe_tools.kafka_client.admin import AdminClient, TopicPartition
from lethe_tools.kafka_client.connection import ClientError

__all__ = ["GroupReadError", "GroupReader", "ListedConsumerGroup", "PartitionBounds"]

_OFFSET_FETCH_GROUPS_FROM = 8
_FIND_COORDINATOR_BATCH_FROM = 4
_EARLIEST, _LATEST = -2, -1
_RETRY = {ErrorCode.UNSTABLE_OFFSET_COMMIT}

T = TypeVar("T")


class GroupReadError(Exception):
    """The groups or their offsets could not all be read: act on nothing."""


class _RetryError(Exception):
    """A retriable answer; the step is tried again after the backoff."""


@dataclass(frozen=True, slots=True)
class ListedConsumerGroup:
    group_id: str
    protocol_type: str
    group_type: str


@dataclass(frozen=True, slots=True)
class PartitionBounds:
    log_start_offset: int
    high_watermark: int


class GroupReader:
    """The calls of the module docstring over an open :class:`AdminClient`."""

    def __init__(self, admin: AdminClient) -> None:
        self.admin = admin

    def _timeout(self) -> float:
        return self.admin.config.request_timeout_ms / 1000

    def _retrying(self, what: str, step: Callable[[], T]) -> T:
        """``step()`` until it does not ask for a retry, within the API timeout."""
        deadline = time.monotonic() + self.admin.config.default_api_timeout_ms / 1000
        attempt = 0
        while True:
            try:
                return step()
            except (_RetryError, ClientError) as failure:
                pause = min(
                    self.admin.config.retry_backoff_max_ms,
                    self.admin.config.retry_backoff_ms * 2**attempt,
                )
                attempt += 1
                wait = pause * random.uniform(0.8, 1.2) / 1000
                if time.monotonic() + wait >= deadline:
                    raise GroupReadError(f"{what}: {failure}") from None
                time.sleep(wait)

    def _check(self, what: str, code: int) -> None:
        if code == ErrorCode.NONE:
            return
        if is_retriable(code) or code in _RETRY:
            raise _RetryError(error_name(code))
        raise GroupReadError(f"{what}: {error_name(code)}")

    # -- groups --------------------------------------------------------------------

    def list_groups(self) -> list[ListedConsumerGroup]:
        """Every group of every broker (ListGroups to each broker Metadata lists)."""
        brokers = self._retrying("Metadata", lambda: self.admin.metadata([])).brokers
        found: dict[str, ListedConsumerGroup] = {}
        for broker in sorted(brokers, key=lambda b: b.node_id):
            for group in self._retrying(
                f"ListGroups to broker {broker.node_id}",
                lambda node=broker.node_id: self._list_on(node),  # type: ignore[misc]
            ):
                found[group.group_id] = group
        return [found[name] for name in sorted(found)]

    def _list_on(self, node: int) -> list[ListedConsumerGroup]:
        response = cast(
            ListGroupsResponse,
            self.admin.node_connection(node).request(ListGroupsRequest(), timeout=self._timeout()),
        )
        self._check(f"ListGroups to broker {node}", response.error_code)
        return [
            ListedConsumerGroup(g.group_id, g.protocol_type, g.group_type or "classic")
            for g in response.groups
        ]

    def _coordinator(self, group: str) -> int:
        connection = self.admin.any_connection()
        if connection.version_for(ApiKey.FIND_COORDINATOR) >= _FIND_COORDINATOR_BATCH_FROM:
            request = FindCoordinatorRequest(coordinator_keys=(group,))
            response = cast(
                FindCoordinatorResponse, connection.request(request, timeout=self._timeout())
            )
            (found,) = [c for c in response.coordinators if c.key == group]
            self._check(f"FindCoordinator({group})", found.error_code)
            node, host, port = found.node_id, found.host, found.port
        else:
            response = cast(
                FindCoordinatorResponse,
                connection.request(FindCoordinatorRequest(key=group), timeout=self._timeout()),
            )
            self._check(f"FindCoordinator({group})", response.error_code)
            node, host, port = response.node_id, response.host, response.port
        self.admin.learn_node(node, host, port)
        return node

    # -- committed offsets ---------------------------------------------------------

    def committed_offsets(self, group: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (OffsetFetch of every topic, require_stable)."""
        return self._retrying(f"OffsetFetch({group})", lambda: self._offsets_once(group))

    def _offsets_once(self, group: str) -> dict[TopicPartition, int]:
        connection = self.admin.node_connection(self._coordinator(group))
        version = connection.version_for(ApiKey.OFFSET_FETCH)
        if version >= _OFFSET_FETCH_GROUPS_FROM:
            request = OffsetFetchRequest(
                groups=(OffsetFetchRequestGroup(group, topics=None),), require_stable=True
            )
        else:
            request = OffsetFetchRequest(group_id=group, topics=None, require_stable=True)
        response = cast(OffsetFetchResponse, connection.request(request, timeout=self._timeout()))
        if version >= _OFFSET_FETCH_GROUPS_FROM:
            (answer,) = response.groups
            code, topics = answer.error_code, answer.topics
        else:
            code, topics = response.error_code, response.topics
        self._check(f"OffsetFetch({group})", code)
        offsets: dict[TopicPartition, int] = {}
        for topic in topics:
            for partition in topic.partitions:
                self._check(f"OffsetFetch({group}) of {topic.name}", partition.error_code)
                if partition.committed_offset >= 0:
                    offsets[TopicPartition(topic.name, partition.partition_index)] = (
                        partition.committed_offset
                    )
        return offsets

    # -- subscriptions ---------------------------------------------------------------

    def subscribed_topics(self, group: ListedConsumerGroup) -> set[str]:
        """Topics the members of a classic consumer group subscribe to (else empty)."""
        if group.protocol_type != "consumer" or group.group_type.lower() != "classic":
            return set()
        return self._retrying(
            f"DescribeGroups({group.group_id})", lambda: self._describe_once(group.group_id)
        )

    def _describe_once(self, group: str) -> set[str]:
        connection = self.admin.node_connection(self._coordinator(group))
        request = DescribeGroupsRequest(groups=(group,), include_authorized_operations=False)
        response = cast(
            DescribeGroupsResponse, connection.request(request, timeout=self._timeout())
        )
        (described,) = response.groups
        if described.error_code != ErrorCode.NONE:
            if is_retriable(described.error_code):
                raise _RetryError(error_name(described.error_code))
            return set()  # not a classic group (any more): no subscription to read
        topics: set[str] = set()
        for member in described.members:
            try:
                topics.update(decode_subscription(member.member_metadata).topics)
            except FormatError:
                continue  # a member of another protocol's metadata
        return topics

    # -- partitions --------------------------------------------------------------------

    def partition_bounds(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, PartitionBounds]:
        """Log start offset and high watermark of each partition, from its leader."""
        wanted = sorted(set(partitions))
        return self._retrying("ListOffsets", lambda: self._bounds_once(wanted))

    def _bounds_once(self, wanted: list[TopicPartition]) -> dict[TopicPartition, PartitionBounds]:
        leaders: dict[TopicPartition, int] = {}
        response = self.admin.metadata(sorted({tp.topic for tp in wanted}))
        for topic in response.topics:
            self._check(f"Metadata of {topic.name}", topic.error_code)
            for partition in topic.partitions:
                leaders[TopicPartition(topic.name or "", partition.partition_index)] = (
                    partition.leader_id
                )
        bounds: dict[TopicPartition, PartitionBounds] = {}
        for tp in wanted:
            node = leaders.get(tp, -1)
            if node < 0:
                raise _RetryError(f"no leader for {tp}")
            start = self._offset(node, tp, _EARLIEST)
            bounds[tp] = PartitionBounds(start, self._offset(node, tp, _LATEST))
        return bounds

    def _offset(self, node: int, tp: TopicPartition, timestamp: int) -> int:
        asked = ListOffsetsPartition(tp.partition, timestamp=timestamp)
        wanted = ListOffsetsTopic(tp.topic, (asked,))
        request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(wanted,))
        response = cast(
            ListOffsetsResponse,
            self.admin.node_connection(node).request(request, timeout=self._timeout()),
        )
        answer = response.topics[0].partitions[0]
        self._check(f"ListOffsets of {tp}", answer.error_code)
        return answer.offset
