"""DeletePartitions (key 10694, KIP-694): reduce topics' partition counts, as a controller.

Theory of operation
-------------------
Served only while ``delete.topic.partition.enable`` is true (otherwise the key
is unknown: not advertised, the connection closed, catalog KIP694-DISC-1; see
``enabled=`` in :mod:`.dispatch`). The request names topics with their new
total ``count``; the reference broker is its own controller, so the mode change
is applied before the response leaves and ``timeout_ms`` never runs out
(REQUEST_TIMED_OUT, KIP694-ERR-7, cannot happen on one node).

Checks, in order (the catalog's KIP694-ERR-* decisions)::

    delete_partitions_delay_ms < 0      every topic INVALID_REQUEST (42), and the
                                        request-level error too: nothing is changed
    a topic named twice                 INVALID_REQUEST "Duplicate topic name." (listed
                                        first, as CreatePartitions lists them)
    authorization (DELETE on TOPIC)     TOPIC_AUTHORIZATION_FAILED (29) with a null message
                                        (as Kafka 4.0's CreatePartitions answers it) when the
                                        authorizer denies it (handlers/authz.py; without one
                                        everything is allowed), existing or not
    unknown topic                       UNKNOWN_TOPIC_OR_PARTITION (3)
    internal topic                      INVALID_TOPIC_EXCEPTION (17)
    a reduction already pending         INVALID_PARTITIONS (37) "... is currently under changes"
    count >= current or count < 1       INVALID_PARTITIONS (37)

A topic that passes is reduced (:func:`~lethe_reference.partitions.deletion.start_reduction`):
its result lists every removed partition with ``status_code`` its mode after
the request, 1 (ReadOnly) while the delay runs, -1 (None) when
``immediate_delete`` is set or the delay is 0 and the partitions are deleted
at once (KIP694-API-4, KIP694-API-5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsPartitionResult,
    DeletePartitionsRequest,
    DeletePartitionsResponse,
    DeletePartitionsTopic,
    DeletePartitionsTopicResult,
)

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.partitions.deletion import enabled, start_reduction

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["UNDER_CHANGE", "check_topic", "handle"]

#: The KIP's topic-command warning, as the message of KIP694-ERR-5.
UNDER_CHANGE = "The topic {name} is currently under changes: partitions are pending deletion."


def _failed(name: str, code: ErrorCode, message: str | None) -> DeletePartitionsTopicResult:
    return DeletePartitionsTopicResult(name=name, error_code=code, error_message=message)


def _error_response(
    request: DeletePartitionsRequest, code: ErrorCode, message: str | None
) -> DeletePartitionsResponse:
    """Every topic, and the request, fail with ``code``."""
    return DeletePartitionsResponse(
        error_code=code,
        error_message=message,
        responses=tuple(_failed(t.name, code, message) for t in request.topics),
    )


def check_topic(broker: Broker, topic: DeletePartitionsTopic) -> tuple[ErrorCode, str | None]:
    """The per-topic checks of the module docstring (after duplicates); NONE when it may go."""
    info = broker.metadata.get(topic.name)
    if info is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if info.internal:
        return (
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"The partitions of internal topic {topic.name} cannot be deleted.",
        )
    if info.reduction is not None:
        return ErrorCode.INVALID_PARTITIONS, UNDER_CHANGE.format(name=topic.name)
    if topic.count < 1:
        return ErrorCode.INVALID_PARTITIONS, f"{topic.count} partitions is below 1."
    if topic.count >= info.partitions:
        return (
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {topic.name} currently has {info.partitions} partition(s); "
            f"{topic.count} would not be a reduction.",
        )
    return ErrorCode.NONE, None


def _reduce(
    broker: Broker,
    ctx: RequestContext,
    request: DeletePartitionsRequest,
    topic: DeletePartitionsTopic,
) -> DeletePartitionsTopicResult:
    if not authorize(broker, ctx, AclOperation.DELETE, ResourceType.TOPIC, topic.name):
        return _failed(topic.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
    code, message = check_topic(broker, topic)
    if code is not ErrorCode.NONE:
        return _failed(topic.name, code, message)
    modes = start_reduction(
        broker,
        topic.name,
        topic.count,
        delay_ms=request.delete_partitions_delay_ms,
        immediate=request.immediate_delete,
    )
    return DeletePartitionsTopicResult(
        name=topic.name,
        error_code=ErrorCode.NONE,
        partitions=tuple(
            DeletePartitionsPartitionResult(partition, int(mode), ErrorCode.NONE)
            for partition, mode in sorted(modes.items())
        ),
    )


@handles(ApiKey.DELETE_PARTITIONS, error_response=_error_response, enabled=enabled)
def handle(
    broker: Broker, ctx: RequestContext, request: DeletePartitionsRequest
) -> DeletePartitionsResponse:
    """Answer a DeletePartitions request (module docstring)."""
    if request.delete_partitions_delay_ms < 0:
        message = f"DeletePartitionsDelayMs {request.delete_partitions_delay_ms} is negative."
        return _error_response(request, ErrorCode.INVALID_REQUEST, message)
    counts: dict[str, int] = {}
    for topic in request.topics:
        counts[topic.name] = counts.get(topic.name, 0) + 1
    results = [
        _failed(name, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
        for name, count in counts.items()
        if count > 1
    ]
    results += [_reduce(broker, ctx, request, t) for t in request.topics if counts[t.name] == 1]
    return DeletePartitionsResponse(responses=tuple(results))
