"""The SASL server state machine (sans-IO) and the listener settings, against Kafka 4.0's
``SaslServerAuthenticator`` / ``PlainSaslServer`` behaviour: which request is allowed in
which state, the answers (UNSUPPORTED_SASL_MECHANISM 33, ILLEGAL_SASL_STATE 34,
SASL_AUTHENTICATION_FAILED 58) with Kafka's messages, and the close after a failure."""

from __future__ import annotations

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest
from lethe_formats.protocol.messages.metadata import MetadataRequest
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_reference.protocol.listeners import (
    ListenerConfigError,
    listener_security,
    parse_jaas_users,
    secured_listeners,
)
from lethe_reference.protocol.sasl import SaslAuthenticator, SaslState
from security_support import JAAS, SASL_LISTENER, SECURED


def handshaken() -> SaslAuthenticator:
    auth = SaslAuthenticator(SASL_LISTENER)
    auth.receive(ApiKey.API_VERSIONS, 3, ApiVersionsRequest())
    action = auth.receive(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))
    assert action.response == SaslHandshakeResponse(ErrorCode.NONE, ("PLAIN",))
    assert auth.state is SaslState.AUTHENTICATE
    return auth


def authenticate(token: bytes) -> tuple[SaslAuthenticator, SaslAuthenticateResponse, bool]:
    auth = handshaken()
    action = auth.receive(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(token))
    assert isinstance(action.response, SaslAuthenticateResponse)
    return auth, action.response, action.close


def test_api_versions_is_answered_normally_before_the_handshake_and_only_once() -> None:
    auth = SaslAuthenticator(SASL_LISTENER)
    first = auth.receive(ApiKey.API_VERSIONS, 3, ApiVersionsRequest())
    assert first.dispatch and not first.close
    assert auth.state.name == "HANDSHAKE"
    again = auth.receive(ApiKey.API_VERSIONS, 3, ApiVersionsRequest())
    assert again.close and again.response is None
    assert auth.state.name == "FAILED"


def test_an_api_versions_at_an_unknown_version_leaves_the_state_for_a_retry() -> None:
    auth = SaslAuthenticator(SASL_LISTENER)
    assert auth.receive(ApiKey.API_VERSIONS, 99, ApiVersionsRequest()).dispatch
    assert auth.state is SaslState.HANDSHAKE_OR_VERSIONS


def test_any_other_request_before_the_handshake_closes_without_an_answer() -> None:
    auth = SaslAuthenticator(SASL_LISTENER)
    action = auth.receive(ApiKey.METADATA, 12, MetadataRequest(topics=None))
    assert action.close and action.response is None and action.refuse is None
    assert action.reason == "Unexpected Kafka request of type METADATA during SASL handshake."


