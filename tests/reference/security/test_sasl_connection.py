"""A SASL_PLAINTEXT connection end to end through the sans-IO session (real frames, no
socket): ApiVersions, SaslHandshake v1, SaslAuthenticate (or v0 with a bare token
frame), then requests run as the authenticated principal; failures are answered (v1) and
the connection closed, as Kafka does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.metadata import MetadataRequest
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.protocol.loopback import LoopbackClient
from security_support import SASL_LISTENER, secured_broker


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    broker = secured_broker(tmp_path)
    broker.create_topic("t", 1)
    yield broker
    broker.shutdown()


def login(broker: Broker, user: str, password: str) -> tuple[LoopbackClient, int]:
    client = LoopbackClient(broker, listener=SASL_LISTENER)
    versions = client.call(ApiVersionsRequest("test", "1"), ApiVersionsResponse, version=3)
    assert versions.error_code == ErrorCode.NONE
    shake = client.call(SaslHandshakeRequest("PLAIN"), SaslHandshakeResponse, version=1)
    assert shake.error_code == ErrorCode.NONE
    token = f"\0{user}\0{password}".encode()
    answer = client.call(SaslAuthenticateRequest(token), SaslAuthenticateResponse, version=2)
    return client, answer.error_code


def list_latest(client: LoopbackClient) -> int:
    request = ListOffsetsRequest(topics=(ListOffsetsTopic("t", (ListOffsetsPartition(0, 0, -1),)),))
    answer = client.call(request, ListOffsetsResponse, version=9)
    return answer.topics[0].partitions[0].error_code


def test_an_authenticated_connection_runs_requests_as_its_principal(broker: Broker) -> None:
    admin, code = login(broker, "admin", "admin-secret")
    assert code == ErrorCode.NONE and admin.session.connection.principal == "User:admin"
    assert list_latest(admin) == ErrorCode.NONE  # a super user
    alice, code = login(broker, "alice", "alice-secret")
    assert code == ErrorCode.NONE
    assert list_latest(alice) == ErrorCode.TOPIC_AUTHORIZATION_FAILED  # no ACL: denied


def test_a_wrong_password_is_answered_58_and_the_connection_closed(broker: Broker) -> None:
    client, code = login(broker, "alice", "guess")
    assert code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert client.closed


def test_a_request_before_the_handshake_closes_the_connection_unanswered(broker: Broker) -> None:
    client = LoopbackClient(broker, listener=SASL_LISTENER)
    client.send(MetadataRequest(topics=None), version=12)
    assert client.closed and client.raw_frames() == []


def test_a_request_after_the_handshake_gets_its_error_response_with_34(broker: Broker) -> None:
    client = LoopbackClient(broker, listener=SASL_LISTENER)
    client.call(SaslHandshakeRequest("PLAIN"), SaslHandshakeResponse, version=1)
    assert list_latest(client) == ErrorCode.ILLEGAL_SASL_STATE  # ListOffsets' error response
    assert client.closed


def test_sasl_requests_after_authentication_are_illegal_state_as_on_kafka(broker: Broker) -> None:
    client, _ = login(broker, "admin", "admin-secret")
    again = client.call(SaslHandshakeRequest("PLAIN"), SaslHandshakeResponse, version=1)
    assert again == SaslHandshakeResponse(ErrorCode.ILLEGAL_SASL_STATE, ())
    assert not client.closed


def test_a_plaintext_connection_to_the_same_broker_is_anonymous(broker: Broker) -> None:
    client = LoopbackClient(broker)
    assert list_latest(client) == ErrorCode.TOPIC_AUTHORIZATION_FAILED  # ANONYMOUS: not super


def handshake_v0(broker: Broker) -> LoopbackClient:
    client = LoopbackClient(broker, listener=SASL_LISTENER)
    shake = client.call(SaslHandshakeRequest("PLAIN"), SaslHandshakeResponse, version=0)
    assert shake == SaslHandshakeResponse(ErrorCode.NONE, ("PLAIN",))
    return client


def test_a_v0_handshake_takes_the_token_as_a_bare_frame_and_answers_one(broker: Broker) -> None:
    client = handshake_v0(broker)
    client.send_raw(frame(b"\0alice\0alice-secret"))
    assert client.raw_frames() == [b""]  # PLAIN's empty server token, size-prefixed
    assert not client.closed and client.session.connection.principal == "User:alice"
    assert list_latest(client) == ErrorCode.TOPIC_AUTHORIZATION_FAILED  # requests as alice


def test_a_bad_bare_token_closes_the_connection_without_an_answer(broker: Broker) -> None:
    client = handshake_v0(broker)
    client.send_raw(frame(b"\0alice\0wrong"))
    assert client.closed and client.raw_frames() == []
