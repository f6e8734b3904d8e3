"""The client side of SCRAM (lethe_formats.security), judged by RFC 7677's SCRAM-SHA-256
example exchange (the vector test_scram.py holds), and against lethe's server side for
both mechanisms (proof accepted, signature checked)."""

from __future__ import annotations

import pytest
from lethe_formats.security.sasl_client import SaslClient, SaslCredentials
from lethe_formats.security.scram import ScramClient, ScramError
from lethe_reference.protocol.scram import ScramServer, scram_credential
from test_scram import CLIENT_FINAL, CLIENT_FIRST, SERVER_FINAL, SERVER_FIRST

CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"


def rfc_client() -> ScramClient:
    return ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=lambda: CLIENT_NONCE)


def test_rfc7677_exchange_byte_for_byte() -> None:
    client = rfc_client()
    assert client.first() == CLIENT_FIRST
    assert client.final(SERVER_FIRST) == CLIENT_FINAL
    client.verify(SERVER_FINAL)  # the server proved it knows the key


def test_a_wrong_server_signature_is_refused() -> None:
    client = rfc_client()
    client.first()
    client.final(SERVER_FIRST)
    with pytest.raises(ScramError, match="signature"):
        client.verify(b"v=" + b"A" * 44)


@pytest.mark.parametrize(
    ("server_first", "fragment"),
    [
        (b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "nonce"),
        (b"r=" + CLIENT_NONCE.encode() + b",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "nonce"),
        (b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095", "iterations"),
        (b"r=rOprNGfwEbeRWgbNEkqOx,s=***,i=4096", "malformed"),
        (b"e=invalid-proof", "refused"),
    ],
)
def test_a_bad_server_first_message_is_refused(server_first: bytes, fragment: str) -> None:
    client = rfc_client()
    client.first()
    with pytest.raises(ScramError, match=fragment):
        client.final(server_first)


def test_user_names_are_saslname_encoded() -> None:
    client = ScramClient("SCRAM-SHA-512", "a,b=c", "x", nonce=lambda: "n")
    assert client.first() == b"n,,n=a=2Cb=3Dc,r=n"


def test_plain_is_one_rfc4616_token() -> None:
    client = SaslClient(SaslCredentials("alice", "s3cret"))
    assert client.first() == b"\0alice\0s3cret"
    assert client.next(b"") is None


def test_an_unknown_mechanism_is_refused_when_the_credentials_are_made() -> None:
    with pytest.raises(ValueError, match="GSSAPI is not supported"):
        SaslCredentials("alice", "x", "GSSAPI")


@pytest.mark.parametrize(
    ("mechanism", "hash_name"), [("SCRAM-SHA-256", "sha256"), ("SCRAM-SHA-512", "sha512")]
)
def test_client_and_server_agree_and_a_wrong_password_is_refused(
    mechanism: str, hash_name: str
) -> None:
    users = {"alice": scram_credential("alice-secret", hash_name)}
    for password, accepted in (("alice-secret", True), ("wrong", False)):
        server = ScramServer(mechanism, users)
        client = SaslClient(SaslCredentials("alice", password, mechanism))
        final = client.next(server.evaluate(client.first()))
        assert final is not None
        if accepted:
            assert client.next(server.evaluate(final)) is None
            assert server.complete and server.username == "alice"
        else:
            with pytest.raises(ScramError):
                server.evaluate(final)
