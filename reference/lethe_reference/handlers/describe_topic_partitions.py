"""DescribeTopicPartitions (key 75, v0): ``DescribeTopicPartitionsRequestHandler``.

Theory of operation
-------------------
What ``kafka-topics.sh --describe`` asks a 4.0 broker. Kafka's rules:

* which topics: every topic when ``topics`` is empty, else the named ones, each
  once; only names at or after the cursor's topic (Java ``String.compareTo``),
  sorted the same way. A cursor whose topic is not among the named ones, or
  whose partition index is negative, is INVALID_REQUEST (42) for the whole
  request (``getErrorResponse``: every named topic with the error);
* authorization: a topic the principal may not DESCRIBE is left out of an
  all-topics answer and, when named, answered TOPIC_AUTHORIZATION_FAILED (29)
  with a zero id after all the others, without looking at whether it exists;
* the limit: ``min(max.request.partition.size.limit (2000), response_partition_limit)``,
  at least 1. Partitions are listed topic by topic from the cursor's partition
  (0 for the others); when a topic does not fit, it is cut and ``next_cursor``
  names its first partition left out; when the limit is used up exactly at a
  topic boundary and another topic follows, ``next_cursor`` names that topic
  at partition 0 (whether or not it exists);
* a named topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION (3), or
  INVALID_TOPIC_EXCEPTION (17) for an illegal name, no partitions (left out
  of an all-topics answer);
* a partition: error 0 even without a leader (leader -1), its epoch, replicas,
  ISR, offline replicas, and the ELR lists. This broker keeps no ELR (KIP-966
  is off in Kafka 4.0 unless ``eligible.leader.replicas.version`` is
  finalized), so both are empty lists, which the tool prints as ``Elr: ``,
  never null (``N/A`` is what it prints when it had to use Metadata);
* authorized operations: filled in for every answered topic, errors included
  (every supported operation without an authorizer), not for refused ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_topic_partitions import (
    DescribeTopicPartitionsCursor,
    DescribeTopicPartitionsPartition,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsTopic,
)

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorized_operations
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.metadata import partition_metadata, to_protocol_uuid
from lethe_reference.metadata import INTERNAL_TOPICS, TopicInfo, topic_name_problem

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["MAX_PARTITIONS", "error_response", "handle", "java_order"]

#: Kafka's ``max.request.partition.size.limit`` default: the most one answer lists.
MAX_PARTITIONS = 2000
_METADATA_VERSION = 13  # the partition entries are Metadata's newest ones


def java_order(name: str) -> bytes:
    """Sort key equal to Java's ``String.compareTo`` (UTF-16 code units)."""
    return name.encode("utf-16-be", "surrogatepass")


def error_response(
    request: DescribeTopicPartitionsRequest, code: ErrorCode, _message: str | None
) -> DescribeTopicPartitionsResponse:
    """``DescribeTopicPartitionsRequest.getErrorResponse``: each named topic with ``code``."""
    return DescribeTopicPartitionsResponse(
        topics=tuple(DescribeTopicPartitionsTopic(code, t.name) for t in request.topics)
    )


def _selected(request: DescribeTopicPartitionsRequest, all_names: Iterable[str]) -> list[str]:
    """The topic names to describe, sorted, from the cursor's topic on; checks the cursor."""
    cursor = request.cursor
    start = java_order(cursor.topic_name) if cursor is not None else b""
    wanted = all_names if not request.topics else (t.name for t in request.topics)
    names = {n for n in wanted if java_order(n) >= start}
    if request.topics and cursor is not None and cursor.topic_name not in names:
        raise error_for_code(
            ErrorCode.INVALID_REQUEST,
            "DescribeTopicPartitionsRequest topic list should contain the cursor topic: "
            + cursor.topic_name,
        )
    if cursor is not None and cursor.partition_index < 0:
        raise error_for_code(
            ErrorCode.INVALID_REQUEST,
            "DescribeTopicPartitionsRequest cursor partition must be valid",
        )
    return sorted(names, key=java_order)


def _partition(broker: Broker, info: TopicInfo, index: int) -> DescribeTopicPartitionsPartition:
    entry = partition_metadata(broker, info, index, _METADATA_VERSION)
    return DescribeTopicPartitionsPartition(
        error_code=ErrorCode.NONE,
        partition_index=index,
        leader_id=entry.leader_id,
        leader_epoch=entry.leader_epoch,
        replica_nodes=entry.replica_nodes,
        isr_nodes=entry.isr_nodes,
        eligible_leader_replicas=(),
        last_known_elr=(),
        offline_replicas=entry.offline_replicas,
    )


def _missing(name: str) -> DescribeTopicPartitionsTopic:
    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if topic_name_problem(name) is not None:
        code = ErrorCode.INVALID_TOPIC_EXCEPTION
    return DescribeTopicPartitionsTopic(code, name, is_internal=name in INTERNAL_TOPICS)


def _page(
    broker: Broker, names: list[str], first: Callable[[str], int], limit: int, all_topics: bool
) -> tuple[list[DescribeTopicPartitionsTopic], DescribeTopicPartitionsCursor | None]:
    """Kafka's ``getTopicMetadataForDescribeTopicResponse``: topics until ``limit`` partitions."""
    out: list[DescribeTopicPartitionsTopic] = []
    remaining = limit
    for name in names:
        if remaining == 0:
            return out, DescribeTopicPartitionsCursor(name, 0)
        info = broker.metadata.get(name)
        if info is None:
            if not all_topics:
                out.append(_missing(name))
            continue
        start = first(name)
        upper = min(info.partitions, start + remaining)
        out.append(
            DescribeTopicPartitionsTopic(
                ErrorCode.NONE,
                name,
                topic_id=to_protocol_uuid(info.topic_id),
                is_internal=info.internal,
                partitions=tuple(_partition(broker, info, i) for i in range(start, upper)),
            )
        )
        if upper < info.partitions:
            return out, DescribeTopicPartitionsCursor(name, upper)
        remaining -= max(upper - start, 0)
    return out, None


def _operations(broker: Broker, ctx: RequestContext, name: str | None) -> int:
    return authorized_operations(broker, ctx, ResourceType.TOPIC, name or "")


@handles(ApiKey.DESCRIBE_TOPIC_PARTITIONS, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: DescribeTopicPartitionsRequest
) -> DescribeTopicPartitionsResponse:
    """Describe the requested topics' partitions, one page of at most the limit."""
    all_topics = not request.topics
    names = _selected(request, broker.metadata.names())
    allowed = [
        n for n in names if authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, n)
    ]
    refused = [] if all_topics else [n for n in names if n not in set(allowed)]
    cursor = request.cursor

    def first(name: str) -> int:
        return cursor.partition_index if cursor is not None and name == cursor.topic_name else 0

    limit = max(min(MAX_PARTITIONS, request.response_partition_limit), 1)
    topics, next_cursor = _page(broker, allowed, first, limit, all_topics)
    answered = [
        replace(t, topic_authorized_operations=_operations(broker, ctx, t.name)) for t in topics
    ]
    answered += [
        DescribeTopicPartitionsTopic(ErrorCode.TOPIC_AUTHORIZATION_FAILED, n) for n in refused
    ]
    return DescribeTopicPartitionsResponse(topics=tuple(answered), next_cursor=next_cursor)
