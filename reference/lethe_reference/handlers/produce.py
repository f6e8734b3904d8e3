"""Produce (key 0): ``KafkaApis.handleProduceRequest`` over :mod:`.partition_ops`.

Theory of operation
-------------------
1. If any partition's first batch is transactional and the request has no
   ``transactional_id``, or the principal may not WRITE it (:mod:`.authz`),
   the whole request fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) in
   every partition (Kafka's authorization check for the transactional id;
   with no authorizer only the missing id fails). Bytes too broken to tell
   fail the whole request with CORRUPT_MESSAGE, as Kafka's batch iterator
   throws there.
2. Per partition: a topic the principal may not WRITE (:mod:`.authz`) is
   TOPIC_AUTHORIZATION_FAILED (29), existing or not; then unknown topic or
   partition is UNKNOWN_TOPIC_OR_PARTITION (3);
   then ``ProduceRequest.validateRecords``; the rest goes to the replica
   manager: ``acks`` outside {-1, 0, 1} fails every remaining partition with
   INVALID_REQUIRED_ACKS (21), internal topics refuse clients other than
   ``__admin_client`` (17), and the append runs
   (:func:`~.partition_ops.append.append_to_partition`).
3. After each successful append the HW is at the LEO (one replica), so
   ``acks=-1`` is satisfied at once, and parked Fetch / DeleteRecords requests
   watching the partition are re-checked. In an in-process cluster the HW
   waits for the ISR, and an ``acks=-1`` answer may wait with it
   (:mod:`lethe_reference.cluster.delayed_produce`).

The response lists partitions in request order, grouped by topic (a partition
named twice is answered once, for its last data). ``acks=0``: the handler still
returns the response; the connection layer
(:mod:`lethe_reference.protocol.connection`) sends nothing, or closes the
connection when a partition failed, as Kafka does.

KIP-694 (an opt-in extension): a partition in ReadOnly or None mode refuses
the append with POLICY_VIOLATION (44), non-retriable, so a stock producer that
cannot read the mode fails fast (catalog KIP694-MODE-2).

A transactional batch is first checked with the transaction coordinator
(:mod:`.txn_verification`). Limits: ``min.insync.replicas`` can never fail with
one replica (Kafka caps it at the replica count).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from lethe_formats.model import TRANSACTIONAL_BIT
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)

from lethe_reference import faults
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.delayed_produce import maybe_delay
from lethe_reference.handlers.authz import authorize, authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.append import (
    ADMIN_CLIENT_ID,
    PartitionAppend,
    append_to_partition,
    valid_acks,
    validate_produce_records,
)
from lethe_reference.handlers.partition_ops.common import (
    complete_delayed,
    is_internal,
    lookup,
    partition_exists,
)
from lethe_reference.handlers.txn_verification import verification_refusal
from lethe_reference.partitions.deletion import mode_of
from lethe_reference.partitions.state import PartitionMode
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["error_response", "handle"]

_NOT_WRITABLE = "The partition is {0.name} (KIP-694): its removal is pending."

TopicPartition = tuple[str, int]


def _partitions(request: ProduceRequest) -> dict[TopicPartition, bytes | None]:
    return {
        (topic.name, data.index): data.records
        for topic in request.topic_data
        for data in topic.partition_data
    }


def _response(statuses: dict[TopicPartition, PartitionAppend]) -> ProduceResponse:
    topics: dict[str, list[PartitionProduceResponse]] = {}
    for (topic, partition), status in statuses.items():
        topics.setdefault(topic, []).append(
            PartitionProduceResponse(
                index=partition,
                error_code=status.error,
                base_offset=status.base_offset,
                log_append_time_ms=status.log_append_time,
                log_start_offset=status.log_start_offset,
                record_errors=tuple(
                    BatchIndexAndErrorMessage(index, message)
                    for index, message in status.record_errors
                ),
                error_message=status.error_message,
            )
        )
    return ProduceResponse(
        responses=tuple(TopicProduceResponse(name, tuple(parts)) for name, parts in topics.items())
    )


def error_response(
    request: ProduceRequest, code: ErrorCode, message: str | None
) -> ProduceResponse:
    """``ProduceRequest.getErrorResponse``: every partition fails with ``code``."""
    text = message if message is not None else code.message
    failed = PartitionAppend(code, error_message=text)
    return _response(dict.fromkeys(_partitions(request), failed))


def _has_transactional_records(request: ProduceRequest) -> bool:
    """``RequestUtils.hasTransactionalRecords``: some first batch is transactional."""
    for records in _partitions(request).values():
        if records is None or len(records) < 12:
            continue
        (length,) = struct.unpack_from(">i", records, 8)
        if length < 14:
            raise error_for_code(
                ErrorCode.CORRUPT_MESSAGE,
                f"Record size {length} is less than the minimum record overhead (14)",
            )
        if len(records) >= 23 and records[16] == 2 and records[22] & TRANSACTIONAL_BIT:
            return True
    return False


def _append(
    broker: Broker,
    ctx: RequestContext,
    request: ProduceRequest,
    tp: TopicPartition,
    records: bytes,
) -> PartitionAppend:
    topic, partition = tp
    if is_internal(topic) and ctx.client_id != ADMIN_CLIENT_ID:
        return PartitionAppend(ErrorCode.INVALID_TOPIC_EXCEPTION)
    found = lookup(broker, topic, partition)
    if isinstance(found, ErrorCode):
        return PartitionAppend(found)
    mode = mode_of(broker, topic, partition)
    if mode is not PartitionMode.READ_WRITE and not faults.active(
        broker, "produce-accepted-on-read-only-partition"
    ):
        return PartitionAppend(ErrorCode.POLICY_VIOLATION, error_message=_NOT_WRITABLE.format(mode))
    refused = verification_refusal(
        broker, ctx.api_version, request.transactional_id, (tp, found), records
    )
    if refused is not None:
        return refused
    result = append_to_partition(broker, found, records)
    if result.appended:
        complete_delayed(broker, topic, partition)
    return result


def _may_write_transactionally(
    broker: Broker, ctx: RequestContext, transactional_id: str | None
) -> bool:
    """A transactional id is given and the principal may WRITE it (step 1)."""
    return transactional_id is not None and authorize(
        broker, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
    )


@handles(ApiKey.PRODUCE, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: ProduceRequest
) -> ProduceResponse | Deferred[ProduceResponse]:
    """Answer a Produce request (module docstring)."""
    if _has_transactional_records(request) and not _may_write_transactionally(
        broker, ctx, request.transactional_id
    ):
        return error_response(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None)
    statuses: dict[TopicPartition, PartitionAppend] = {}
    requested = _partitions(request)
    allowed = authorized_names(
        broker, ctx, AclOperation.WRITE, ResourceType.TOPIC, {t for t, _ in requested}
    )
    for (topic, partition), records in requested.items():
        if topic not in allowed:
            statuses[(topic, partition)] = PartitionAppend(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            continue
        if not partition_exists(broker, topic, partition):
            statuses[(topic, partition)] = PartitionAppend(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            continue
        code = validate_produce_records(ctx.api_version, records)
        if code is not ErrorCode.NONE:
            statuses[(topic, partition)] = PartitionAppend(code)
        elif not valid_acks(request.acks):
            statuses[(topic, partition)] = PartitionAppend(ErrorCode.INVALID_REQUIRED_ACKS)
        else:
            statuses[(topic, partition)] = _append(
                broker, ctx, request, (topic, partition), records or b""
            )
    return maybe_delay(broker, request.acks, request.timeout_ms, statuses, _response)
