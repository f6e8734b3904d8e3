"""KIP-694 on the wire: DeletePartitions (key 10694) and the Metadata mode tag 10694.

Expected bytes are laid by hand from the catalog's decisions
(fixtures/requirements/kip694.json: KIP694-API-1/2/3, KIP694-META-1): compact
strings and arrays (length + 1 as an unsigned varint), a tagged-field section
after every struct, the tag number 10694 as the unsigned varint ``c6 53``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.protocol.api_keys import ApiKey, api_name, is_extension_api
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.envelope import decode_request, encode_request
from lethe_formats.protocol.exceptions import UnsupportedVersionError
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsPartitionResult,
    DeletePartitionsRequest,
    DeletePartitionsResponse,
    DeletePartitionsTopic,
    DeletePartitionsTopicResult,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from lethe_formats.protocol.registry import api, header_versions, lookup, supported_versions
from lethe_formats.protocol.schema import INT16, INT32, STRING, Struct, array, message, proto
from wire_strategies import message_values

#: Unsigned varint of 10694 (0x29c6): low 7 bits 0x46 | 0x80, then 0x53.
TAG_10694 = bytes([0xC6, 0x53])


def test_delete_partitions_is_key_10694_version_0_flexible() -> None:
    spec = api(10694)
    assert (spec.min_version, spec.max_version) == (0, 0)
    assert spec.name == api_name(10694) == "DELETE_PARTITIONS"
    assert int(ApiKey.DELETE_PARTITIONS) == 10694
    assert is_extension_api(10694)
    assert not is_extension_api(ApiKey.DELETE_RECORDS)
    assert header_versions(10694, 0) == (2, 1)
    with pytest.raises(UnsupportedVersionError):
        lookup(10694, 1)


def test_extensions_are_not_among_kafkas_supported_versions_unless_asked() -> None:
    assert 10694 not in {key for key, _, _ in supported_versions()}
    assert (10694, 0, 0) in supported_versions(extensions=True)


def test_request_v0_bytes_field_by_field() -> None:
    request = DeletePartitionsRequest(
        timeout_ms=30000,
        immediate_delete=False,
        delete_partitions_delay_ms=60000,
        topics=(DeletePartitionsTopic("t", 3),),
    )
    expected = (
        struct.pack(">i", 30000)
        + b"\x00"  # immediate_delete
        + struct.pack(">q", 60000)
        + b"\x02"  # one topic (compact: n + 1)
        + b"\x02t"  # compact string "t"
        + struct.pack(">i", 3)
        + b"\x00"  # topic tagged fields
        + b"\x00"  # request tagged fields
    )
    assert encode(request, 0) == expected
    assert decode(DeletePartitionsRequest, 0, expected) == request


def test_response_v0_bytes_carry_topic_and_partition_errors() -> None:
    response = DeletePartitionsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        responses=(
            DeletePartitionsTopicResult(
                name="t",
                error_code=0,
                error_message=None,
                partitions=(DeletePartitionsPartitionResult(3, -1, 0, None),),
            ),
        ),
    )
    expected = (
        struct.pack(">ih", 0, 0)
        + b"\x00"  # null error message
        + b"\x02"  # one topic
        + b"\x02t"
        + struct.pack(">h", 0)
        + b"\x00"  # null topic message
        + b"\x02"  # one partition
        + struct.pack(">ib", 3, -1)  # index, status None
        + struct.pack(">h", 0)
        + b"\x00"  # null partition message
        + b"\x00"  # partition tags
        + b"\x00"  # topic tags
        + b"\x00"  # response tags
    )
    assert encode(response, 0) == expected
    assert decode(DeletePartitionsResponse, 0, expected) == response


def test_request_envelope_uses_header_v2() -> None:
    header = RequestHeader(10694, 0, 7, "c")
    payload = encode_request(
        header, DeletePartitionsRequest(topics=(DeletePartitionsTopic("t", 1),))
    )
    assert payload[:8] == struct.pack(">hhi", 10694, 0, 7)
    assert payload[8:11] == b"\x00\x01c"  # client id keeps its int16 length
    assert payload[11] == 0  # header tagged fields
    got_header, body = decode_request(payload)
    assert got_header == header
    assert isinstance(body, DeletePartitionsRequest)


@settings(max_examples=50)
@given(data=st.data())
def test_delete_partitions_round_trips(data: st.DataObject) -> None:
    for cls in (DeletePartitionsRequest, DeletePartitionsResponse):
        value = data.draw(message_values(cls, 0))
        wire = encode(value, 0)
        assert decode(cls, 0, wire) == value
        assert encode(decode(cls, 0, wire), 0) == wire


# --- Metadata tagged field 10694 -----------------------------------------------------------


def _partition(mode: int) -> MetadataResponsePartition:
    return MetadataResponsePartition(
        error_code=0,
        partition_index=4,
        leader_id=1,
        leader_epoch=0,
        replica_nodes=(1,),
        isr_nodes=(1,),
        mode=mode,
    )


def _partition_prefix() -> bytes:
    """error, index, leader, epoch, replicas [1], isr [1], offline [] (compact, v12)."""
    return (
        struct.pack(">hiii", 0, 4, 1, 0)
        + b"\x02"
        + struct.pack(">i", 1)
        + b"\x02"
        + struct.pack(">i", 1)
        + b"\x01"
    )


def _wrapped(partition: bytes) -> bytes:
    """A v12 response with one broker-less, one-topic, one-partition body."""
    topic = (
        struct.pack(">h", 0)
        + b"\x02t"
        + b"\x00" * 16  # topic id
        + b"\x00"  # is_internal
        + b"\x02"
        + partition
        + struct.pack(">i", -(1 << 31))
        + b"\x00"
    )
    return (
        struct.pack(">i", 0) + b"\x01" + b"\x00" + struct.pack(">i", -1) + b"\x02" + topic + b"\x00"
    )


def _response(mode: int) -> MetadataResponse:
    topic = MetadataResponseTopic(name="t", partitions=(_partition(mode),))
    return MetadataResponse(controller_id=-1, topics=(topic,))


@pytest.mark.parametrize(("mode", "value"), [(1, b"\x01"), (-1, b"\xff")])
def test_a_non_readwrite_mode_is_tag_10694_with_one_byte(mode: int, value: bytes) -> None:
    wire = encode(_response(mode), 12)
    assert wire == _wrapped(_partition_prefix() + b"\x01" + TAG_10694 + b"\x01" + value)


def test_readwrite_writes_no_tag_so_the_bytes_are_kafkas() -> None:
    assert encode(_response(0), 12) == _wrapped(_partition_prefix() + b"\x00")


def test_the_mode_does_not_exist_before_v9() -> None:
    assert MetadataResponsePartition().mode == 0
    with pytest.raises(UnsupportedVersionError):
        encode(MetadataResponse(topics=(MetadataResponseTopic(partitions=(_partition(1),)),)), 8)


@dataclass(frozen=True, slots=True)
class _StockPartition(Struct):
    """Kafka 4.0's MetadataResponsePartition: no tag 10694."""

    error_code: int = proto(INT16, "0+")
    partition_index: int = proto(INT32, "0+")
    leader_id: int = proto(INT32, "0+")
    leader_epoch: int = proto(INT32, "7+", default=-1)
    replica_nodes: tuple[int, ...] = proto(array(INT32), "0+")
    isr_nodes: tuple[int, ...] = proto(array(INT32), "0+")
    offline_replicas: tuple[int, ...] = proto(array(INT32), "5+")


@message(api_key=None, kind="header", valid="0-13", flexible="9+")
@dataclass(frozen=True, slots=True)
class _StockPartitionHolder(Struct):
    """A flexible wrapper so the stock partition decodes as in a v12 response."""

    name: str = proto(STRING, "0+")
    partitions: tuple[_StockPartition, ...] = proto(array(_StockPartition), "0+")


def test_a_stock_decoder_skips_tag_10694_as_unknown() -> None:
    ours = _partition_prefix() + b"\x01" + TAG_10694 + b"\x01\x01"
    holder = b"\x02t" + b"\x02" + ours + b"\x00"
    stock = decode(_StockPartitionHolder, 12, holder)
    (partition,) = stock.partitions
    assert (partition.partition_index, partition.leader_id) == (4, 1)
    assert [raw.tag for raw in partition._unknown_tagged_fields] == [10694]


def test_a_whole_v12_response_decodes_the_mode() -> None:
    wire = _wrapped(_partition_prefix() + b"\x01" + TAG_10694 + b"\x01\x01")
    response = decode(MetadataResponse, 12, wire)
    assert response.topics[0].partitions[0].mode == 1
    assert encode(response, 12) == wire
