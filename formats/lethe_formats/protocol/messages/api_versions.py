"""ApiVersions (key 18), versions 0-4, flexible 3+.

Layout of the response (v3+, compact encodings)::

    error_code int16 | api_keys [api_key int16, min_version int16, max_version int16]
    | throttle_time_ms int32 (v1+)
    | tagged: 0 supported_features [name, min_version int16, max_version int16]
              1 finalized_features_epoch int64 (default -1)
              2 finalized_features [name, max_version_level int16, min_version_level int16]
              3 zk_migration_ready bool

Quirks kept by the broker, not by this definition: the response always uses
response header v0 (see ``headers``); when the broker does not support the
requested version it answers UNSUPPORTED_VERSION (35) encoded at v0, listing
its own ApiVersions range so the client can retry (KIP-511), and clients parse
an error response as v0. Version 4 only changes the meaning of
``supported_features`` (features with min_version 0 are listed; v3 omits them).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Struct,
    array,
    message,
    proto,
)

__all__ = [
    "ApiVersion",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "FinalizedFeatureKey",
    "SupportedFeatureKey",
]


@message(api_key=18, kind="request", valid="0-4", flexible="3+")
@dataclass(frozen=True, slots=True)
class ApiVersionsRequest(Struct):
    client_software_name: str = proto(STRING, "3+", ignorable=True)
    client_software_version: str = proto(STRING, "3+", ignorable=True)


@dataclass(frozen=True, slots=True)
class ApiVersion(Struct):
    api_key: int = proto(INT16, "0+")
    min_version: int = proto(INT16, "0+")
    max_version: int = proto(INT16, "0+")


@dataclass(frozen=True, slots=True)
class SupportedFeatureKey(Struct):
    name: str = proto(STRING, "3+")
    min_version: int = proto(INT16, "3+")
    max_version: int = proto(INT16, "3+")


@dataclass(frozen=True, slots=True)
class FinalizedFeatureKey(Struct):
    name: str = proto(STRING, "3+")
    max_version_level: int = proto(INT16, "3+")
    min_version_level: int = proto(INT16, "3+")


@message(api_key=18, kind="response", valid="0-4", flexible="3+")
@dataclass(frozen=True, slots=True)
class ApiVersionsResponse(Struct):
    error_code: int = proto(INT16, "0+")
    api_keys: tuple[ApiVersion, ...] = proto(array(ApiVersion), "0+")
    throttle_time_ms: int = proto(INT32, "1+", ignorable=True)
    supported_features: tuple[SupportedFeatureKey, ...] = proto(
        array(SupportedFeatureKey), "3+", tag=0, ignorable=True
    )
    finalized_features_epoch: int = proto(INT64, "3+", tag=1, default=-1, ignorable=True)
    finalized_features: tuple[FinalizedFeatureKey, ...] = proto(
        array(FinalizedFeatureKey), "3+", tag=2, ignorable=True
    )
    zk_migration_ready: bool = proto(BOOL, "3+", tag=3, ignorable=True)
