"""Removing committed offsets and groups: OffsetDelete (key 47, v0) and DeleteGroups
(key 42, v0-2).

Theory of operation
-------------------
``KafkaApis.handleOffsetDeleteRequest`` / ``handleDeleteGroupsRequest`` of Kafka 4.0
over the group coordinator (:mod:`lethe_reference.cluster.group.deletion`).
Authorization first (only with an authorizer, :mod:`.authz`): OffsetDelete
needs DELETE on the GROUP (else GROUP_AUTHORIZATION_FAILED, 30, alone) and
READ on each topic (else TOPIC_AUTHORIZATION_FAILED, 29, on its partitions,
before existence); DeleteGroups answers a group without DELETE with 30 and
deletes the others (those results listed after the coordinator's).

OffsetDelete. The handler checks topics first, as Kafka does: a topic the broker
does not know fails all its partitions, a partition number the topic lacks fails
that partition, both UNKNOWN_TOPIC_OR_PARTITION. The rest goes to the coordinator
(even when nothing is left, so an unknown group still answers GROUP_ID_NOT_FOUND).
Kafka's ``OffsetDeleteResponse.Builder.merge`` then decides the shape::

    coordinator answers a group error   -> that error alone, no topics
    otherwise                           -> the rejected topics first (request order),
                                           the coordinator's partitions appended to a
                                           topic already listed, or as new topics

DeleteGroups. One result per distinct group id (Kafka's result collection is keyed
by group id), in request order (Kafka orders them by ``__consumer_offsets``
partition, in hash order: no order is promised).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_groups import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)
from lethe_formats.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)

from lethe_reference import faults
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.handlers.authz import authorize, authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["handle_delete_groups", "handle_offset_delete"]

TopicPartition = tuple[str, int]
_Answers = dict[str, list[OffsetDeleteResponsePartition]]


def _offset_delete_error(
    request: OffsetDeleteRequest, code: ErrorCode, message: str | None
) -> OffsetDeleteResponse:
    """``OffsetDeleteRequest.getErrorResponse``: the error at the top, no topics."""
    return OffsetDeleteResponse(error_code=code)


def _split(
    broker: Broker, request: OffsetDeleteRequest, readable: set[str]
) -> tuple[_Answers, list[TopicPartition]]:
    """(rejected partitions by topic, the partitions the coordinator gets)."""
    rejected: _Answers = {}
    known: list[TopicPartition] = []
    for topic in request.topics:
        info = broker.metadata.get(topic.name)
        for p in topic.partitions:
            if topic.name not in readable:
                rejected.setdefault(topic.name, []).append(
                    OffsetDeleteResponsePartition(
                        p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED
                    )
                )
            elif info is not None and 0 <= p.partition_index < info.partitions:
                known.append((topic.name, p.partition_index))
            else:
                rejected.setdefault(topic.name, []).append(
                    OffsetDeleteResponsePartition(
                        p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                )
    return rejected, known


@handles(ApiKey.OFFSET_DELETE, error_response=_offset_delete_error)
def handle_offset_delete(
    broker: Broker, ctx: RequestContext, request: OffsetDeleteRequest
) -> OffsetDeleteResponse:
    """Answer an OffsetDelete request (module docstring)."""
    if not authorize(broker, ctx, AclOperation.DELETE, ResourceType.GROUP, request.group_id):
        return _offset_delete_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    readable = authorized_names(
        broker, ctx, AclOperation.READ, ResourceType.TOPIC, {t.name for t in request.topics}
    )
    answers, known = _split(broker, request, readable)
    runtime = runtime_of(broker)
    coordinator = runtime.coordinator
    stale = None
    if faults.active(broker, "offset-delete-leaves-offsets-counting"):
        stale = dict(coordinator.offsets.get(request.group_id, {}))
    result = coordinator.delete_offsets(request.group_id, known)
    if stale:  # deliberate fault: the tombstones are written, memory is not updated
        coordinator.offsets[request.group_id] = stale
    runtime.rearm()
    if result.error_code:
        return OffsetDeleteResponse(error_code=result.error_code)
    for (topic, partition), code in result.partitions.items():
        answers.setdefault(topic, []).append(OffsetDeleteResponsePartition(partition, code))
    topics = tuple(OffsetDeleteResponseTopic(name, tuple(parts)) for name, parts in answers.items())
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=topics)


def _delete_groups_error(
    request: DeleteGroupsRequest, code: ErrorCode, message: str | None
) -> DeleteGroupsResponse:
    """``DeleteGroupsRequest.getErrorResponse``: every group fails with ``code``."""
    names = dict.fromkeys(request.groups_names)
    return DeleteGroupsResponse(results=tuple(DeletableGroupResult(g, code) for g in names))


@handles(ApiKey.DELETE_GROUPS, error_response=_delete_groups_error)
def handle_delete_groups(
    broker: Broker, ctx: RequestContext, request: DeleteGroupsRequest
) -> DeleteGroupsResponse:
    """Answer a DeleteGroups request (module docstring)."""
    runtime = runtime_of(broker)
    names = list(dict.fromkeys(request.groups_names))
    allowed = authorized_names(broker, ctx, AclOperation.DELETE, ResourceType.GROUP, names)
    results = runtime.coordinator.delete_groups([g for g in request.groups_names if g in allowed])
    runtime.rearm()
    denied = ErrorCode.GROUP_AUTHORIZATION_FAILED
    results.update({g: denied for g in names if g not in allowed})
    return DeleteGroupsResponse(
        results=tuple(DeletableGroupResult(group, code) for group, code in results.items())
    )
