"""Bad bytes never crash the decoders: truncation, bad lengths, huge counts, varint
overflow and random damage give typed FormatErrors with absolute positions;
unknown tagged fields are kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.errors import FormatError, TruncatedError, VarintError
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.envelope import decode_request, decode_response, encode_request
from lethe_formats.protocol.exceptions import MalformedMessageError, UnknownApiKeyError
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.delete_records import DeleteRecordsRequest, DeleteRecordsTopic
from lethe_formats.protocol.messages.metadata import MetadataRequest
from lethe_formats.protocol.registry import apis
from lethe_formats.protocol.schema import RawTaggedField
from wire_golden import Frame, frame_by_seq, load_frames

DEFINED = [f for f in load_frames() if f.api_key in apis()]


def _decode(frame: Frame, payload: bytes) -> object:
    if frame.direction == "request":
        return decode_request(payload)
    return decode_response(frame.api_key, frame.api_version, payload)


@pytest.mark.parametrize("seq", [2, 31, 32, 74, 75, 117, 118, 125])
def test_every_truncation_of_a_golden_frame_is_a_typed_error(seq: int) -> None:
    frame = frame_by_seq(seq)
    for cut in range(len(frame.payload)):
        with pytest.raises(FormatError) as caught:
            _decode(frame, frame.payload[:cut])
        assert caught.value.position is not None
        assert 0 <= caught.value.position <= cut


def test_bytes_after_the_body_are_malformed_at_their_position() -> None:
    frame = frame_by_seq(117)
    with pytest.raises(MalformedMessageError) as caught:
        decode_request(frame.payload + b"\x00")
    assert caught.value.position == len(frame.payload)


def test_negative_array_length_other_than_minus_one_is_malformed() -> None:
    data = b"\xff\xff\xff\xfe" + b"\x00" * 8  # topics count -2
    with pytest.raises(MalformedMessageError, match="invalid length -2") as caught:
        decode(DeleteRecordsRequest, 0, data)
    assert (caught.value.position, caught.value.field) == (0, "topics")


def test_null_array_where_not_nullable_is_malformed() -> None:
    data = b"\xff\xff\xff\xff\x00\x00\x00\x00"
    with pytest.raises(MalformedMessageError, match="non-nullable field topics"):
        decode(DeleteRecordsRequest, 0, data)
    assert decode(MetadataRequest, 1, b"\xff\xff\xff\xff").topics is None


def test_huge_declared_array_count_fails_without_allocating() -> None:
    data = b"\x7f\xff\xff\xff" + b"\x00" * 8
    with pytest.raises(TruncatedError, match="claims 2147483647 elements") as caught:
        decode(DeleteRecordsRequest, 0, data)
    assert caught.value.position == 0


def test_huge_declared_string_length_fails_without_reading() -> None:
    data = b"\x00\x00\x00\x01" + b"\x7f\xff" + b"abc"  # name claims 32767 bytes
    with pytest.raises(TruncatedError) as caught:
        decode(DeleteRecordsRequest, 0, data)
    assert (caught.value.position, caught.value.field) == (4, "topics.name")


def test_compact_string_longer_than_32767_is_malformed() -> None:
    data = b"\x02" + b"\x81\x80\x02" + b"x" * 40000  # compact length 32768 + 1
    with pytest.raises(MalformedMessageError, match="invalid length 32768"):
        decode(DeleteRecordsRequest, 2, data)


def test_unsigned_varint_longer_than_five_bytes_is_a_varint_error() -> None:
    data = b"\xff\xff\xff\xff\xff\x01"  # compact array count that never ends
    with pytest.raises(VarintError) as caught:
        decode(DeleteRecordsRequest, 2, data)
    assert caught.value.position == 0


def test_unsigned_varint_above_32_bits_is_a_varint_error() -> None:
    with pytest.raises(VarintError):
        decode(DeleteRecordsRequest, 2, b"\xff\xff\xff\xff\x7f")


def test_unknown_tagged_fields_in_a_golden_request_are_preserved() -> None:
    payload = frame_by_seq(1).payload  # ApiVersions v3 request, body ends in 0 tagged fields
    assert payload.endswith(b"\x00")
    changed = payload[:-1] + b"\x02\x05\x02hi\x40\x00"
    header, body = decode_request(changed)
    assert isinstance(body, ApiVersionsRequest)
    assert body._unknown_tagged_fields == (RawTaggedField(5, b"hi"), RawTaggedField(64, b""))
    assert encode_request(header, body) == changed


def test_unknown_tagged_fields_in_request_header_v2_are_preserved() -> None:
    payload = frame_by_seq(1).payload
    end = 8 + 2 + len("golden-rdk-admin")  # api_key..correlation_id, int16 client_id
    assert payload[end] == 0
    changed = payload[:end] + b"\x01\x07\x01\x2a" + payload[end + 1 :]
    header, body = decode_request(changed)
    assert header._unknown_tagged_fields == (RawTaggedField(7, b"\x2a"),)
    assert encode_request(header, body) == changed


def test_known_tagged_field_with_a_wrong_size_is_malformed() -> None:
    # ApiVersions v3 response body: error 0, no api keys, throttle 0, tag 1 (epoch, int64)
    # declared 9 bytes long
    body = b"\x00\x00" + b"\x01" + b"\x00\x00\x00\x00" + b"\x01\x01\x09" + b"\x00" * 9
    with pytest.raises(MalformedMessageError):
        decode(ApiVersionsResponse, 3, body)
    good = b"\x00\x00\x01\x00\x00\x00\x00\x01\x01\x08" + b"\x00" * 7 + b"\x05"
    assert decode(ApiVersionsResponse, 3, good).finalized_features_epoch == 5


def test_duplicate_known_tag_is_malformed() -> None:
    one = b"\x01\x08" + b"\x00" * 8
    body = b"\x00\x00\x01\x00\x00\x00\x00\x02" + one + one
    with pytest.raises(MalformedMessageError, match="twice"):
        decode(ApiVersionsResponse, 3, body)


def test_unknown_api_key_in_a_request_is_its_own_error() -> None:
    with pytest.raises(UnknownApiKeyError):
        decode_request(b"\x27\x0f\x00\x00\x00\x00\x00\x01\x00\x00")


def test_request_shorter_than_its_key_and_version_is_truncated() -> None:
    with pytest.raises(TruncatedError):
        decode_request(b"\x00\x12\x00")


@settings(max_examples=300)
@given(
    index=st.integers(0, len(DEFINED) - 1),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=4),
)
def test_damaged_golden_frames_decode_or_raise_format_errors(
    index: int, flips: list[tuple[int, int]]
) -> None:
    frame = DEFINED[index]
    damaged = bytearray(frame.payload)
    for at, mask in flips:
        damaged[at % len(damaged)] ^= mask
    try:
        _decode(frame, bytes(damaged))
    except FormatError as error:
        assert error.position is None or 0 <= error.position <= len(damaged)


def test_encoding_refuses_strings_longer_than_32767_bytes() -> None:
    with pytest.raises(ValueError, match="32767"):
        encode(DeleteRecordsRequest(topics=(DeleteRecordsTopic(name="x" * 32768),)), 0)
