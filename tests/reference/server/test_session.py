"""BrokerSession: requests through the dispatch table, responses strictly in request order."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.describe_cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseTopic,
)
from lethe_formats.protocol.schema import Struct, message_info
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.handlers import dispatch
from lethe_reference.protocol.session import BrokerSession
from lethe_reference.purgatory import Deferred


class Held(Deferred[Struct]):
    def __init__(self, response: Struct) -> None:
        super().__init__()
        self.response = response

    def try_complete(self) -> Struct | None:
        return None

    def on_expire(self) -> Struct:
        return self.response


class Wire:
    """A session with its output captured."""

    def __init__(self, broker: Broker) -> None:
        self.out = FrameBuffer()
        self.closed = False
        self.session = BrokerSession(broker, 1, send=self.out.feed, close=self._close)

    def _close(self) -> None:
        self.closed = True

    def frames(self) -> list[bytes]:
        return list(self.out.frames())


def request(body: Struct, version: int, correlation_id: int) -> bytes:
    key = message_info(type(body)).api_key
    assert key is not None
    return frame(encode_request(RequestHeader(key, version, correlation_id, "t"), body))


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = Broker(tmp_path / "logs", clock=ManualClock(1_700_000_000_000), durable=False)
    broker.startup()
    dispatch.load_handlers()
    return broker


def test_a_deferred_response_holds_back_later_ones_until_it_completes(broker, monkeypatch):
    held = Held(DescribeClusterResponse(cluster_id="later"))
    monkeypatch.setitem(dispatch.HANDLERS, ApiKey.DESCRIBE_CLUSTER, lambda b, c, r: held)
    wire = Wire(broker)
    wire.session.receive_data(
        request(DescribeClusterRequest(), 1, 1) + request(ApiVersionsRequest("a", "1"), 3, 2)
    )
    assert wire.frames() == []
    held.expire()
    first, second = wire.frames()
    assert struct.unpack_from(">i", first)[0] == 1
    _, body = decode_response(ApiKey.DESCRIBE_CLUSTER, 1, first)
    assert body == DescribeClusterResponse(cluster_id="later")
    _, versions = decode_response(ApiKey.API_VERSIONS, 3, second)
    assert isinstance(versions, ApiVersionsResponse)
    assert versions.error_code == 0


def test_an_exception_in_a_handler_with_an_error_builder_becomes_unknown_server_error(
    broker, monkeypatch
):
    def explode(b: Broker, c: object, r: object) -> Struct:
        raise RuntimeError("bug")

    monkeypatch.setitem(dispatch.HANDLERS, ApiKey.DESCRIBE_CONFIGS, explode)
    wire = Wire(broker)
    body = DescribeConfigsRequest(resources=(DescribeConfigsResource(2, "t", None),))
    wire.session.receive_data(request(body, 4, 9))
    (payload,) = wire.frames()
    _, response = decode_response(ApiKey.DESCRIBE_CONFIGS, 4, payload)
    (result,) = response.results  # type: ignore[attr-defined]
    assert (result.error_code, result.error_message, result.resource_name) == (-1, None, "t")
    assert not wire.closed


def test_an_exception_in_a_handler_without_a_builder_closes_the_connection(broker, monkeypatch):
    def explode(b: Broker, c: object, r: object) -> Struct:
        raise RuntimeError("bug")

    monkeypatch.setitem(dispatch.HANDLERS, ApiKey.DESCRIBE_CLUSTER, explode)
    wire = Wire(broker)
    wire.session.receive_data(request(DescribeClusterRequest(), 1, 1))
    assert wire.frames() == []
    assert wire.closed


def test_a_response_its_version_cannot_carry_closes_the_connection(broker, monkeypatch):
    # topic names are not nullable before v12: a handler bug, never sent half-encoded.
    bad = MetadataResponse(topics=(MetadataResponseTopic(name=None),))
    monkeypatch.setitem(dispatch.HANDLERS, ApiKey.METADATA, lambda b, c, r: bad)
    wire = Wire(broker)
    wire.session.receive_data(request(MetadataRequest(topics=None), 9, 1))
    assert wire.frames() == []
    assert wire.closed


def test_protocol_error_closes_and_later_bytes_are_ignored(broker):
    wire = Wire(broker)
    wire.session.receive_data(struct.pack(">i", -5))
    assert wire.closed
    wire.session.receive_data(request(ApiVersionsRequest(), 0, 1))
    assert wire.frames() == []


def test_peer_eof_closes(broker):
    wire = Wire(broker)
    wire.session.receive_data(b"")
    assert wire.closed
