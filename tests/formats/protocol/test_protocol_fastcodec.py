"""The generated fast codecs give exactly what the Construct codecs give.

For every golden frame (requests from real clients, responses from Kafka 4.0),
every message class and version the registry knows (hypothesis values drawn
from the field specs), every truncation and a few byte flips of the golden
frames, the fast path (``compiler.use_fast_codecs(True)``) and the Construct
path return equal values and bytes, or raise the same error: same class,
message, position and field. The fast path must also really run (not bail) on
valid input, or the equivalence would be vacuous.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.errors import FormatError
from lethe_formats.protocol import compiler
from lethe_formats.protocol.compiler import (
    decode,
    decode_prefix,
    encode,
    encode_buffers,
    fast_codec,
)
from lethe_formats.protocol.envelope import decode_request_header
from lethe_formats.protocol.exceptions import UnsupportedVersionError
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchResponse,
    PartitionData,
)
from lethe_formats.protocol.messages.produce import ProduceRequest
from lethe_formats.protocol.registry import apis, header_versions, lookup
from lethe_formats.protocol.schema import Struct
from wire_golden import Frame, load_frames
from wire_strategies import every_message_version, message_values


@contextmanager
def construct_only() -> Iterator[None]:
    previous = compiler.use_fast_codecs(False)
    try:
        yield
    finally:
        compiler.use_fast_codecs(previous)


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """The value, or everything that identifies the error raised."""
    try:
        return ("value", call())
    except FormatError as error:
        return ("error", type(error), str(error), error.position, error.field)
    except Exception as error:  # raw errors must match too
        return ("error", type(error), str(error))


def both_paths(call: Callable[[], Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    fast = outcome(call)
    with construct_only():
        slow = outcome(call)
    return fast, slow


def _known(frame: Frame) -> bool:
    return frame.api_key in apis()


GOLDEN = [pytest.param(f, id=f.test_id) for f in load_frames() if _known(f)]


def _decode_frame(frame: Frame, payload: bytes) -> tuple[Struct, Struct]:
    """Header and body of ``payload`` through the public entry points."""
    spec = lookup(frame.api_key, frame.api_version)
    if frame.direction == "request":
        header, offset = decode_request_header(payload)
        return header, decode(spec.request, frame.api_version, payload[offset:], base=offset)
    _, header_version = header_versions(frame.api_key, frame.api_version)
    rheader, offset = decode_prefix(ResponseHeader, header_version, payload)
    return rheader, decode(spec.response, frame.api_version, payload[offset:], base=offset)


@pytest.mark.parametrize("frame", GOLDEN)
def test_golden_frame_fast_path_runs_and_matches_construct(frame: Frame) -> None:
    spec = lookup(frame.api_key, frame.api_version)
    request = frame.direction == "request"
    cls = spec.request if request else spec.response
    header_cls = RequestHeader if request else ResponseHeader
    header_version = header_versions(frame.api_key, frame.api_version)[0 if request else 1]
    payload = frame.payload
    # The generated decoder itself accepts the frame (no silent bail-out) ...
    header, offset = fast_codec(header_cls, header_version).decode(payload, 0)
    body, end = fast_codec(cls, frame.api_version).decode(payload, offset)
    assert end == len(payload)
    # ... and agrees with the Construct codec, value and bytes.
    with construct_only():
        assert _decode_frame(frame, payload) == (header, body)
        slow_bytes = encode(header, header_version) + encode(body, frame.api_version)
    assert slow_bytes == payload
    buf = bytearray()
    fast_codec(cls, frame.api_version).encode(body, buf, [])
    assert bytes(buf) == payload[offset:]
    assert encode(body, frame.api_version) == payload[offset:]
    assert b"".join(encode_buffers(body, frame.api_version)) == payload[offset:]


@pytest.mark.parametrize("frame", GOLDEN)
def test_every_truncation_and_byte_flip_fails_alike(frame: Frame) -> None:
    payload = frame.payload
    for size in range(len(payload)):
        fast, slow = both_paths(partial(_decode_frame, frame, payload[:size]))
        assert fast == slow, f"truncated to {size} bytes"
        assert fast[0] == "error"
    rng = random.Random(frame.seq)
    for _ in range(24):
        at = rng.randrange(len(payload))
        flipped = bytearray(payload)
        flipped[at] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, flipped[at] ^ 0xFF))
        fast, slow = both_paths(partial(_decode_frame, frame, bytes(flipped)))
        assert fast == slow, f"byte {at} set to {flipped[at]:#x}"


def _cases() -> list[Any]:
    return [
        pytest.param(cls, version, id=f"{cls.__name__}-v{version}")
        for cls, version in every_message_version()
    ]


@pytest.mark.parametrize(("cls", "version"), _cases())
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_drawn_values_encode_and_decode_alike(
    cls: type[Struct], version: int, data: st.DataObject
) -> None:
    value = data.draw(message_values(cls, version))
    buf = bytearray()
    fast_codec(cls, version).encode(value, buf, [])  # valid values never bail
    with construct_only():
        wire = encode(value, version)
        slow_value = decode(cls, version, wire)
    assert bytes(buf) == wire
    assert encode(value, version) == wire
    assert b"".join(encode_buffers(value, version)) == wire
    fast_value, end = fast_codec(cls, version).decode(wire, 0)
    assert end == len(wire)
    assert fast_value == slow_value == value
    assert [type(getattr(fast_value, name)) for name in cls.__dataclass_fields__] == [
        type(getattr(slow_value, name)) for name in cls.__dataclass_fields__
    ]
    # A truncation in the middle or one flipped byte: the same value or error.
    cut = data.draw(st.integers(0, len(wire)))
    fast, slow = both_paths(lambda: decode(cls, version, wire[:cut]))
    assert fast == slow
    if wire:
        at = data.draw(st.integers(0, len(wire) - 1))
        flipped = wire[:at] + bytes([wire[at] ^ data.draw(st.integers(1, 255))]) + wire[at + 1 :]
        fast, slow = both_paths(lambda: decode(cls, version, flipped))
        assert fast == slow


# ------------------------------------------------------------- encode contract


class Region:
    """A record set known only by its length and its bytes (a file region)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.bytes_calls = 0

    def __len__(self) -> int:
        return len(self.data)

    def __bytes__(self) -> bytes:
        self.bytes_calls += 1
        return self.data


