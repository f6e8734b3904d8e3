"""DescribeProducers (key 61, v0): ``KafkaApis.handleDescribeProducersRequest``.

Theory of operation
-------------------
Per topic, in request order, one entry per requested partition:

* an illegal topic name: INVALID_TOPIC_EXCEPTION (17) with Kafka's message
  (``Topic name is invalid: ...``);
* no READ on the topic: TOPIC_AUTHORIZATION_FAILED (29) "Topic authorization
  failed.", before existence is looked at;
* an unknown topic: UNKNOWN_TOPIC_OR_PARTITION (3) with its default message
  (``new ApiError(error)`` carries ``error.message()``);
* a partition this broker does not host: 3 without message (56 for an offline
  log dir); a cluster follower answers from its own copy, as Kafka's
  ``Partition.activeProducerState`` does not ask for leadership;
* otherwise the partition's producer state (``ProducerStateManager``): every
  producer id it knows, in Kafka's hash-map order, with epoch, last sequence,
  last timestamp, coordinator epoch and the first offset of an open
  transaction (-1 when none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_producers import (
    DescribeProducersPartition,
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeProducersTopic,
    ProducerState,
)

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.common import lookup
from lethe_reference.metadata import topic_name_problem

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["error_response", "handle", "partition_producers"]


def error_response(
    request: DescribeProducersRequest, code: ErrorCode, message: str | None
) -> DescribeProducersResponse:
    """``DescribeProducersRequest.getErrorResponse``: ``code`` on every partition."""
    return DescribeProducersResponse(
        topics=tuple(
            DescribeProducersTopic(
                t.name,
                tuple(DescribeProducersPartition(p, code, message) for p in t.partition_indexes),
            )
            for t in request.topics
        )
    )


def _topic_error(broker: Broker, ctx: RequestContext, name: str) -> tuple[ErrorCode, str] | None:
    problem = topic_name_problem(name)
    if problem is not None:
        return ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {problem}"
    if not authorize(broker, ctx, AclOperation.READ, ResourceType.TOPIC, name):
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        return code, code.message
    if broker.metadata.get(name) is None:
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return code, code.message
    return None


def partition_producers(broker: Broker, topic: str, partition: int) -> DescribeProducersPartition:
    """One partition's active producers, or why there are none to show."""
    found = lookup(broker, topic, partition, leader_only=False)
    if isinstance(found, ErrorCode):
        return DescribeProducersPartition(partition, found)
    producers = tuple(
        ProducerState(
            producer_id=row.producer_id,
            producer_epoch=row.producer_epoch,
            last_sequence=row.last_sequence,
            last_timestamp=row.timestamp,
            coordinator_epoch=row.coordinator_epoch,
            current_txn_start_offset=row.current_txn_first_offset,
        )
        for row in found.producer_state.active_producers()
    )
    return DescribeProducersPartition(partition, ErrorCode.NONE, active_producers=producers)


@handles(ApiKey.DESCRIBE_PRODUCERS, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: DescribeProducersRequest
) -> DescribeProducersResponse:
    """The active producers of each requested partition."""
    topics = []
    for topic in request.topics:
        error = _topic_error(broker, ctx, topic.name)
        partitions = tuple(
            partition_producers(broker, topic.name, p)
            if error is None
            else DescribeProducersPartition(p, error[0], error[1])
            for p in topic.partition_indexes
        )
        topics.append(DescribeProducersTopic(topic.name, partitions))
    return DescribeProducersResponse(topics=tuple(topics))
