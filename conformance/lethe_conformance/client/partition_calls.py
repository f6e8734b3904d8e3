"""Requests about partition counts and modes: DeletePartitions (KIP-694), CreatePartitions,
Metadata read byte-exactly, DescribeConfigs of the broker.

Like :mod:`.calls`, each function builds the request from lethe_formats' message
classes, sends it at the negotiated version unless ``version`` is given, and
returns the answer unjudged.

DeletePartitions is lethe's extension API 10694 (catalog KIP694-API-1/2/3): a
target that does not advertise it raises
:class:`~lethe_conformance.client.errors.UnsupportedApiError` before anything
is sent, so its scenarios grade UNSUPPORTED.

:func:`metadata_exact` returns, besides the decoded response, whether the
response body re-encodes to exactly the bytes received. lethe's encoder writes
a tagged field only when it differs from its default, so a body that carries a
default-valued tag (a ReadWrite partition with an explicit mode 0) or fields
in another order does not re-encode identically: that is how a scenario sees
that a ReadWrite partition looks on the wire exactly as on Kafka (KIP694-DISC-3).
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.errors import FormatError
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsRequest,
    DeletePartitionsResponse,
    DeletePartitionsTopic,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResponse,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)

from lethe_conformance.client.calls import RESOURCE_BROKER
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.client.errors import TargetNonsenseError

__all__ = [
    "create_partitions",
    "delete_partitions",
    "describe_broker_configs",
    "metadata_exact",
]

#: Metadata versions from which ``allow_auto_topic_creation`` exists.
_AUTO_CREATE_FROM = 4


def delete_partitions(
    conn: KafkaConnection,
    topics: Sequence[tuple[str, int]],
    *,
    delay_ms: int = 0,
    immediate: bool = False,
    timeout_ms: int = 30_000,
    version: int | None = None,
) -> DeletePartitionsResponse:
    """DeletePartitions for ``(topic, new total count)`` rows, in the order given."""
    request = DeletePartitionsRequest(
        timeout_ms=timeout_ms,
        immediate_delete=immediate,
        delete_partitions_delay_ms=delay_ms,
        topics=tuple(DeletePartitionsTopic(name, count) for name, count in topics),
    )
    return conn.call(request, DeletePartitionsResponse, version=version)


def create_partitions(
    conn: KafkaConnection,
    topic: str,
    count: int,
    *,
    timeout_ms: int = 30_000,
    version: int | None = None,
) -> CreatePartitionsResponse:
    """Grow ``topic`` to ``count`` partitions, placed by the target."""
    request = CreatePartitionsRequest(
        topics=(CreatePartitionsTopic(topic, count, None),), timeout_ms=timeout_ms
    )
    return conn.call(request, CreatePartitionsResponse, version=version)


def metadata_exact(
    conn: KafkaConnection, topics: Sequence[str], *, version: int | None = None
) -> tuple[MetadataResponse, bool]:
    """Metadata for ``topics`` (never creating one): (the response, whether its body
    re-encodes to exactly the bytes received)."""
    chosen = conn.version_for(ApiKey.METADATA) if version is None else version
    request = MetadataRequest(
        topics=tuple(MetadataRequestTopic(name=t) for t in topics),
        allow_auto_topic_creation=chosen < _AUTO_CREATE_FROM,
    )
    body = conn.request_raw(ApiKey.METADATA, chosen, encode(request, chosen))
    try:
        response = decode(MetadataResponse, chosen, body)
    except FormatError as error:
        conn.close()
        raise TargetNonsenseError(conn.target, "METADATA", f"undecodable: {error}") from None
    return response, encode(response, chosen) == body


def describe_broker_configs(
    conn: KafkaConnection,
    broker_id: int,
    keys: Sequence[str] | None = None,
    *,
    version: int | None = None,
) -> DescribeConfigsResponse:
    """DescribeConfigs of broker ``broker_id`` (the resource name is its id as text)."""
    resource = DescribeConfigsResource(
        RESOURCE_BROKER, str(broker_id), None if keys is None else tuple(keys)
    )
    request = DescribeConfigsRequest((resource,), include_synonyms=False)
    return conn.call(request, DescribeConfigsResponse, version=version)
