"""SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the server side, sans-IO.

Theory of operation
-------------------
Two client tokens, two server tokens, as Kafka's ``ScramSaslServer`` runs it::

    client-first   n,,n=<user>,r=<client nonce>[,extensions]      (gs2 header "n,," or "y,,",
                                                                   an authzid "a=" must be the user)
    server-first   r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
    client-final   c=<base64 gs2 header>,r=<both nonces>,p=<base64 proof>
    server-final   v=<base64 server signature>

The server knows, per user, a :class:`ScramCredential` (salt, iterations,
StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey =
HMAC(SaltedPassword, "Server Key")), never the password. It checks the proof:
ClientKey = proof XOR HMAC(StoredKey, AuthMessage) must hash to StoredKey,
where AuthMessage = client-first-bare "," server-first "," client-final
without the proof. Any failure (unknown user, bad proof, nonce or channel
binding mismatch, malformed message) raises :class:`ScramError`, which the
authenticator answers with Kafka's generic SASL_AUTHENTICATION_FAILED message.

Credentials: Kafka keeps SCRAM credentials in its metadata log (set with
AlterUserScramCredentials or ``kafka-storage format --add-scram``). The
reference broker keeps those set with AlterUserScramCredentials in its log dir
(:mod:`lethe_reference.cluster.scram_credentials`) and looks a user up there
first. It also derives credentials at startup from ``user_<name>="<password>"``
options of the listener's ``<mechanism lower-case>.sasl.jaas.config`` (a
lethe-specific reading of that line, see :mod:`.listeners`), with a random salt
and 4096 iterations (Kafka's minimum for SCRAM-SHA-256/512); those are fixed
accounts of the listener, not listed by DescribeUserScramCredentials and not
changed by AlterUserScramCredentials.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lethe_formats.security.scram import (
    MECHANISMS,
    MIN_ITERATIONS,
    ScramError,
    hmac_digest,
    scram_attributes,
    scram_keys,
)

__all__ = [
    "MECHANISMS",
    "ScramCredential",
    "ScramError",
    "ScramServer",
    "scram_credential",
]

DEFAULT_ITERATIONS = MIN_ITERATIONS


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def scram_credential(
    password: str,
    hash_name: str,
    *,
    salt: bytes | None = None,
    iterations: int = DEFAULT_ITERATIONS,
) -> ScramCredential:
    """The server-side credential of ``password`` (RFC 5802 section 3)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    _, stored_key, server_key = scram_keys(password, hash_name, salt, iterations)
    return ScramCredential(salt, iterations, stored_key, server_key)


def _saslname(name: str) -> str:
    if "=" in name.replace("=2C", "").replace("=3D", ""):
        raise ScramError("invalid user name encoding")
    return name.replace("=2C", ",").replace("=3D", "=")


class ScramServer:
    """One SCRAM exchange: :meth:`evaluate` each client token, in order."""

    def __init__(
        self,
        mechanism: str,
        credentials: Mapping[str, ScramCredential],
        *,
        nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24),
    ) -> None:
        self.hash_name = MECHANISMS[mechanism]
        self.credentials = credentials
        self._nonce = nonce
        self.username: str | None = None
        self.complete = False
        self._first_bare = ""
        self._server_first = ""
        self._gs2 = ""
        self._credential: ScramCredential | None = None

    def evaluate(self, token: bytes) -> bytes:
        """The server's answer to the next client token; ScramError when it fails."""
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise ScramError("token is not UTF-8") from None
        if self.complete:
            raise ScramError("exchange already complete")
        return self._final(text) if self._credential else self._first(text)

    def _first(self, text: str) -> bytes:
        parts = text.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y") or not text.startswith(parts[0] + ","):
            raise ScramError("malformed client-first message")
        self._gs2 = f"{parts[0]},{parts[1]},"
        self._first_bare = parts[2]
        attrs = scram_attributes(self._first_bare)
        if "n" not in attrs or "r" not in attrs or not attrs["r"]:
            raise ScramError("client-first message without user or nonce")
        user = _saslname(attrs["n"])
        authzid = parts[1]
        if authzid and (not authzid.startswith("a=") or _saslname(authzid[2:]) != user):
            raise ScramError("authorization id differs from the user")
        credential = self.credentials.get(user)
        if credential is None:
            raise ScramError("Authentication failed: Invalid user credentials")
        self.username, self._credential = user, credential
        nonce = attrs["r"] + self._nonce()
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={nonce},s={salt},i={credential.iterations}"
        return self._server_first.encode()

    def _final(self, text: str) -> bytes:
        assert self._credential is not None
        without_proof, sep, proof_part = text.rpartition(",p=")
        attrs = scram_attributes(without_proof) if sep else {}
        if not sep or attrs.get("r") != scram_attributes(self._server_first)["r"]:
            raise ScramError("client-final message with a wrong nonce")
        if attrs.get("c") != base64.b64encode(self._gs2.encode()).decode():
            raise ScramError("channel binding differs from the client-first message")
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise ScramError("proof is not base64") from None
        auth = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        credential, name = self._credential, self.hash_name
        signature = hmac_digest(name, credential.stored_key, auth)
        if len(proof) != len(signature):
            raise ScramError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(name, client_key).digest(), credential.stored_key):
            raise ScramError("Invalid client credentials")
        self.complete = True
        server_signature = hmac_digest(name, credential.server_key, auth)
        return b"v=" + base64.b64encode(server_signature)
