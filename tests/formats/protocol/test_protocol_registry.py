"""The registry: what Kafka 4.0 advertises, precise lookup failures, header versions."""

from __future__ import annotations

import struct

import pytest
from lethe_formats.protocol.api_keys import ApiKey, api_name
from lethe_formats.protocol.exceptions import UnknownApiKeyError, UnsupportedVersionError
from lethe_formats.protocol.registry import api, apis, header_versions, lookup, supported_versions
from lethe_formats.protocol.schema import message_info
from wire_golden import frame_by_seq


def _kafka_40_advertised() -> dict[int, tuple[int, int]]:
    """ApiKeys of the ApiVersions v3 response Kafka 4.0 sent (frame #0002), read by hand:
    correlation_id, error_code, compact array of (api_key, min, max, tagged fields)."""
    payload = frame_by_seq(2).payload
    position = 4 + 2
    count = payload[position] - 1
    position += 1
    out = {}
    for _ in range(count):
        key, low, high = struct.unpack_from(">hhh", payload, position)
        out[key] = (low, high)
        position += 7
    return out


def test_six_core_apis_are_defined() -> None:
    assert {0, 1, 2, 3, 18, 21} <= apis().keys()


def test_supported_ranges_equal_what_kafka_40_advertises() -> None:
    advertised = _kafka_40_advertised()
    for api_key, low, high in supported_versions():
        assert advertised[api_key] == (low, high), api_name(api_key)


def test_request_and_response_classes_are_paired() -> None:
    for spec in apis().values():
        assert message_info(spec.request).kind == "request"
        assert message_info(spec.response).kind == "response"
        assert message_info(spec.request).api_key == spec.api_key
        assert spec.name == ApiKey(spec.api_key).name


def test_unknown_api_key_is_its_own_error() -> None:
    with pytest.raises(UnknownApiKeyError) as caught:
        lookup(9999, 0)
    assert caught.value.api_key == 9999
    with pytest.raises(UnknownApiKeyError):
        api(-1)


def test_unsupported_version_of_a_known_api_names_both() -> None:
    with pytest.raises(UnsupportedVersionError) as caught:
        lookup(ApiKey.FETCH, 3)
    assert (caught.value.api_key, caught.value.version) == (1, 3)
    assert "FETCH version 3" in str(caught.value)
    with pytest.raises(UnsupportedVersionError):
        lookup(ApiKey.DELETE_RECORDS, 3)
    assert lookup(ApiKey.DELETE_RECORDS, 2).request.__name__ == "DeleteRecordsRequest"


@pytest.mark.parametrize(
    ("api_key", "version", "expected"),
    [
        (ApiKey.API_VERSIONS, 0, (1, 0)),
        (ApiKey.API_VERSIONS, 3, (2, 0)),  # flexible, but ApiVersions answers with header v0
        (ApiKey.API_VERSIONS, 7, (2, 0)),  # a too-new version is still read as flexible
        (ApiKey.METADATA, 8, (1, 0)),
        (ApiKey.METADATA, 9, (2, 1)),
        (ApiKey.PRODUCE, 10, (2, 1)),
        (ApiKey.FETCH, 11, (1, 0)),
        (ApiKey.FETCH, 12, (2, 1)),
        (ApiKey.LIST_OFFSETS, 6, (2, 1)),
        (ApiKey.DELETE_RECORDS, 1, (1, 0)),
        (ApiKey.DELETE_RECORDS, 2, (2, 1)),
    ],
)
def test_header_versions_follow_flexibility(
    api_key: int, version: int, expected: tuple[int, int]
) -> None:
    assert header_versions(api_key, version) == expected


def test_api_names_are_kafkas_enum_names() -> None:
    assert api_name(21) == "DELETE_RECORDS"
    assert api_name(60) == "DESCRIBE_CLUSTER"
    assert api_name(5000) == "UNKNOWN(5000)"
