"""Committed offsets: OffsetCommit (key 8, v2-9) and OffsetFetch (key 9, v1-9).

Theory of operation
-------------------
``KafkaApis.handleOffsetCommitRequest`` / ``handleOffsetFetchRequest`` of Kafka
4.0 over the group coordinator (:mod:`lethe_reference.cluster.group_runtime`).
Authorization (only with an authorizer, :mod:`.authz`), before the
coordinator: READ on the GROUP, else GROUP_AUTHORIZATION_FAILED (30) for the
whole group (OffsetCommit: every partition; OffsetFetch: the group's error).
OffsetCommit needs READ on each topic, OffsetFetch DESCRIBE; a topic without
it is TOPIC_AUTHORIZATION_FAILED (29) on its partitions before existence is
checked (OffsetFetch: offset -1), and a whole-group OffsetFetch leaves such
topics out.

OffsetCommit. The handler checks the topics before the coordinator sees them:
a topic the broker does not know fails all its partitions, a partition number
the topic does not have fails that partition, both UNKNOWN_TOPIC_OR_PARTITION
(3). The rest goes to the coordinator as one commit (group, member, generation,
instance id, v2-4's retention time); when nothing is left the coordinator is
not asked at all, so group errors cannot appear. The response is Kafka's
``OffsetCommitResponse.Builder``: topics in the order they first got an answer
(the rejected ones first), partitions in request order::

    request  topics [A (known), B (unknown), C (known, partition 9 missing)]
    response topics [B: all 3, C: 9 -> 3, then C's others, A: the coordinator's codes]

OffsetFetch. v1-7 name one group (``topics`` null from v2: every committed
partition); v8+ name several, each answered on its own. Per group the
coordinator answers a group-level error (NOT_COORDINATOR, INVALID_GROUP_ID)
with no topics, or the requested partitions in request order, with offset -1,
leader epoch -1 and metadata "" where nothing is committed (also for a group or
topic that does not exist: OffsetFetch does not check topics). With ``topics``
null the group's committed partitions are listed by topic and partition.
v1-7 carry the group's error at the top (v1 has no field for it, so a v1
client sees only an empty answer, as from Kafka). With ``require_stable``
(v7+, a read_committed consumer) a partition with offsets pending in an open
transaction answers UNSTABLE_OFFSET_COMMIT and offset -1, and the client
retries until the transaction ends.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
)

from lethe_reference.cluster import group as coordination
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.handlers.authz import authorize, authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["handle_offset_commit", "handle_offset_fetch"]

TopicPartition = tuple[str, int]
_Answers = dict[str, list[OffsetCommitResponsePartition]]

# -- OffsetCommit ---------------------------------------------------------------------------


def _commit_response(answers: _Answers) -> OffsetCommitResponse:
    return OffsetCommitResponse(
        topics=tuple(
            OffsetCommitResponseTopic(name, tuple(parts)) for name, parts in answers.items()
        )
    )


def _commit_error(
    request: OffsetCommitRequest, code: ErrorCode, message: str | None
) -> OffsetCommitResponse:
    """``OffsetCommitRequest.getErrorResponse``: every partition fails with ``code``."""
    answers: _Answers = {}
    for topic in request.topics:
        answers.setdefault(topic.name, []).extend(
            OffsetCommitResponsePartition(p.partition_index, code) for p in topic.partitions
        )
    return _commit_response(answers)


def _known_partitions(
    broker: Broker, request: OffsetCommitRequest, answers: _Answers, readable: set[str]
) -> list[tuple[TopicPartition, coordination.CommitOffset]]:
    """The partitions the coordinator gets; the others are answered in ``answers``."""
    known = []
    for topic in request.topics:
        info = broker.metadata.get(topic.name)
        for p in topic.partitions:
            if topic.name not in readable:
                answers.setdefault(topic.name, []).append(
                    OffsetCommitResponsePartition(
                        p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED
                    )
                )
            elif info is not None and 0 <= p.partition_index < info.partitions:
                commit = coordination.CommitOffset(
                    p.committed_offset, p.committed_metadata, p.committed_leader_epoch
                )
                known.append(((topic.name, p.partition_index), commit))
            else:
                answers.setdefault(topic.name, []).append(
                    OffsetCommitResponsePartition(
                        p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                )
    return known


@handles(ApiKey.OFFSET_COMMIT, error_response=_commit_error)
def handle_offset_commit(
    broker: Broker, ctx: RequestContext, request: OffsetCommitRequest
) -> OffsetCommitResponse:
    """Answer an OffsetCommit request (module docstring)."""
    if not authorize(broker, ctx, AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _commit_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    readable = authorized_names(
        broker, ctx, AclOperation.READ, ResourceType.TOPIC, {t.name for t in request.topics}
    )
    answers: _Answers = {}
    known = _known_partitions(broker, request, answers, readable)
    if not known:
        return _commit_response(answers)
    runtime = runtime_of(broker)
    codes = runtime.coordinator.commit_offsets(
        coordination.OffsetCommitRequest(
            group_id=request.group_id,
            offsets=dict(known),
            member_id=request.member_id,
            generation_id=request.generation_id_or_member_epoch,
            group_instance_id=request.group_instance_id,
            retention_time_ms=request.retention_time_ms if ctx.api_version <= 4 else -1,
            api_version=ctx.api_version,
        )
    )
    runtime.rearm()
    for (topic, partition), _ in known:
        answers.setdefault(topic, []).append(
            OffsetCommitResponsePartition(partition, codes[topic, partition])
        )
    return _commit_response(answers)


# -- OffsetFetch ----------------------------------------------------------------------------


def _partition(index: int, found: coordination.FetchedOffset) -> OffsetFetchResponsePartition:
    return OffsetFetchResponsePartition(
        partition_index=index,
        committed_offset=found.offset,
        committed_leader_epoch=found.leader_epoch,
        metadata=found.metadata,
        error_code=found.error_code,
    )


def _requested_topics(
    offsets: dict[TopicPartition, coordination.FetchedOffset],
    topics: tuple[OffsetFetchRequestTopic, ...],
) -> tuple[OffsetFetchResponseTopic, ...]:
    return tuple(
        OffsetFetchResponseTopic(
            t.name, tuple(_partition(p, offsets[t.name, p]) for p in t.partition_indexes)
        )
        for t in topics
    )


def _all_topics(
    offsets: dict[TopicPartition, coordination.FetchedOffset],
) -> tuple[OffsetFetchResponseTopic, ...]:
    by_topic: dict[str, list[OffsetFetchResponsePartition]] = {}
    for (topic, partition), found in offsets.items():
        by_topic.setdefault(topic, []).append(_partition(partition, found))
    return tuple(OffsetFetchResponseTopic(name, tuple(parts)) for name, parts in by_topic.items())


def _fetch_group(
    broker: Broker,
    ctx: RequestContext,
    group_id: str,
    topics: tuple[OffsetFetchRequestTopic, ...] | None,
    stable: bool = False,
) -> OffsetFetchResponseGroup:
    """One group's answer, authorization first (module docstring)."""
    if not authorize(broker, ctx, AclOperation.READ, ResourceType.GROUP, group_id):
        return OffsetFetchResponseGroup(group_id, (), ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if topics is None:
        answer = _coordinator_fetch(broker, group_id, None, stable)
        kept = tuple(t for t in answer.topics if _describable(broker, ctx, t.name))
        return replace(answer, topics=kept)
    allowed = [t for t in topics if _describable(broker, ctx, t.name)]
    answer = _coordinator_fetch(broker, group_id, tuple(allowed), stable)
    if answer.error_code or len(allowed) == len(topics):
        return answer
    refused = tuple(
        OffsetFetchResponseTopic(t.name, tuple(_refused(p) for p in t.partition_indexes))
        for t in topics
        if t not in allowed
    )
    return replace(answer, topics=answer.topics + refused)


def _describable(broker: Broker, ctx: RequestContext, topic: str) -> bool:
    return authorize(broker, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic)


def _refused(partition: int) -> OffsetFetchResponsePartition:
    return OffsetFetchResponsePartition(
        partition_index=partition,
        committed_offset=-1,
        committed_leader_epoch=-1,
        metadata="",
        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    )


def _coordinator_fetch(
    broker: Broker,
    group_id: str,
    topics: tuple[OffsetFetchRequestTopic, ...] | None,
    stable: bool,
) -> OffsetFetchResponseGroup:
    coordinator = runtime_of(broker).coordinator
    wanted = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    result = coordinator.fetch_offsets(group_id, wanted, require_stable=stable)
    if result.error_code:
        return OffsetFetchResponseGroup(group_id=group_id, error_code=result.error_code)
    answered = (
        _all_topics(result.offsets)
        if topics is None
        else (_requested_topics(result.offsets, topics))
    )
    return OffsetFetchResponseGroup(group_id=group_id, topics=answered, error_code=ErrorCode.NONE)


def _fetch_response(groups: list[OffsetFetchResponseGroup], version: int) -> OffsetFetchResponse:
    """``new OffsetFetchResponse(groups, version)``: v8+ as is, older flattened."""
    if version >= 8:
        return OffsetFetchResponse(groups=tuple(groups))
    group = groups[0]
    return OffsetFetchResponse(topics=group.topics, error_code=group.error_code)


def _fetch_error(
    request: OffsetFetchRequest, code: ErrorCode, message: str | None
) -> OffsetFetchResponse:
    """Every group fails with ``code`` (a v8+ request is the one naming ``groups``)."""
    if request.groups:
        return OffsetFetchResponse(
            groups=tuple(OffsetFetchResponseGroup(g.group_id, (), code) for g in request.groups)
        )
    return OffsetFetchResponse(error_code=code)


@handles(ApiKey.OFFSET_FETCH, error_response=_fetch_error)
def handle_offset_fetch(
    broker: Broker, ctx: RequestContext, request: OffsetFetchRequest
) -> OffsetFetchResponse:
    """Answer an OffsetFetch request (module docstring)."""
    version = ctx.api_version
    if version >= 8:
        asked = [(g.group_id, g.topics) for g in request.groups]
    else:
        asked = [(request.group_id, request.topics)]
    stable = ctx.api_version >= 7 and request.require_stable
    groups = [_fetch_group(broker, ctx, g, topics, stable) for g, topics in asked]
    runtime_of(broker).rearm()
    return _fetch_response(groups, version)
