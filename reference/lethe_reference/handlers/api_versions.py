"""ApiVersions (key 18): which APIs and versions this broker serves, and its features.

Theory of operation
-------------------
``KafkaApis.handleApiVersionsRequest``, three cases:

1. The request version is above what the broker supports: the connection layer
   did not parse the body (see :mod:`lethe_reference.protocol.connection`); the
   answer is UNSUPPORTED_VERSION (35) listing only ApiVersions' own range
   (``ApiVersionsRequest.getErrorResponse``), encoded at v0 so any client can
   read it and retry with a version it finds there (KIP-511).
2. v3+ with a ``client_software_name`` or ``client_software_version`` that does
   not match ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?``: INVALID_REQUEST (42)
   with no API list.
3. Otherwise every served API with the range the protocol registry gives
   (Kafka 4.0's ranges), in key order, and the features.

Only APIs that have a handler are listed: a client must not be told about an
API whose requests would close the connection. An extension API (KIP-694's
DeletePartitions, key 10694) is listed only while its broker config enables
it (``handled_api_keys(broker)``).

Features (v3+, tagged fields). Kafka 4.0 lists supported features (a v3
response leaves out those whose minimum version is 0, which pre-4.0 clients
misread) and the finalized levels. lethe reports the supported ranges exactly
as Kafka 4.0 and finalizes ``transaction.version`` 2 (the KIP-890 transaction
protocol: an epoch bump per transaction, partitions added by the leader on
Produce v12, the group by TxnOffsetCommit v5), ``kraft.version`` 1 and
``metadata.version`` 25, in Kafka's order: ``group.version`` 1 would announce
the KIP-848 consumer protocol (ConsumerGroupHeartbeat), which this broker does
not serve, and a client decides from these levels which protocol to speak. The
features epoch is the broker's metadata epoch (Kafka: the offset of the last
feature record in the metadata log).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)
from lethe_formats.protocol.registry import api

from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handled_api_keys, handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["FINALIZED_FEATURES", "SUPPORTED_FEATURES", "handle", "served_versions"]

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

#: (name, min, max) as Kafka 4.0.0 lists them, in its order.
SUPPORTED_FEATURES: tuple[tuple[str, int, int], ...] = (
    ("group.version", 0, 1),
    ("kraft.version", 0, 1),
    ("metadata.version", 7, 25),
    ("transaction.version", 0, 2),
    ("eligible.leader.replicas.version", 0, 1),
)
#: (name, level) finalized on this broker (see the module docstring).
FINALIZED_FEATURES: tuple[tuple[str, int], ...] = (
    ("transaction.version", 2),
    ("kraft.version", 1),
    ("metadata.version", 25),
)


def served_versions(broker: Broker | None = None) -> tuple[ApiVersion, ...]:
    """(key, min, max) of every API ``broker`` serves (without one: every API
    always served), in key order."""
    out = []
    for key in sorted(handled_api_keys(broker)):
        spec = api(key)
        out.append(ApiVersion(key, spec.min_version, spec.max_version))
    return tuple(out)


def _valid(request: ApiVersionsRequest, version: int) -> bool:
    if version < 3:
        return True
    return all(
        _SOFTWARE.fullmatch(text) is not None
        for text in (request.client_software_name, request.client_software_version)
    )


@handles(ApiKey.API_VERSIONS)
def handle(broker: Broker, ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
    spec = api(ApiKey.API_VERSIONS)
    if ctx.api_version not in spec.versions:
        own = ApiVersion(spec.api_key, spec.min_version, spec.max_version)
        return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=(own,))
    if not _valid(request, ctx.api_version):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
    if ctx.api_version < 3:
        return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=served_versions(broker))
    supported = tuple(
        SupportedFeatureKey(name, low, high)
        for name, low, high in SUPPORTED_FEATURES
        if ctx.api_version >= 4 or low > 0
    )
    finalized = tuple(FinalizedFeatureKey(name, level, level) for name, level in FINALIZED_FEATURES)
    return ApiVersionsResponse(
        error_code=ErrorCode.NONE,
        api_keys=served_versions(broker),
        supported_features=supported,
        finalized_features_epoch=broker.metadata.epoch,
        finalized_features=finalized,
    )
