"""WriteTxnMarkers (key 27, v1): a partition leader appends COMMIT/ABORT markers.

Theory of operation
-------------------
``KafkaApis.handleWriteTxnMarkersRequest``: for every marker and partition,
the leader appends one control batch (``MemoryRecords.withEndTransactionMarker``:
transactional + control, the producer's id and epoch, one record with the
control key and the value ``version 0 | coordinator epoch``) with the
coordinator as origin, so the producer state closes the transaction, the LSO
moves and an ABORT is written to the ``.txnindex``
(:mod:`lethe_reference.storage.transactions`).

Per partition errors: UNKNOWN_TOPIC_OR_PARTITION when the partition does not
exist here, NOT_LEADER_OR_FOLLOWER when another broker leads it, the storage
error of a refused append (an older producer epoch: INVALID_PRODUCER_EPOCH; a
coordinator epoch below the last one the partition recorded for the producer:
TRANSACTION_COORDINATOR_FENCED, and nothing is appended: catalog KIP534-TXC-7).
The request is inter-broker: CLUSTER_ACTION on the cluster, else every
partition fails CLUSTER_AUTHORIZATION_FAILED.

:func:`write_marker` is also what the transaction coordinator of this process
calls for the partitions it finds led by itself or by a broker of the same
in-process cluster (its WriteTxnMarkers without a socket).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.model import ControlType
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode, known_code
from lethe_formats.protocol.messages.write_txn_markers import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from lethe_formats.records.builder import build_end_txn_marker_batch

from lethe_reference.cluster.acl import AclOperation
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.cluster.membership import (
    high_watermark_after_append,
    leader_epoch,
    leader_error,
)
from lethe_reference.handlers.authz import authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.common import complete_delayed
from lethe_reference.metadata import CONSUMER_OFFSETS
from lethe_reference.storage.errors import LogError

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["handle_write_txn_markers", "write_marker"]


def write_marker(
    broker: Broker,
    topic: str,
    partition: int,
    *,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
) -> ErrorCode:
    """Append one marker to a partition ``broker`` leads; its error code."""
    log = broker.log(topic, partition)
    if log is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    refused = leader_error(broker, topic, partition)
    if refused is not None:
        return refused
    epoch = leader_epoch(broker, topic, partition)
    batch = build_end_txn_marker_batch(
        base_offset=0,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        control_type=ControlType.COMMIT if commit else ControlType.ABORT,
        coordinator_epoch=coordinator_epoch,
        timestamp=broker.clock.now_ms(),
        partition_leader_epoch=epoch,
    )
    try:
        log.append_as_leader(batch, epoch, from_coordinator=True)
    except LogError as error:
        return known_code(error.error_code) or ErrorCode.UNKNOWN_SERVER_ERROR
    except OSError:
        return ErrorCode.KAFKA_STORAGE_ERROR
    high_watermark_after_append(broker, log, topic, partition)
    complete_delayed(broker, topic, partition)
    if topic == CONSUMER_OFFSETS:  # the transaction's offset commits become visible or go
        runtime_of(broker).coordinator.complete_txn_offsets(partition, producer_id, commit)
    return ErrorCode.NONE


def _error_response(
    request: WriteTxnMarkersRequest, code: ErrorCode, message: str | None
) -> WriteTxnMarkersResponse:
    return WriteTxnMarkersResponse(
        markers=tuple(
            WritableTxnMarkerResult(
                producer_id=marker.producer_id,
                topics=tuple(
                    WritableTxnMarkerTopicResult(
                        name=topic.name,
                        partitions=tuple(
                            WritableTxnMarkerPartitionResult(p, code)
                            for p in topic.partition_indexes
                        ),
                    )
                    for topic in marker.topics
                ),
            )
            for marker in request.markers
        )
    )


@handles(ApiKey.WRITE_TXN_MARKERS, error_response=_error_response)
def handle_write_txn_markers(
    broker: Broker, ctx: RequestContext, request: WriteTxnMarkersRequest
) -> WriteTxnMarkersResponse:
    """Append every marker of the request (module docstring)."""
    if not authorize_cluster(broker, ctx, AclOperation.CLUSTER_ACTION):
        return _error_response(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    results = []
    for marker in request.markers:
        topics = []
        for topic in marker.topics:
            partitions = tuple(
                WritableTxnMarkerPartitionResult(
                    index,
                    write_marker(
                        broker,
                        topic.name,
                        index,
                        producer_id=marker.producer_id,
                        producer_epoch=marker.producer_epoch,
                        commit=marker.transaction_result,
                        coordinator_epoch=marker.coordinator_epoch,
                    ),
                )
                for index in topic.partition_indexes
            )
            topics.append(WritableTxnMarkerTopicResult(topic.name, partitions))
        results.append(WritableTxnMarkerResult(marker.producer_id, tuple(topics)))
    return WriteTxnMarkersResponse(markers=tuple(results))