def _fetch_response(records: Any) -> FetchResponse:
    partition = PartitionData(partition_index=0, high_watermark=1, records=records)
    topic = FetchableTopicResponse(topic="t", partitions=(partition,))
    return FetchResponse(responses=(topic,))


@pytest.mark.parametrize("version", [4, 12, 16])
def test_large_record_set_is_passed_through_uncopied(version: int) -> None:
    records = bytes(range(256)) * 4096  # 1 MiB
    response = _fetch_response(records)
    parts = encode_buffers(response, version)
    assert any(part is records for part in parts)
    with construct_only():
        slow_parts = encode_buffers(response, version)
        wire = encode(response, version)
    assert any(part is records for part in slow_parts)
    assert b"".join(parts) == wire == encode(response, version)
    assert [len(part) for part in parts] == [len(part) for part in slow_parts]


def test_large_region_is_only_asked_its_length() -> None:
    data = b"\x07" * (64 * 1024)
    region = Region(data)
    parts = encode_buffers(_fetch_response(region), 12)
    assert any(part is region for part in parts)
    assert region.bytes_calls == 0
    with construct_only():
        wire = encode(_fetch_response(data), 12)
    joined = b"".join(bytes(part) for part in parts)
    assert joined == wire


def test_small_region_is_written_as_its_bytes() -> None:
    region = Region(b"\x01\x02\x03")
    parts = encode_buffers(_fetch_response(region), 12)
    assert all(type(part) is bytes for part in parts)
    assert region.bytes_calls == 1
    with construct_only():
        assert b"".join(parts) == encode(_fetch_response(b"\x01\x02\x03"), 12)


BAD_VALUES: list[tuple[Struct, int]] = [
    (ProduceRequest(transactional_id="x"), 2),  # absent in v2, not ignorable
    (ProduceRequest(acks=1 << 20), 9),  # int16 out of range
    (ProduceRequest(topic_data=None), 9),  # null in a non-nullable array
    (ProduceRequest(transactional_id=b"bytes"), 9),  # type: ignore[arg-type]
    (ProduceRequest(transactional_id="x" * 40000), 9),  # longer than 32767 bytes
    (ResponseHeader(correlation_id=2**31), 1),
    (RequestHeader(client_id="c"), 0),  # ignorable: dropped, not an error
]


@pytest.mark.parametrize(("value", "version"), BAD_VALUES)
def test_encode_errors_are_the_construct_ones(value: Struct, version: int) -> None:
    for call in (lambda: encode(value, version), lambda: b"".join(encode_buffers(value, version))):
        fast, slow = both_paths(call)
        assert fast == slow


def test_unknown_version_is_refused_before_any_fast_path() -> None:
    with pytest.raises(UnsupportedVersionError, match="no version 99"):
        decode_prefix(ProduceRequest, 99, b"")
    with pytest.raises(UnsupportedVersionError, match="no version 99"):
        encode(ProduceRequest(), 99)


