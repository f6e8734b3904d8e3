"""Every recorded frame decodes (header + body) and re-encodes to the same bytes.

Requests come from librdkafka 2.16 and kafka-python 3.0.12, responses from
Kafka 4.0 (fixtures/golden/wire). Frames of APIs that have no definition yet
are strict xfails, so defining an API turns them into passes (and a stale
xfail fails).
"""

from __future__ import annotations

import struct

import pytest
from lethe_formats.protocol.envelope import (
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from lethe_formats.protocol.registry import apis
from wire_golden import Frame, load_frames


def _param(frame: Frame) -> object:
    marks = []
    if frame.api_key not in apis():
        marks.append(pytest.mark.xfail(strict=True, reason="API not yet defined"))
    return pytest.param(frame, id=frame.test_id, marks=marks)


def test_golden_set_has_all_234_frames() -> None:
    assert len(load_frames()) == 234


@pytest.mark.parametrize("frame", [_param(frame) for frame in load_frames()])
def test_golden_frame_round_trips_exactly(frame: Frame) -> None:
    (size,) = struct.unpack_from(">i", frame.raw)
    assert size == len(frame.payload)
    if frame.direction == "request":
        header, body = decode_request(frame.payload)
        assert (header.api_key, header.api_version) == (frame.api_key, frame.api_version)
        assert header.correlation_id == frame.correlation_id
        assert header.client_id == frame.client_id
        assert encode_request(header, body) == frame.payload
    else:
        rheader, rbody = decode_response(frame.api_key, frame.api_version, frame.payload)
        assert rheader.correlation_id == frame.correlation_id
        assert encode_response(frame.api_version, rheader, rbody) == frame.payload
