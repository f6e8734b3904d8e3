"""BrokerConnection: bytes in, events out, exactly as Kafka's network layer treats input.

Expected behaviour comes from Kafka's SocketServer / RequestContext: a frame size
that is negative or above socket.request.max.bytes, a header or body that does
not parse, an unknown or disabled API key, or an unsupported version of any API
but ApiVersions closes the connection without a reply; an ApiVersions request at
an unsupported version is answered at v0 (response header v0).
"""

from __future__ import annotations

import struct

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.metadata import MetadataRequest, MetadataResponse
from lethe_formats.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from lethe_formats.protocol.registry import apis
from lethe_formats.protocol.schema import Struct, message_info
from lethe_reference.handlers.context import RequestContext
from lethe_reference.protocol import (
    NEED_DATA,
    PAUSED,
    BrokerConnection,
    ConnectionClosed,
    ConnectionState,
    LocalProtocolError,
    ProtocolError,
    RequestReceived,
)
from lethe_reference.protocol.state import TRANSITIONS, Input

ALL_KEYS = frozenset(apis())


def connection(max_frame_size: int = 1 << 20, keys: frozenset[int] = ALL_KEYS) -> BrokerConnection:
    return BrokerConnection(7, keys, max_frame_size=max_frame_size)


def request_frame(body: Struct, version: int, correlation_id: int = 1, client: str = "c") -> bytes:
    key = message_info(type(body)).api_key
    assert key is not None
    return frame(encode_request(RequestHeader(key, version, correlation_id, client), body))


METADATA = request_frame(MetadataRequest(topics=None), 12, correlation_id=5, client="meta")
API_VERSIONS = request_frame(ApiVersionsRequest("lethe", "1.0"), 3, correlation_id=6)


def events(conn: BrokerConnection) -> list[object]:
    out = []
    while True:
        event = conn.next_event()
        out.append(event)
        if event in (NEED_DATA, PAUSED) or isinstance(event, ConnectionClosed | ProtocolError):
            return out


def test_whole_frame_gives_one_request_with_header_fields():
    conn = connection()
    conn.receive_data(METADATA)
    event = conn.next_event()
    assert isinstance(event, RequestReceived)
    assert event.context == RequestContext(
        api_key=ApiKey.METADATA,
        api_version=12,
        correlation_id=5,
        client_id="meta",
        connection_id=7,
    )
    assert event.request == MetadataRequest(topics=None)
    assert event.size == len(METADATA) - 4


def test_byte_at_a_time_needs_data_until_the_last_byte():
    conn = connection()
    for byte in METADATA[:-1]:
        conn.receive_data(bytes([byte]))
        assert conn.next_event() is NEED_DATA
    conn.receive_data(METADATA[-1:])
    assert isinstance(conn.next_event(), RequestReceived)


def test_several_frames_in_one_chunk_come_out_one_per_response():
    conn = connection()
    conn.receive_data(METADATA + API_VERSIONS + METADATA[:3])
    first = conn.next_event()
    assert isinstance(first, RequestReceived)
    # Kafka mutes the channel while a request is in flight: nothing more until answered.
    assert conn.next_event() is PAUSED
    conn.send_response(first.context, MetadataResponse())
    second = conn.next_event()
    assert isinstance(second, RequestReceived)
    assert second.context.api_key == ApiKey.API_VERSIONS
    conn.send_response(second.context, ApiVersionsResponse())
    assert conn.next_event() is NEED_DATA  # the third frame is still incomplete


def test_negative_frame_size_closes():
    conn = connection()
    conn.receive_data(struct.pack(">i", -1) + b"xyz")
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "frame-size"
    assert conn.state is ConnectionState.ERROR
    assert isinstance(conn.next_event(), ConnectionClosed)


def test_frame_over_socket_request_max_bytes_closes_before_the_body_arrives():
    conn = connection(max_frame_size=100)
    conn.receive_data(struct.pack(">i", 101))
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "frame-size"
    assert "101 larger than 100" in event.message
    assert conn.must_close


def test_frame_at_exactly_the_maximum_is_read():
    conn = connection(max_frame_size=len(METADATA) - 4)
    conn.receive_data(METADATA)
    assert isinstance(conn.next_event(), RequestReceived)


def test_garbage_header_closes():
    conn = connection()
    conn.receive_data(frame(b"\x00"))  # two bytes short of api_key + api_version
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "header"


def test_truncated_client_id_closes():
    payload = struct.pack(">hhih", ApiKey.METADATA, 1, 9, 10) + b"abc"
    conn = connection()
    conn.receive_data(frame(payload))
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "header"


def test_unknown_api_key_closes():
    conn = connection()
    conn.receive_data(frame(struct.pack(">hhih", 999, 0, 1, -1)))
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "unknown-api"


