"""ListOffsets (key 2), v1-10: ``KafkaApis.handleListOffsetRequestV1AndAbove``.

Theory of operation
-------------------
A topic the principal may not DESCRIBE (:mod:`.authz`) gets
TOPIC_AUTHORIZATION_FAILED (29), timestamp -1 and offset -1 on each requested
partition, before anything else is checked (``partitionSeqByAuthorized``,
catalog KIP107-LST-8). Every other requested partition gets one answer from
:func:`~.partition_ops.offsets.list_offset` (special timestamps, versions,
isolation, leader epochs: see there), except that a partition named more than
once is INVALID_REQUEST (42), answered once. Answers carry timestamp -1 and
offset -1 unless something was found; ``leader_epoch`` (v4+) is the batch's or
the leader's epoch, else -1.

Kafka builds the response from a hash map, so its topic and partition order is
arbitrary (the golden raw response lists partitions 0, 2, 1); here it is the
request order, topics grouped at their first appearance. The refused topics
come after all the others, as in Kafka (``response ++ unauthorizedResponseStatus``).
``timeout_ms`` (v10) only matters for tiered storage, which this broker does not have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)

from lethe_reference import faults
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.offsets import duplicate_partitions, list_offset

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["error_response", "handle"]


def _group(
    answers: dict[tuple[str, int], ListOffsetsPartitionResponse],
) -> ListOffsetsResponse:
    topics: dict[str, list[ListOffsetsPartitionResponse]] = {}
    for (topic, _), answer in answers.items():
        topics.setdefault(topic, []).append(answer)
    return ListOffsetsResponse(
        topics=tuple(ListOffsetsTopicResponse(name, tuple(parts)) for name, parts in topics.items())
    )


def error_response(
    request: ListOffsetsRequest, code: ErrorCode, _message: str | None
) -> ListOffsetsResponse:
    """``ListOffsetsRequest.getErrorResponse``: every partition fails with ``code``."""
    return _group(
        {
            (topic.name, p.partition_index): ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=code
            )
            for topic in request.topics
            for p in topic.partitions
        }
    )


@handles(ApiKey.LIST_OFFSETS, error_response=error_response)
def handle(broker: Broker, ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    """Answer a ListOffsets request (module docstring)."""
    keys = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    duplicates = duplicate_partitions(keys)
    allowed = authorized_names(
        broker, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, {t.name for t in request.topics}
    )
    if faults.active(broker, "list-offsets-checks-existence-first"):
        allowed |= {t.name for t in request.topics if broker.metadata.get(t.name) is not None}
    answers: dict[tuple[str, int], ListOffsetsPartitionResponse] = {}
    refused: dict[tuple[str, int], ListOffsetsPartitionResponse] = {}
    for topic in request.topics:
        for p in topic.partitions:
            key = (topic.name, p.partition_index)
            if topic.name not in allowed:
                refused[key] = ListOffsetsPartitionResponse(
                    partition_index=p.partition_index,
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                )
                continue
            if key in duplicates:
                answers[key] = ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=ErrorCode.INVALID_REQUEST
                )
                continue
            answers[key] = list_offset(
                broker,
                topic.name,
                p.partition_index,
                timestamp=p.timestamp,
                current_leader_epoch=p.current_leader_epoch,
                replica_id=request.replica_id,
                isolation_level=request.isolation_level,
                version=ctx.api_version,
            )
    return _group(answers | refused)  # refused topics last: ``response ++ unauthorized``
