"""SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677): keys and the client side.

Theory of operation
-------------------
Both sides derive the same keys from the password::

    SaltedPassword = PBKDF2-HMAC-H(password, salt, iterations)
    ClientKey      = HMAC(SaltedPassword, "Client Key")
    StoredKey      = H(ClientKey)
    ServerKey      = HMAC(SaltedPassword, "Server Key")

:func:`scram_keys` computes them (the reference broker keeps StoredKey and
ServerKey per user, as Kafka's metadata log does). :class:`ScramClient` is the
client's half of the exchange, as Kafka's ``ScramSaslClient`` runs it: two
tokens out, two in::

    client-first   n,,n=<user>,r=<client nonce>
    server-first   r=<client nonce><server nonce>,s=<salt>,i=<iterations>
    client-final   c=biws,r=<both nonces>,p=<ClientKey XOR HMAC(StoredKey, AuthMessage)>
    server-final   v=<HMAC(ServerKey, AuthMessage)>    (checked: the server knew the key)

A server-first whose nonce does not extend ours, with fewer iterations than
4096 (Kafka's minimum, which its client enforces too), or a server-final
with a wrong signature or an ``e=`` error raises :class:`ScramError`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable

__all__ = ["MECHANISMS", "MIN_ITERATIONS", "ScramClient", "ScramError", "scram_keys"]

#: mechanism -> hashlib name
MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MIN_ITERATIONS = 4096


class ScramError(Exception):
    """A SCRAM exchange failed (malformed message, wrong proof or signature)."""


def hmac_digest(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name).digest()


def scram_keys(
    password: str, hash_name: str, salt: bytes, iterations: int
) -> tuple[bytes, bytes, bytes]:
    """(ClientKey, StoredKey, ServerKey) of ``password`` (RFC 5802 section 3)."""
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, iterations)
    client_key = hmac_digest(hash_name, salted, b"Client Key")
    stored_key = hashlib.new(hash_name, client_key).digest()
    return client_key, stored_key, hmac_digest(hash_name, salted, b"Server Key")


def scram_attributes(message: str) -> dict[str, str]:
    """``k=v,k=v`` -> {k: v} (first occurrence wins); ScramError if malformed."""
    out: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise ScramError(f"malformed SCRAM attribute {part!r}")
        out.setdefault(key, value)
    return out


def _saslname(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


class ScramClient:
    """One client-side exchange: :meth:`first`, then :meth:`final`, then :meth:`verify`."""

    def __init__(
        self,
        mechanism: str,
        username: str,
        password: str,
        *,
        nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24),
    ) -> None:
        if mechanism not in MECHANISMS:
            raise ScramError(f"unknown SCRAM mechanism {mechanism}")
        self.hash_name = MECHANISMS[mechanism]
        self.username = username
        self._password = password
        self._nonce = nonce()
        self._first_bare = ""
        self._server_signature = b""

    def first(self) -> bytes:
        """The client-first message (no channel binding, no authzid: ``n,,``)."""
        self._first_bare = f"n={_saslname(self.username)},r={self._nonce}"
        return ("n,," + self._first_bare).encode("utf-8")

    def final(self, server_first: bytes) -> bytes:
        """The client-final message answering ``server_first``."""
        text = server_first.decode("utf-8", "replace")
        attrs = scram_attributes(text)
        if "e" in attrs:
            raise ScramError(f"server refused: {attrs['e']}")
        nonce = attrs.get("r", "")
        if not nonce.startswith(self._nonce) or nonce == self._nonce:
            raise ScramError("server nonce does not extend the client nonce")
        try:
            salt = base64.b64decode(attrs.get("s", ""), validate=True)
            iterations = int(attrs.get("i", ""))
        except ValueError:
            raise ScramError(f"malformed server-first message {text!r}") from None
        if iterations < MIN_ITERATIONS:
            raise ScramError(f"server asked for {iterations} iterations, below {MIN_ITERATIONS}")
        client_key, stored_key, server_key = scram_keys(
            self._password, self.hash_name, salt, iterations
        )
        without_proof = f"c={base64.b64encode(b'n,,').decode()},r={nonce}"
        auth = f"{self._first_bare},{text},{without_proof}".encode()
        signature = hmac_digest(self.hash_name, stored_key, auth)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = hmac_digest(self.hash_name, server_key, auth)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        """Check the server-final message's signature (ScramError if wrong)."""
        attrs = scram_attributes(server_final.decode("utf-8", "replace"))
        if "e" in attrs:
            raise ScramError(f"server refused: {attrs['e']}")
        try:
            signature = base64.b64decode(attrs.get("v", ""), validate=True)
        except ValueError:
            raise ScramError("malformed server-final message") from None
        if not hmac.compare_digest(signature, self._server_signature):
            raise ScramError("server signature does not match: the server does not know the key")
