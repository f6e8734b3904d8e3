"""SASL/PLAIN over a real TCP socket: a token with four NUL-separated parts is answered
SASL_AUTHENTICATION_FAILED (58) "Invalid SASL/PLAIN response: expected 3 tokens, got 4"
with empty auth bytes, then the broker closes the connection; a valid token succeeds with
error message "" and the connection stays open. Expected values: a real Kafka 4.0.0
(SASL_PLAINTEXT, PLAIN) answered exactly this on 2026-11-27 (see the sans-IO table in
test_sasl_authenticator.py, every case of which was sent to it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lethe_conformance.client.connection import KafkaConnection
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config
from security_support import SECURED


@pytest.fixture(scope="module")
def address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    log_dir = tmp_path_factory.mktemp("sasl-socket")
    with EmbeddedBroker(log_dir, config=broker_config(overrides=SECURED), sasl_port=0) as broker:
        host, port = broker.sasl_bootstrap.rsplit(":", 1)
        yield host, int(port)


def handshaken(address: tuple[str, int]) -> KafkaConnection:
    conn = KafkaConnection.open(*address)
    shake = conn.call(SaslHandshakeRequest("PLAIN"), SaslHandshakeResponse, version=1)
    assert shake.error_code == ErrorCode.NONE
    return conn


def authenticate(conn: KafkaConnection, token: bytes) -> SaslAuthenticateResponse:
    return conn.call(SaslAuthenticateRequest(token), SaslAuthenticateResponse, version=2)


def closed_by_peer(conn: KafkaConnection) -> bool:
    """Whether the broker closes the connection (read returns end of stream); bounded so a
    broker that wrongly keeps it open fails the test instead of hanging it."""
    sock = conn._sock
    assert sock is not None
    sock.settimeout(30.0)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_four_parts_are_58_then_the_connection_is_closed(address: tuple[str, int]) -> None:
    with handshaken(address) as conn:
        answer = authenticate(conn, b"\0alice\0alice-secret\0extra")
        assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Invalid SASL/PLAIN response: expected 3 tokens, got 4"
        assert answer.auth_bytes == b""
        assert closed_by_peer(conn)


def test_a_valid_token_is_answered_with_an_empty_message_and_stays_open(
    address: tuple[str, int],
) -> None:
    with handshaken(address) as conn:
        answer = authenticate(conn, b"\0alice\0alice-secret")
        assert (answer.error_code, answer.error_message, answer.auth_bytes) == (
            ErrorCode.NONE,
            "",
            b"",
        )
        # still open and authenticated: the next request is answered
        versions = conn.call(ApiVersionsRequest("lethe-test", "1"), ApiVersionsResponse, version=3)
        assert versions.error_code == ErrorCode.NONE
