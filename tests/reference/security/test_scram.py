"""SASL/SCRAM on the server side: RFC 7677's SCRAM-SHA-256 example exchange byte for byte,
the refusals (unknown user, wrong proof, changed nonce, changed channel binding), and the
authenticator's answers as Kafka gives them (two SaslAuthenticate rounds; any failure is
SASL_AUTHENTICATION_FAILED with the generic message, then close)."""

from __future__ import annotations

import base64

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import SaslHandshakeRequest
from lethe_reference.protocol.listeners import listener_security
from lethe_reference.protocol.sasl import SaslAuthenticator
from lethe_reference.protocol.scram import ScramError, ScramServer, scram_credential

# RFC 7677 section 3: user "user", password "pencil"
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SERVER_FIRST = (
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)
CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server(password: str = "pencil") -> ScramServer:
    credential = scram_credential(password, "sha256", salt=SALT, iterations=4096)
    return ScramServer("SCRAM-SHA-256", {"user": credential}, nonce=lambda: SERVER_NONCE)


def test_the_rfc_7677_exchange_is_answered_byte_for_byte() -> None:
    server = rfc_server()
    assert server.evaluate(CLIENT_FIRST) == SERVER_FIRST
    assert server.evaluate(CLIENT_FINAL) == SERVER_FINAL
    assert server.complete and server.username == "user"


def test_a_wrong_password_fails_the_proof() -> None:
    server = rfc_server("not-pencil")
    server.evaluate(CLIENT_FIRST)
    with pytest.raises(ScramError, match="Invalid client credentials"):
        server.evaluate(CLIENT_FINAL)
    assert not server.complete


def test_an_unknown_user_fails_at_the_first_message() -> None:
    with pytest.raises(ScramError):
        rfc_server().evaluate(b"n,,n=mallory,r=abc")


@pytest.mark.parametrize(
    "final",
    [
        CLIENT_FINAL.replace(b"r=rOpr", b"r=XOpr"),  # another nonce
        CLIENT_FINAL.replace(b"c=biws", b"c=eSws"),  # "y,," instead of "n,,"
        CLIENT_FINAL.replace(b",p=", b",q="),  # no proof
        b"\xff\xfe",
    ],
)
def test_a_tampered_final_message_is_refused(final: bytes) -> None:
    server = rfc_server()
    server.evaluate(CLIENT_FIRST)
    with pytest.raises(ScramError):
        server.evaluate(final)


def test_the_authenticator_runs_two_rounds_and_refuses_with_kafkas_generic_message() -> None:
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required user_user="pencil";'
    settings = {
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": jaas,
    }
    listener = listener_security([settings], "SASL_PLAINTEXT", "SASL_PLAINTEXT")
    auth = SaslAuthenticator(listener)
    auth.receive(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-256"))
    first = auth.receive(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(CLIENT_FIRST))
    assert isinstance(first.response, SaslAuthenticateResponse)
    assert first.response.error_code == ErrorCode.NONE and not first.close
    assert first.response.auth_bytes.startswith(b"r=rOprNGfwEbeRWgbNEkqO")
    # the salt is the broker's own, so the RFC's proof does not match: refused
    second = auth.receive(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(CLIENT_FINAL))
    assert second.response == SaslAuthenticateResponse(
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-256",
        b"",
    )
    assert second.close and not auth.complete
