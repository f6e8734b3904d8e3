"""DescribeLogDirs (key 35, v1-4): ``KafkaApis.handleDescribeLogDirsRequest``.

Theory of operation
-------------------
DESCRIBE on the cluster first: without it the answer is
CLUSTER_AUTHORIZATION_FAILED (31) at the top (v3+) and no result. Otherwise
one result per log directory (this broker has one) from
:func:`~lethe_reference.storage.log_dir_usage.describe_log_dir`: the requested
partitions it holds (every partition when ``topics`` is null; a requested
partition it does not hold is simply absent, no error), grouped by topic,
topics without a listed partition left out; total and usable bytes from v4.
A failed directory is KAFKA_STORAGE_ERROR (56) with no topics. Kafka groups
replicas in hash maps, so its order is unspecified; lethe lists topics and
partitions sorted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_log_dirs import (
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)

from lethe_reference.cluster.acl import AclOperation
from lethe_reference.handlers.authz import authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.storage.log_dir_usage import LogDirUsage, describe_log_dir

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["error_response", "handle", "log_dir_result"]


def error_response(
    _request: DescribeLogDirsRequest, code: ErrorCode, _message: str | None
) -> DescribeLogDirsResponse:
    """``DescribeLogDirsRequest.getErrorResponse``: the error at the top, no result."""
    return DescribeLogDirsResponse(error_code=code)


def log_dir_result(usage: LogDirUsage) -> DescribeLogDirsResult:
    """One log directory's entry of the response."""
    if usage.failure is not None:
        return DescribeLogDirsResult(ErrorCode.KAFKA_STORAGE_ERROR, usage.path)
    topics: dict[str, list[DescribeLogDirsPartition]] = {}
    for replica in usage.replicas:
        topics.setdefault(replica.topic, []).append(
            DescribeLogDirsPartition(
                replica.partition, replica.size, replica.offset_lag, replica.is_future
            )
        )
    return DescribeLogDirsResult(
        error_code=ErrorCode.NONE,
        log_dir=usage.path,
        topics=tuple(DescribeLogDirsTopic(name, tuple(parts)) for name, parts in topics.items()),
        total_bytes=usage.total_bytes,
        usable_bytes=usage.usable_bytes,
    )


@handles(ApiKey.DESCRIBE_LOG_DIRS, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: DescribeLogDirsRequest
) -> DescribeLogDirsResponse:
    """Describe this broker's log directory for the requested partitions."""
    if not authorize_cluster(broker, ctx, AclOperation.DESCRIBE):
        return DescribeLogDirsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    wanted = None
    if request.topics is not None:
        wanted = [(t.topic, p) for t in request.topics for p in t.partitions]
    usage = describe_log_dir(broker.log_manager, wanted)
    return DescribeLogDirsResponse(results=(log_dir_result(usage),))
