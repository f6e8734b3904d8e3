"""TxnOffsetCommit (key 28): consumer offsets committed inside a transaction.

Theory of operation
-------------------
``KafkaApis.handleTxnOffsetCommitRequest``, in its order: WRITE on the
TRANSACTIONAL_ID (else every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
READ on the GROUP (GROUP_AUTHORIZATION_FAILED), READ per topic
(TOPIC_AUTHORIZATION_FAILED), a partition that does not exist
UNKNOWN_TOPIC_OR_PARTITION; the rest goes to the group coordinator, which
writes the offsets as a transactional batch of the producer's id and epoch to
the group's ``__consumer_offsets`` partition and keeps them pending
(:meth:`~lethe_reference.cluster.group.offsets.OffsetLogic.commit_txn_offsets`).
The transaction's marker on that partition
(:mod:`lethe_reference.handlers.txn_markers`) makes them visible (COMMIT) or
drops them (ABORT). v3+ carries the member and generation, checked as an
OffsetCommit's when given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode, known_code
from lethe_formats.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

from lethe_reference.cluster import group as coordination
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.group.support import partition_for
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.handlers.authz import authorize, authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.txn_verification import in_transaction
from lethe_reference.metadata import CONSUMER_OFFSETS

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__: list[str] = []

TopicPartition = tuple[str, int]


def _response(codes: dict[TopicPartition, ErrorCode]) -> TxnOffsetCommitResponse:
    topics: dict[str, list[TxnOffsetCommitResponsePartition]] = {}
    for (topic, partition), code in codes.items():
        topics.setdefault(topic, []).append(TxnOffsetCommitResponsePartition(partition, code))
    return TxnOffsetCommitResponse(
        topics=tuple(TxnOffsetCommitResponseTopic(t, tuple(ps)) for t, ps in topics.items())
    )


def _all(request: TxnOffsetCommitRequest) -> list[TopicPartition]:
    return [(t.name, p.partition_index) for t in request.topics for p in t.partitions]


def _error(
    request: TxnOffsetCommitRequest, code: ErrorCode, message: str | None
) -> TxnOffsetCommitResponse:
    return _response(dict.fromkeys(_all(request), code))


@handles(ApiKey.TXN_OFFSET_COMMIT, error_response=_error)
def handle_txn_offset_commit(
    broker: Broker, ctx: RequestContext, request: TxnOffsetCommitRequest
) -> TxnOffsetCommitResponse:
    """Answer a TxnOffsetCommit request (module docstring)."""
    tid = request.transactional_id
    if not authorize(broker, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return _error(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None)
    if not authorize(broker, ctx, AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    readable = authorized_names(
        broker, ctx, AclOperation.READ, ResourceType.TOPIC, {t.name for t in request.topics}
    )
    codes: dict[TopicPartition, ErrorCode] = {}
    known: dict[TopicPartition, coordination.CommitOffset] = {}
    for topic in request.topics:
        info = broker.metadata.get(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if topic.name not in readable:
                codes[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif info is None or not 0 <= p.partition_index < info.partitions:
                codes[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                codes[tp] = ErrorCode.NONE
                known[tp] = coordination.CommitOffset(
                    p.committed_offset, p.committed_metadata, p.committed_leader_epoch
                )
    refused = _verification(broker, ctx.api_version, request)
    if refused is not None:
        codes.update(dict.fromkeys(known, refused))
        known = {}
    if known:
        runtime = runtime_of(broker)
        results = runtime.coordinator.commit_txn_offsets(
            coordination.OffsetCommitRequest(
                group_id=request.group_id,
                offsets=known,
                member_id=request.member_id,
                generation_id=request.generation_id,
                group_instance_id=request.group_instance_id,
            ),
            request.producer_id,
            request.producer_epoch,
        )
        runtime.rearm()
        for tp, code in results.items():
            found = known_code(code)
            codes[tp] = ErrorCode.UNKNOWN_SERVER_ERROR if found is None else found
    return _response(codes)


#: TxnOffsetCommit versions from which the group joins the transaction here (KIP-890)
ADDS_GROUP_VERSION = 5
#: The first version whose clients get TRANSACTION_ABORTABLE as it is
#: (``txnOffsetCommitRequestVersionToTransactionSupportedOperation``).
ABORTABLE_VERSION = 4
_RETRY = frozenset(
    {
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    }
)


def _verification(
    broker: Broker, version: int, request: TxnOffsetCommitRequest
) -> ErrorCode | None:
    """The group's offsets partition must be in the transaction: v5+ adds it
    (transaction version 2, no AddOffsetsToTxn), older versions verify it, when
    ``transaction.partition.verification.enable``. None when the commit may go on."""
    if not broker.config.get_bool("transaction.partition.verification.enable"):
        return None
    partitions = broker.config.get_int("offsets.topic.num.partitions")
    tp = (CONSUMER_OFFSETS, partition_for(request.group_id, partitions))
    adds = version >= ADDS_GROUP_VERSION
    producer = (request.producer_id, request.producer_epoch)
    code = in_transaction(broker, request.transactional_id, producer, tp, adds=adds)
    if code is ErrorCode.NONE:
        return None
    if code is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if code is ErrorCode.TRANSACTION_ABORTABLE and version < ABORTABLE_VERSION:
        return ErrorCode.INVALID_TXN_STATE  # v4 clients know TRANSACTION_ABORTABLE
    if code in _RETRY:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return code
