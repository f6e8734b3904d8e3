"""DeleteRecords (key 21, KIP-107), v0-2: ``KafkaApis.handleDeleteRecordsRequest``.

Theory of operation
-------------------
Authorization first (KIP-107 "API Authorization"): a topic the principal may
not DELETE (:mod:`.authz`) gets TOPIC_AUTHORIZATION_FAILED (29) and low
watermark -1 on every requested partition, whether or not it exists, so an
unauthorized principal cannot probe for topics (catalog KIP107-AUTH-1/2).
Every other ``(topic, partition, offset)`` goes through
:func:`~.partition_ops.delete.delete_records_on_partition` (unknown 3, internal
17, policy 44, -1 = HW, out of range 1, then the log start offset moves; see
there). A partition named twice is answered once, for its last offset (Kafka
collects the request in a map). The response lists the partitions that exist
first, then the unknown ones, in request order, each topic once (Kafka's order
comes from a hash map and is unspecified).

If some error-free partition's low watermark is still below its requested
offset, the answer waits in ``broker.purgatories.delete_records`` as a
:class:`~.partition_ops.delete.DelayedDeleteRecords` for ``timeout_ms``,
watched on every requested partition; expiry answers REQUEST_TIMED_OUT (7) for
what is still pending. On one broker the low watermark is the log start offset
itself, so the answer is always immediate. No file is deleted here: the
retention pass removes segments wholly below the new log start offset later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)

from lethe_reference import faults
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorized_names
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.common import watch_key
from lethe_reference.handlers.partition_ops.delete import (
    DelayedDeleteRecords,
    PartitionDelete,
    Results,
    delayed_required,
    delete_records_on_partition,
)
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["build_response", "error_response", "handle"]


def build_response(results: Results) -> DeleteRecordsResponse:
    """Group per-partition results into the response, existing partitions first."""
    unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    ordered = [k for k, r in results.items() if r.error is not unknown]
    ordered += [k for k, r in results.items() if r.error is unknown]
    topics: dict[str, list[DeleteRecordsPartitionResult]] = {}
    for topic, partition in ordered:
        result = results[(topic, partition)]
        topics.setdefault(topic, []).append(
            DeleteRecordsPartitionResult(partition, result.low_watermark, result.error)
        )
    return DeleteRecordsResponse(
        throttle_time_ms=0,
        topics=tuple(
            DeleteRecordsTopicResult(name, tuple(parts)) for name, parts in topics.items()
        ),
    )


def error_response(
    request: DeleteRecordsRequest, code: ErrorCode, _message: str | None
) -> DeleteRecordsResponse:
    """``DeleteRecordsRequest.getErrorResponse``: low watermark -1 and ``code`` everywhere."""
    failed = PartitionDelete(code)
    return build_response(
        {(t.name, p.partition_index): failed for t in request.topics for p in t.partitions}
    )


@handles(ApiKey.DELETE_RECORDS, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: DeleteRecordsRequest
) -> DeleteRecordsResponse | Deferred[DeleteRecordsResponse]:
    """Answer a DeleteRecords request, now or once low watermarks catch up."""
    offsets = {(t.name, p.partition_index): p.offset for t in request.topics for p in t.partitions}
    allowed = authorized_names(
        broker, ctx, AclOperation.DELETE, ResourceType.TOPIC, {t for t, _ in offsets}
    )
    if faults.active(broker, "delete-records-skips-authorization"):
        allowed = {t for t, _ in offsets}
    results: Results = {
        (topic, partition): delete_records_on_partition(broker, topic, partition, offset)
        if topic in allowed
        else PartitionDelete(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        for (topic, partition), offset in offsets.items()
    }
    failed = [r for r in results.values() if r.error is not ErrorCode.NONE]
    if failed and faults.active(broker, "delete-records-one-error-fails-all"):
        return build_response({tp: PartitionDelete(failed[0].error) for tp in results})
    if not delayed_required(results.values()):
        return build_response(results)
    delayed = DelayedDeleteRecords(broker, results, build_response)
    keys = [watch_key(*tp) for tp in offsets]
    broker.purgatories.delete_records.watch(
        delayed, keys, broker.clock.now_ms() + request.timeout_ms
    )
    return delayed