def test_decode_prefix_accepts_bytearray_and_offsets() -> None:
    wire = b"\xaa\xbb" + encode(ResponseHeader(correlation_id=7), 1)
    assert decode_prefix(ResponseHeader, 1, bytearray(wire), 2) == (ResponseHeader(7), 7)
    fast, slow = both_paths(lambda: decode_prefix(ResponseHeader, 1, wire, -1))
    assert fast == slow


# ------------------------------------------------------ hand-made malformed input

_AV3 = b"\x00\x00" + b"\x01" + b"\x00\x00\x00\x00"  # ApiVersionsResponse v3 up to its tags
_EPOCH = b"\x01\x08" + (7).to_bytes(8, "big")  # tag 1 (finalized_features_epoch) = 7
_PRODUCE_V3 = b"\xff\xff" + b"\x00\x01" + b"\x00\x00\x00\x10" + b"\x00\x00\x00\x01\x00\x01t"


def _hex_len(value: int, width: int) -> bytes:
    return value.to_bytes(width, "big", signed=True)


MALFORMED: list[tuple[type[Struct], int, bytes, bool]] = [
    # (class, version, body, decodes?)
    (ApiVersionsResponse, 3, _AV3 + b"\x01" + _EPOCH, True),
    (ApiVersionsResponse, 3, _AV3 + b"\x02" + _EPOCH + _EPOCH, False),  # tag twice
    (ApiVersionsResponse, 3, _AV3 + b"\x01\x01\x09" + bytes(9), False),  # value leaves a byte
    (ApiVersionsResponse, 3, _AV3 + b"\x01\x01\x04" + bytes(4), False),  # value overruns
    (ApiVersionsResponse, 3, _AV3 + b"\x05", False),  # 5 tags claimed, none there
    (ApiVersionsResponse, 3, _AV3 + b"\x01\x80\x80\x80\x80\x20\x00", False),  # tag 2**33
    (ApiVersionsResponse, 3, _AV3 + b"\x01\x80\x80\x80\x80\x80\x01\x00", False),  # 6-byte tag
    (ApiVersionsResponse, 3, _AV3 + b"\x01\x03\x01\x02", True),  # bool byte 2 reads True
    (ApiVersionsResponse, 3, _AV3 + b"\x01\xe8\x07\x02ab", True),  # unknown tag 1000
    (ApiVersionsResponse, 3, b"\x00\x00\x7f" + bytes(4) + b"\x00", False),  # 126 api keys
    (ApiVersionsResponse, 0, b"\x00\x00" + _hex_len(-2, 4), False),  # count -2
    (ApiVersionsResponse, 0, b"\x00\x00" + _hex_len(-1, 4), False),  # null, not nullable
    (RequestHeader, 1, bytes(8) + _hex_len(-2, 2), False),  # client_id length -2
    (RequestHeader, 1, bytes(8) + _hex_len(-1, 2), True),  # null client_id
    (ApiVersionsRequest, 3, b"\x81\x80\x02" + b"a" * 32768 + b"\x01\x00", False),  # 32768 bytes
    (ApiVersionsRequest, 3, b"\x00\x01\x00", False),  # null, not nullable
    (ApiVersionsRequest, 3, b"\x03\xff\xfe\x01\x00", True),  # bad UTF-8 reads as U+FFFD
    (ProduceRequest, 3, _PRODUCE_V3 + b"\x00\x00\x00\x01" + bytes(4) + _hex_len(-2, 4), False),
    (ProduceRequest, 3, _PRODUCE_V3 + b"\x00\x00\x00\x01" + bytes(4) + _hex_len(-1, 4), True),
    (ProduceRequest, 3, _PRODUCE_V3 + b"\x00\x00\x00\x01" + bytes(4) + _hex_len(9, 4), False),
]


@pytest.mark.parametrize(("cls", "version", "body", "valid"), MALFORMED)
def test_hand_made_input_decodes_or_fails_alike(
    cls: type[Struct], version: int, body: bytes, valid: bool
) -> None:
    fast, slow = both_paths(lambda: decode(cls, version, body))
    assert fast == slow
    assert (slow[0] == "value") is valid, slow
    if valid:
        assert fast_codec(cls, version).decode(body, 0)[1] == len(body)
    else:
        with pytest.raises(Exception):  # noqa: B017 - the generated code only bails
            fast_codec(cls, version).decode(body, 0)


@pytest.mark.parametrize(("cls", "version"), _cases())
@settings(max_examples=8, deadline=None)
@given(data=st.binary(max_size=48))
def test_random_bytes_decode_or_fail_alike(cls: type[Struct], version: int, data: bytes) -> None:
    fast, slow = both_paths(lambda: decode_prefix(cls, version, data))
    assert fast == slow
