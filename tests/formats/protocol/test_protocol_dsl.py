"""The message DSL's rules: versions as ranges, defaults, Kafka's
UnsupportedVersionException behaviour, tagged fields, and hand-annotated bytes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
from lethe_formats.protocol.compiler import compile_struct, decode, decode_prefix, encode
from lethe_formats.protocol.exceptions import UnsupportedVersionError
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsResponse
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from lethe_formats.protocol.messages.fetch import LeaderIdAndEpoch, PartitionData
from lethe_formats.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from lethe_formats.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from lethe_formats.protocol.schema import (
    INT32,
    UUID,
    RawTaggedField,
    Struct,
    Versions,
    message,
    proto,
    struct_fields,
)


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [("0+", [0, 99], [-1]), ("3-7", [3, 7], [2, 8]), ("5", [5], [4, 6]), ("none", [], [0, 1])],
)
def test_version_ranges_parse_as_kafka_writes_them(
    text: str, inside: list[int], outside: list[int]
) -> None:
    versions = Versions.parse(text)
    assert all(v in versions for v in inside)
    assert not any(v in versions for v in outside)
    assert str(versions) == text


def _delete_records() -> DeleteRecordsRequest:
    partition = DeleteRecordsPartition(partition_index=0, offset=2)
    return DeleteRecordsRequest(
        topics=(DeleteRecordsTopic(name="t", partitions=(partition,)),), timeout_ms=5000
    )


def test_delete_records_v0_bytes_field_by_field() -> None:
    expected = b"".join(
        [
            b"\x00\x00\x00\x01",  # topics: int32 count 1
            b"\x00\x01t",  # name: int16 length 1, "t"
            b"\x00\x00\x00\x01",  # partitions: int32 count 1
            b"\x00\x00\x00\x00",  # partition_index 0
            b"\x00\x00\x00\x00\x00\x00\x00\x02",  # offset 2
            b"\x00\x00\x13\x88",  # timeout_ms 5000
        ]
    )
    assert encode(_delete_records(), 0) == expected
    assert encode(_delete_records(), 1) == expected


def test_delete_records_v2_bytes_field_by_field() -> None:
    expected = b"".join(
        [
            b"\x02",  # topics: compact array, count + 1
            b"\x02t",  # name: compact string, length + 1
            b"\x02",  # partitions: compact array
            b"\x00\x00\x00\x00",  # partition_index
            b"\x00\x00\x00\x00\x00\x00\x00\x02",  # offset
            b"\x00",  # partition tagged fields: none
            b"\x00",  # topic tagged fields: none
            b"\x00\x00\x13\x88",  # timeout_ms
            b"\x00",  # request tagged fields: none
        ]
    )
    assert encode(_delete_records(), 2) == expected
    assert decode(DeleteRecordsRequest, 2, expected) == _delete_records()


def test_request_header_v2_keeps_the_int16_client_id() -> None:
    header = RequestHeader(api_key=18, api_version=3, correlation_id=1, client_id="ab")
    assert encode(header, 2) == b"\x00\x12\x00\x03\x00\x00\x00\x01\x00\x02ab\x00"
    assert encode(header, 1) == b"\x00\x12\x00\x03\x00\x00\x00\x01\x00\x02ab"
    null = RequestHeader(api_key=18, api_version=3, correlation_id=1, client_id=None)
    assert encode(null, 1) == b"\x00\x12\x00\x03\x00\x00\x00\x01\xff\xff"


def test_response_header_v1_adds_tagged_fields() -> None:
    assert encode(ResponseHeader(correlation_id=7), 0) == b"\x00\x00\x00\x07"
    assert encode(ResponseHeader(correlation_id=7), 1) == b"\x00\x00\x00\x07\x00"


def test_absent_fields_decode_as_their_kafka_defaults() -> None:
    wire = encode(ProduceRequest(acks=1, timeout_ms=10), 2)
    request = decode(ProduceRequest, 2, wire)
    assert request.transactional_id is None
    metadata = decode(MetadataRequest, 3, encode(MetadataRequest(topics=()), 3))
    assert metadata.allow_auto_topic_creation is True


def test_non_default_value_in_a_version_without_the_field_raises() -> None:
    with pytest.raises(UnsupportedVersionError) as caught:
        encode(ProduceRequest(transactional_id="txn", acks=1), 2)
    assert caught.value.field == "transactional_id"
    with pytest.raises(UnsupportedVersionError):
        encode(MetadataRequest(topics=(), allow_auto_topic_creation=False), 3)


def test_ignorable_field_is_dropped_in_a_version_without_it() -> None:
    partition = PartitionProduceResponse(index=0, base_offset=5, log_start_offset=3)
    response = ProduceResponse(responses=(TopicProduceResponse("t", (partition,)),))
    back = decode(ProduceResponse, 4, encode(response, 4))
    assert back.responses[0].partition_responses[0].log_start_offset == -1
    assert back.responses[0].partition_responses[0].base_offset == 5


def test_null_in_a_version_where_the_field_is_not_nullable_is_refused() -> None:
    with pytest.raises(ValueError, match="topics"):
        encode(MetadataRequest(topics=None), 0)
    assert decode(MetadataRequest, 1, encode(MetadataRequest(topics=None), 1)).topics is None
    with pytest.raises(ValueError, match="name"):
        encode(MetadataRequest(topics=(MetadataRequestTopic(name=None),)), 9)


def test_version_outside_the_message_range_raises() -> None:
    with pytest.raises(UnsupportedVersionError):
        encode(_delete_records(), 3)
    with pytest.raises(UnsupportedVersionError):
        decode(DeleteRecordsRequest, -1, b"")


def test_tagged_field_is_written_only_when_it_differs_from_its_default() -> None:
    plain = PartitionData(partition_index=1, records=b"")
    leader = PartitionData(partition_index=1, records=b"", current_leader=LeaderIdAndEpoch(1, 4))
    codec = compile_struct(PartitionData, 12, True)
    plain_bytes = codec.build(plain)
    leader_bytes = codec.build(leader)
    assert plain_bytes.endswith(b"\x01\x00")  # records: compact length 0 + 1; no tagged fields
    # records, 1 tagged field: tag 1, size 9 = leader_id 1, leader_epoch 4 and the
    # nested struct's own (empty) tagged-field section, then the partition's end
    assert leader_bytes.endswith(b"\x01\x01\x01\x09\x00\x00\x00\x01\x00\x00\x00\x04\x00")
    assert codec.parse(leader_bytes) == leader


def test_unknown_tagged_fields_are_kept_and_written_back_in_tag_order() -> None:
    response = ApiVersionsResponse(
        finalized_features_epoch=7,
        _unknown_tagged_fields=(RawTaggedField(9, b"\xaa"), RawTaggedField(12, b"")),
    )
    wire = encode(response, 3)
    assert wire.endswith(b"\x03\x01\x08\x00\x00\x00\x00\x00\x00\x00\x07\x09\x01\xaa\x0c\x00")
    assert decode(ApiVersionsResponse, 3, wire) == response


def test_unknown_tagged_fields_cannot_be_sent_in_a_non_flexible_version() -> None:
    response = ApiVersionsResponse(_unknown_tagged_fields=(RawTaggedField(9, b""),))
    with pytest.raises(UnsupportedVersionError):
        encode(response, 2)


def test_decode_prefix_returns_where_the_message_ends() -> None:
    wire = encode(ResponseHeader(correlation_id=3), 1) + b"body"
    header, end = decode_prefix(ResponseHeader, 1, wire)
    assert (header.correlation_id, end) == (3, 5)


def test_every_field_needs_a_proto_declaration() -> None:
    @message(api_key=None, kind="header", valid="0", flexible="none")
    @dataclass(frozen=True, slots=True)
    class Broken(Struct):
        fine: int = proto(INT32, "0+")
        missing: int = 0

    with pytest.raises(TypeError, match="missing"):
        struct_fields(Broken)


def test_uuid_fields_default_to_the_zero_uuid() -> None:
    @message(api_key=None, kind="header", valid="0", flexible="none")
    @dataclass(frozen=True, slots=True)
    class WithId(Struct):
        topic_id: uuid.UUID = proto(UUID, "0+")

    assert WithId().topic_id == uuid.UUID(int=0)
    some = WithId(topic_id=uuid.UUID(int=5))
    assert decode(WithId, 0, encode(some, 0)) == some
    assert encode(some, 0) == (5).to_bytes(16, "big")
