"""OffsetDelete (47) and DeleteGroups (42): Kafka 4.0's version ranges (from its
recorded ApiVersions answer), round trips at every version, and bytes laid out by
hand from Kafka's message specs (the golden recording has no frame of either API).
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.messages.api_versions import ApiVersionsResponse
from lethe_formats.protocol.messages.delete_groups import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)
from lethe_formats.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct
from wire_golden import frame_by_seq
from wire_strategies import message_values

#: api key -> (lowest, highest, first flexible) as Kafka 4.0 defines them
APIS = {42: (0, 2, 2), 47: (0, 0, None)}


def i16(value: int) -> bytes:
    return struct.pack(">h", value)


def i32(value: int) -> bytes:
    return struct.pack(">i", value)


def s(text: str) -> bytes:
    return i16(len(text)) + text.encode()


def cs(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


def test_ranges_are_what_kafka_4_0_advertised_in_its_api_versions_answer() -> None:
    frame = frame_by_seq(2)
    answer = decode_response(frame.api_key, frame.api_version, frame.payload)[1]
    assert isinstance(answer, ApiVersionsResponse)
    advertised = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    for api_key, (low, high, _) in APIS.items():
        spec = api(api_key)
        assert (spec.min_version, spec.max_version) == advertised[api_key] == (low, high)


@pytest.mark.parametrize("api_key", sorted(APIS))
def test_flexible_versions_start_where_kafka_starts_them(api_key: int) -> None:
    low, high, first = APIS[api_key]
    spec = api(api_key)
    flexible = [v for v in range(low, high + 1) if spec.is_flexible(v)]
    assert flexible == ([] if first is None else list(range(first, high + 1)))


def _cases() -> list[Any]:
    cases = []
    for api_key, (low, high, _) in sorted(APIS.items()):
        spec = api(api_key)
        for cls in (spec.request, spec.response):
            cases += [pytest.param(cls, v, id=f"{cls.__name__}-v{v}") for v in range(low, high + 1)]
    return cases


@pytest.mark.parametrize(("cls", "version"), _cases())
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_deletion_messages_round_trip_at_every_version(
    cls: type[Struct], version: int, data: st.DataObject
) -> None:
    value = data.draw(message_values(cls, version))
    assert decode(cls, version, encode(value, version)) == value


def test_offset_delete_request_is_group_then_topics_then_partition_indexes() -> None:
    request = OffsetDeleteRequest(
        "g",
        (
            OffsetDeleteRequestTopic(
                "t", (OffsetDeleteRequestPartition(0), OffsetDeleteRequestPartition(3))
            ),
        ),
    )
    assert encode(request, 0) == s("g") + i32(1) + s("t") + i32(2) + i32(0) + i32(3)


def test_offset_delete_response_puts_the_error_code_before_the_throttle_time() -> None:
    wire = i16(0) + i32(7) + i32(1) + s("t") + i32(1) + i32(2) + i16(86)
    answer = decode(OffsetDeleteResponse, 0, wire)
    assert answer == OffsetDeleteResponse(
        error_code=0,
        throttle_time_ms=7,
        topics=(OffsetDeleteResponseTopic("t", (OffsetDeleteResponsePartition(2, 86),)),),
    )


def test_offset_delete_group_error_answers_no_topics() -> None:
    assert encode(OffsetDeleteResponse(error_code=69), 0) == i16(69) + i32(0) + i32(0)


def test_delete_groups_v0_and_v1_are_classic_and_v2_compact() -> None:
    request = DeleteGroupsRequest(("a", "bc"))
    classic = i32(2) + s("a") + s("bc")
    assert encode(request, 0) == encode(request, 1) == classic
    assert encode(request, 2) == bytes([3]) + cs("a") + cs("bc") + b"\x00"


def test_delete_groups_response_lists_one_result_per_group() -> None:
    wire = i32(0) + bytes([3]) + cs("a") + i16(0) + b"\x00" + cs("b") + i16(68) + b"\x00" + b"\x00"
    answer = decode(DeleteGroupsResponse, 2, wire)
    assert answer.results == (DeletableGroupResult("a", 0), DeletableGroupResult("b", 68))
    classic = i32(0) + i32(1) + s("a") + i16(69)
    assert decode(DeleteGroupsResponse, 0, classic).results == (DeletableGroupResult("a", 69),)