def test_known_api_without_a_handler_closes():
    conn = connection(keys=frozenset({ApiKey.API_VERSIONS}))
    conn.receive_data(METADATA)
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "unknown-api"
    assert "METADATA" in event.message


def test_unsupported_version_of_metadata_closes():
    conn = connection()
    conn.receive_data(frame(struct.pack(">hhih", ApiKey.METADATA, 14, 1, -1) + b"\x00" * 8))
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "unsupported-version"


def test_unsupported_api_versions_version_is_answered_at_v0_with_header_v0():
    # A client's newer ApiVersions (v5, flexible header v2) must get a v0 answer it can parse.
    header = struct.pack(">hhih", ApiKey.API_VERSIONS, 5, 42, 3) + b"cli" + b"\x00"
    conn = connection()
    conn.receive_data(frame(header + b"garbage body is not parsed"))
    event = conn.next_event()
    assert isinstance(event, RequestReceived)
    assert event.context.api_version == 5
    assert event.request == ApiVersionsRequest()
    data = conn.send_response(event.context, ApiVersionsResponse(error_code=35))
    size, correlation_id, error_code = struct.unpack_from(">iih", data)
    assert (size, correlation_id, error_code) == (len(data) - 4, 42, 35)
    _, body = decode_response(ApiKey.API_VERSIONS, 0, data[4:])
    assert body == ApiVersionsResponse(error_code=35)


def test_body_that_does_not_decode_closes():
    header = struct.pack(">hhih", ApiKey.METADATA, 1, 1, -1)
    conn = connection()
    conn.receive_data(frame(header + struct.pack(">i", 5)))  # 5 topics, no bytes for them
    event = conn.next_event()
    assert isinstance(event, ProtocolError)
    assert event.kind == "body"


def test_bytes_after_the_body_are_ignored_as_kafka_does():
    payload = METADATA[4:] + b"\x00\x01\x02"
    conn = connection()
    conn.receive_data(frame(payload))
    assert isinstance(conn.next_event(), RequestReceived)


def test_truncated_stream_then_eof_is_a_close_not_an_error():
    conn = connection()
    conn.receive_data(METADATA[:10])
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    assert isinstance(conn.next_event(), ConnectionClosed)
    assert conn.state is ConnectionState.CLOSED


def test_peer_closing_while_a_request_is_in_flight_drops_the_response():
    conn = connection()
    conn.receive_data(METADATA)
    event = conn.next_event()
    assert isinstance(event, RequestReceived)
    conn.receive_data(b"")
    assert isinstance(conn.next_event(), ConnectionClosed)
    assert conn.send_response(event.context, MetadataResponse()) == b""


def test_response_header_v1_for_flexible_versions_and_v0_otherwise():
    for version, header_len in ((12, 5), (8, 4)):
        conn = connection()
        conn.receive_data(request_frame(MetadataRequest(topics=None), version, correlation_id=3))
        event = conn.next_event()
        assert isinstance(event, RequestReceived)
        data = conn.send_response(event.context, MetadataResponse())
        assert struct.unpack_from(">i", data, 4)[0] == 3
        _, body = decode_response(ApiKey.METADATA, version, data[4:])
        assert body == MetadataResponse()
        if header_len == 5:
            assert data[8] == 0  # empty tagged-field section of response header v1


def test_sending_a_response_with_nothing_in_flight_is_a_local_error():
    conn = connection()
    ctx = RequestContext(3, 12, 1, None, 7)
    with pytest.raises(LocalProtocolError):
        conn.send_response(ctx, MetadataResponse())
    assert conn.state is ConnectionState.OPEN


def test_acks_zero_produce_gets_no_response_bytes():
    conn = connection()
    conn.receive_data(request_frame(ProduceRequest(acks=0, timeout_ms=100), 9))
    event = conn.next_event()
    assert isinstance(event, RequestReceived)
    assert conn.send_response(event.context, ProduceResponse()) == b""
    assert conn.state is ConnectionState.OPEN


def test_failed_acks_zero_produce_closes_the_connection():
    conn = connection()
    conn.receive_data(request_frame(ProduceRequest(acks=0, timeout_ms=100), 9))
    event = conn.next_event()
    assert isinstance(event, RequestReceived)
    failed = ProduceResponse(
        responses=(
            TopicProduceResponse(
                name="t", partition_responses=(PartitionProduceResponse(index=0, error_code=3),)
            ),
        )
    )
    assert conn.send_response(event.context, failed) == b""
    assert conn.must_close


def test_every_missing_transition_is_refused():
    for state in ConnectionState:
        for event in Input:
            machine_has = (state, event) in TRANSITIONS
            if state is ConnectionState.CLOSED:
                assert machine_has == (event in (Input.PEER_CLOSED, Input.CLOSE))
    assert (ConnectionState.OPEN, Input.RESPONSE) not in TRANSITIONS
    assert (ConnectionState.ERROR, Input.REQUEST) not in TRANSITIONS