def test_an_unknown_mechanism_is_33_with_the_enabled_list_then_close() -> None:
    auth = SaslAuthenticator(SASL_LISTENER)
    action = auth.receive(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-256"))
    assert action.response == SaslHandshakeResponse(
        ErrorCode.UNSUPPORTED_SASL_MECHANISM, ("PLAIN",)
    )
    assert action.close and auth.state is SaslState.FAILED


def test_a_valid_plain_token_completes_as_the_user_principal() -> None:
    auth, response, close = authenticate(b"\0alice\0alice-secret")
    assert response == SaslAuthenticateResponse(ErrorCode.NONE, "", b"", 0)
    assert not close and auth.complete and auth.principal == "User:alice"


def test_an_authorization_id_equal_to_the_user_is_accepted() -> None:
    auth, response, _ = authenticate(b"alice\0alice\0alice-secret")
    assert response.error_code == ErrorCode.NONE and auth.principal == "User:alice"


_INVALID = "Authentication failed: Invalid username or password"
_COUNT = "Invalid SASL/PLAIN response: expected 3 tokens, got {}"


@pytest.mark.parametrize(
    ("token", "message"),
    [
        # PlainSaslServer.extractTokens: exactly 3 NUL-separated parts (it counts up to 4)
        (b"\0alice\0alice-secret\0extra", _COUNT.format(4)),
        (b"\0alice\0alice-secret\0", _COUNT.format(4)),
        (b"\0alice\0alice-secret\0x\0y\0z", _COUNT.format(4)),
        (b"alice\0alice-secret", _COUNT.format(2)),
        (b"alice-secret", _COUNT.format(1)),
        (b"", _COUNT.format(1)),
        # then evaluateResponse: user name, password, credentials, authorization id
        (b"\0\0alice-secret", "Authentication failed: username not specified"),
        (b"\0\0", "Authentication failed: username not specified"),
        (b"\0alice\0", "Authentication failed: password not specified"),
        (b"\0alice\0wrong", _INVALID),
        (b"\0mallory\0alice-secret", _INVALID),
        (b"\0ALICE\0alice-secret", _INVALID),
        (b"\0alice\0alice-secret ", _INVALID),
        (b"\0alice\xff\0alice-secret", _INVALID),
        (b"admin\0alice\0wrong", _INVALID),  # credentials are checked before the authzid
        (
            b"admin\0alice\0alice-secret",
            "Authentication failed: Client requested an authorization id that is different "
            "from username",
        ),
    ],
)
def test_a_bad_token_is_58_with_kafkas_message_then_close(token: bytes, message: str) -> None:
    auth, response, close = authenticate(token)
    assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert response.error_message == message
    assert response.auth_bytes == b""
    assert close and auth.state is SaslState.FAILED and auth.principal is None


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        (b"\0alice\0alice-secret\0extra", _COUNT.format(4)),
        (b"\0\0alice-secret", "Authentication failed: username not specified"),
        (b"\0alice\0", "Authentication failed: password not specified"),
    ],
)
def test_a_bad_raw_token_after_a_v0_handshake_fails_without_an_answer(
    token: bytes, problem: str
) -> None:
    """SaslHandshake v0: the token is a bare frame and a failure cannot carry an error, so
    the connection is closed (``SaslServerAuthenticator`` without Kafka headers)."""
    auth = SaslAuthenticator(SASL_LISTENER)
    auth.receive(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest("PLAIN"))
    assert auth.raw_tokens
    assert auth.receive_token(token) == (None, problem)
    assert auth.state is SaslState.FAILED and auth.principal is None


def test_a_good_raw_token_after_a_v0_handshake_completes() -> None:
    auth = SaslAuthenticator(SASL_LISTENER)
    auth.receive(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest("PLAIN"))
    assert auth.receive_token(b"alice\0alice\0alice-secret") == (b"", "")
    assert auth.complete and auth.principal == "User:alice"


def test_another_request_while_authenticating_is_refused_with_34_then_close() -> None:
    auth = handshaken()
    action = auth.receive(ApiKey.METADATA, 12, MetadataRequest(topics=None))
    assert action.refuse == (
        ErrorCode.ILLEGAL_SASL_STATE,
        "Unexpected Kafka request of type METADATA during SASL authentication.",
    )
    assert action.close


def test_jaas_user_options_are_the_plain_accounts() -> None:
    users = parse_jaas_users(JAAS + ' user_bob="a \\"quoted\\" pw"')
    assert users == {"admin": "admin-secret", "alice": "alice-secret", "bob": 'a "quoted" pw'}


def test_listener_settings_are_read_listener_prefixed_first() -> None:
    security = listener_security([SECURED], "SASL_PLAINTEXT", "SASL_PLAINTEXT")
    assert security.sasl and security.mechanisms == ("PLAIN",)
    assert security.plain_users["alice"] == "alice-secret"


@pytest.mark.parametrize(
    "settings",
    [
        {},  # Kafka's default mechanism is GSSAPI, which is not implemented
        {"sasl.enabled.mechanisms": "PLAIN"},  # no JAAS line for PLAIN
        {"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512", "x": "y"},
    ],
)
def test_a_sasl_listener_it_cannot_serve_is_a_config_error(settings: dict[str, str]) -> None:
    with pytest.raises(ListenerConfigError):
        listener_security([settings], "SASL_PLAINTEXT", "SASL_PLAINTEXT")


def test_sasl_listeners_come_from_kafkas_listeners_setting() -> None:
    settings = SECURED | {
        "listeners": "PLAINTEXT://:9092,SASL_PLAINTEXT://127.0.0.1:9093,INTERNAL://[::1]:9094",
        "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.internal.plain.sasl.jaas.config": 'x required user_bob="b";',
    }
    found = secured_listeners([settings])
    assert [(s.name, host, port) for s, host, port in found] == [
        ("SASL_PLAINTEXT", "127.0.0.1", 9093),
        ("INTERNAL", "::1", 9094),
    ]
    assert found[1][0].plain_users == {"bob": "b"}
    assert secured_listeners([{"listeners": "PLAINTEXT://:9092"}]) == []
    with pytest.raises(ListenerConfigError):
        secured_listeners([{"listeners": "SASL_PLAINTEXT//nowhere"}])
