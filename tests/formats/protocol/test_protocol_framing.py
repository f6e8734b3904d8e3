"""FrameBuffer splits a byte stream into frames however the bytes arrive (h11-style:
whole, byte at a time, with trailing data) and refuses bad sizes before allocating."""

from __future__ import annotations

import struct

import pytest
from lethe_formats.protocol.exceptions import FrameTooLargeError, MalformedMessageError
from lethe_formats.protocol.framing import DEFAULT_MAX_FRAME_SIZE, FrameBuffer, frame
from wire_golden import load_frames


def _conn_stream(conn: int, direction: str) -> list[bytes]:
    return [f.raw for f in load_frames() if f.conn == conn and f.direction == direction]


def test_frame_prefixes_the_big_endian_size() -> None:
    assert frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert frame(b"") == b"\x00\x00\x00\x00"


def test_default_maximum_is_kafkas_socket_request_max_bytes() -> None:
    assert DEFAULT_MAX_FRAME_SIZE == 104857600


def test_golden_connection_fed_whole_gives_every_payload() -> None:
    raws = _conn_stream(8, "request")
    buffer = FrameBuffer()
    buffer.feed(b"".join(raws))
    assert list(buffer.frames()) == [raw[4:] for raw in raws]
    assert buffer.buffered == 0


def test_golden_connection_fed_byte_at_a_time_gives_every_payload() -> None:
    raws = _conn_stream(8, "response")
    buffer = FrameBuffer()
    out = []
    for byte in b"".join(raws):
        buffer.feed(bytes([byte]))
        out.extend(buffer.frames())
    assert out == [raw[4:] for raw in raws]


def test_trailing_partial_frame_waits_for_more_bytes() -> None:
    first, second = _conn_stream(1, "request")[:2]
    buffer = FrameBuffer()
    buffer.feed(first + second[:7])
    assert list(buffer.frames()) == [first[4:]]
    assert buffer.next_frame() is None
    assert buffer.buffered == 7
    assert buffer.position == len(first)
    buffer.feed(second[7:])
    assert buffer.next_frame() == second[4:]


def test_incomplete_size_field_gives_nothing_yet() -> None:
    buffer = FrameBuffer()
    buffer.feed(b"\x00\x00")
    assert buffer.next_frame() is None


def test_empty_frame_is_an_empty_payload() -> None:
    buffer = FrameBuffer()
    buffer.feed(frame(b"") + frame(b"x"))
    assert list(buffer.frames()) == [b"", b"x"]


def test_oversized_frame_is_refused_as_soon_as_its_size_is_read() -> None:
    buffer = FrameBuffer(max_frame_size=1000)
    buffer.feed(frame(b"ok") + struct.pack(">i", 0x7FFFFFFF))
    assert buffer.next_frame() == b"ok"
    with pytest.raises(FrameTooLargeError) as caught:
        buffer.next_frame()
    assert caught.value.size == 0x7FFFFFFF
    assert caught.value.position == 6
    assert "Invalid receive (size = 2147483647 larger than 1000)" in str(caught.value)
    assert buffer.buffered == 4  # nothing of the claimed size was read or reserved


def test_frame_of_exactly_the_maximum_is_accepted() -> None:
    buffer = FrameBuffer(max_frame_size=3)
    buffer.feed(frame(b"abc"))
    assert buffer.next_frame() == b"abc"


def test_negative_size_is_malformed_and_the_error_is_sticky() -> None:
    buffer = FrameBuffer()
    buffer.feed(struct.pack(">i", -1) + frame(b"later"))
    with pytest.raises(MalformedMessageError, match=r"Invalid receive \(size = -1\)"):
        buffer.next_frame()
    with pytest.raises(MalformedMessageError):
        buffer.next_frame()


def test_long_streams_keep_absolute_positions_after_compaction() -> None:
    payload = b"p" * 40000
    buffer = FrameBuffer()
    for _ in range(5):
        buffer.feed(frame(payload))
        assert buffer.next_frame() == payload
    assert buffer.position == 5 * (len(payload) + 4)
