"""AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26): ``KafkaApis`` over the
transaction coordinator (:mod:`lethe_reference.cluster.txn_runtime`).

Theory of operation
-------------------
Each handler authorizes as Kafka 4.0 does, then asks the coordinator:

* AddPartitionsToTxn v0-3 (a client): WRITE on the TRANSACTIONAL_ID, else every
  partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED; a topic the principal may not
  WRITE is TOPIC_AUTHORIZATION_FAILED, one that does not exist
  UNKNOWN_TOPIC_OR_PARTITION, and then the other partitions are
  OPERATION_NOT_ATTEMPTED and nothing is added. v4+ (a broker, KIP-890):
  CLUSTER_ACTION on the cluster, else the whole request fails
  CLUSTER_AUTHORIZATION_FAILED; each transaction is added, or only checked when
  ``verify_only``. The client's transaction version is 2 from v4.
* AddOffsetsToTxn: WRITE on the id, READ on the GROUP, then the group's
  ``__consumer_offsets`` partition joins the transaction (version 0).
* EndTxn: WRITE on the id; the client's transaction version is 2 from v5,
  when the response also carries the producer id and epoch to use next.

Older versions get INVALID_PRODUCER_EPOCH where the coordinator says
PRODUCER_FENCED (AddPartitionsToTxn, AddOffsetsToTxn and EndTxn below v2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
from lethe_formats.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
)
from lethe_formats.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.group.support import partition_for
from lethe_reference.cluster.txn_runtime import txn_runtime_of
from lethe_reference.handlers.authz import authorize, authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.common import is_internal, partition_exists
from lethe_reference.metadata import CONSUMER_OFFSETS

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["fenced_for_version"]

TopicPartition = tuple[str, int]


def fenced_for_version(code: ErrorCode, version: int, first_fenced_version: int) -> ErrorCode:
    """PRODUCER_FENCED for clients that know it, else INVALID_PRODUCER_EPOCH."""
    if code is ErrorCode.PRODUCER_FENCED and version < first_fenced_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code


# -- AddPartitionsToTxn --------------------------------------------------------------------


def _topic_results(
    errors: dict[TopicPartition, ErrorCode],
) -> tuple[AddPartitionsToTxnTopicResult, ...]:
    topics: dict[str, list[AddPartitionsToTxnPartitionResult]] = {}
    for (topic, partition), code in errors.items():
        topics.setdefault(topic, []).append(AddPartitionsToTxnPartitionResult(partition, code))
    return tuple(AddPartitionsToTxnTopicResult(t, tuple(ps)) for t, ps in topics.items())


def _wanted(topics: tuple[AddPartitionsToTxnTopic, ...]) -> list[TopicPartition]:
    return list(dict.fromkeys((t.name, p) for t in topics for p in t.partitions))


def _add_one(
    broker: Broker,
    ctx: RequestContext,
    version: int,
    txn: tuple[str, int, int, bool, list[TopicPartition]],
) -> dict[TopicPartition, ErrorCode]:
    transactional_id, producer_id, epoch, verify_only, wanted = txn
    if version < 4 and not authorize(
        broker, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
    ):
        return dict.fromkeys(wanted, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    refused: dict[TopicPartition, ErrorCode] = {}
    for topic, partition in wanted:
        if version < 4 and (
            is_internal(topic)
            or not authorize(broker, ctx, AclOperation.WRITE, ResourceType.TOPIC, topic)
        ):
            refused[topic, partition] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif not partition_exists(broker, topic, partition):
            refused[topic, partition] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if refused:
        return {tp: refused.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in wanted}
    coordinator = txn_runtime_of(broker).coordinator
    if verify_only:
        return coordinator.verify_partitions(transactional_id, producer_id, epoch, wanted)
    code = coordinator.add_partitions(
        transactional_id, producer_id, epoch, wanted, client_tv=2 if version >= 4 else 0
    )
    return dict.fromkeys(wanted, fenced_for_version(code, version, 2))


def _add_partitions_error(
    request: AddPartitionsToTxnRequest, code: ErrorCode, message: str | None
) -> AddPartitionsToTxnResponse:
    if request.transactions:
        return AddPartitionsToTxnResponse(error_code=code)
    errors = dict.fromkeys(_wanted(request.v3_and_below_topics), code)
    return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=_topic_results(errors))


@handles(ApiKey.ADD_PARTITIONS_TO_TXN, error_response=_add_partitions_error)
def handle_add_partitions(
    broker: Broker, ctx: RequestContext, request: AddPartitionsToTxnRequest
) -> AddPartitionsToTxnResponse:
    """Add (or verify) the partitions of each transaction (module docstring)."""
    version = ctx.api_version
    if version < 4:
        txn = (
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            False,
            _wanted(request.v3_and_below_topics),
        )
        return AddPartitionsToTxnResponse(
            results_by_topic_v3_and_below=_topic_results(_add_one(broker, ctx, version, txn))
        )
    if not authorize_cluster(broker, ctx, AclOperation.CLUSTER_ACTION):
        return AddPartitionsToTxnResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    results = []
    for t in request.transactions:
        one = (
            t.transactional_id,
            t.producer_id,
            t.producer_epoch,
            t.verify_only,
            _wanted(t.topics),
        )
        errors = _add_one(broker, ctx, version, one)
        results.append(AddPartitionsToTxnResult(t.transactional_id, _topic_results(errors)))
    return AddPartitionsToTxnResponse(results_by_transaction=tuple(results))


# -- AddOffsetsToTxn -----------------------------------------------------------------------


def _add_offsets_error(
    request: AddOffsetsToTxnRequest, code: ErrorCode, message: str | None
) -> AddOffsetsToTxnResponse:
    return AddOffsetsToTxnResponse(error_code=code)


@handles(ApiKey.ADD_OFFSETS_TO_TXN, error_response=_add_offsets_error)
def handle_add_offsets(
    broker: Broker, ctx: RequestContext, request: AddOffsetsToTxnRequest
) -> AddOffsetsToTxnResponse:
    """The group's offsets partition joins the transaction."""
    tid = request.transactional_id
    if not authorize(broker, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return AddOffsetsToTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not authorize(broker, ctx, AclOperation.READ, ResourceType.GROUP, request.group_id):
        return AddOffsetsToTxnResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    partitions = broker.config.get_int("offsets.topic.num.partitions")
    offsets_partition = (CONSUMER_OFFSETS, partition_for(request.group_id, partitions))
    code = txn_runtime_of(broker).coordinator.add_partitions(
        tid, request.producer_id, request.producer_epoch, [offsets_partition], client_tv=0
    )
    return AddOffsetsToTxnResponse(error_code=fenced_for_version(code, ctx.api_version, 2))


# -- EndTxn --------------------------------------------------------------------------------


def _end_error(request: EndTxnRequest, code: ErrorCode, message: str | None) -> EndTxnResponse:
    return EndTxnResponse(error_code=code)


@handles(ApiKey.END_TXN, error_response=_end_error)
def handle_end_txn(broker: Broker, ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    """Commit or abort: markers written, then the answer."""
    tid = request.transactional_id
    if not authorize(broker, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return EndTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    result = txn_runtime_of(broker).coordinator.end_txn(
        tid,
        request.producer_id,
        request.producer_epoch,
        request.committed,
        client_tv=2 if ctx.api_version >= 5 else 0,
    )
    return EndTxnResponse(
        error_code=fenced_for_version(result.error, ctx.api_version, 2),
        producer_id=result.producer_id,
        producer_epoch=result.producer_epoch,
    )
