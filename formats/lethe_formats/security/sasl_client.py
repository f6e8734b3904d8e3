"""The client's side of a SASL exchange (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), sans-IO.

Theory of operation
-------------------
Kafka's ``SaslClientAuthenticator`` sends SaslHandshake v1 with the mechanism,
then the mechanism's tokens in SaslAuthenticate requests until the mechanism
is complete. lethe's clients (the conformance kit's connection, the tools'
admin client) do the same; the tokens come from :class:`SaslClient`::

    client = SaslClient(credentials)
    token = client.first()
    while token is not None:
        answer = <SaslAuthenticate(token)>.auth_bytes      (error code checked by the caller)
        token = client.next(answer)

PLAIN (RFC 4616) is one token, ``NUL user NUL password``; SCRAM is two
(:class:`~.scram.ScramClient`), and the server's last token is checked
(:class:`~.scram.ScramError` if the server did not prove it knows the key).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lethe_formats.security.scram import MECHANISMS, ScramClient, ScramError

__all__ = ["CLIENT_MECHANISMS", "PLAIN", "SaslClient", "SaslCredentials", "ScramError"]

PLAIN = "PLAIN"
CLIENT_MECHANISMS = (PLAIN, *MECHANISMS)


@dataclass(frozen=True, slots=True)
class SaslCredentials:
    """A SASL identity: user name, password, and the mechanism to prove it with."""

    username: str
    password: str = field(repr=False)
    mechanism: str = PLAIN

    def __post_init__(self) -> None:
        if self.mechanism not in CLIENT_MECHANISMS:
            raise ValueError(
                f"SASL mechanism {self.mechanism} is not supported "
                f"(one of {', '.join(CLIENT_MECHANISMS)})"
            )


class SaslClient:
    """The tokens of one authentication: :meth:`first`, then :meth:`next` per answer."""

    def __init__(self, credentials: SaslCredentials) -> None:
        self.credentials = credentials
        self._scram = (
            ScramClient(credentials.mechanism, credentials.username, credentials.password)
            if credentials.mechanism in MECHANISMS
            else None
        )
        self._round = 0

    def first(self) -> bytes:
        if self._scram is not None:
            return self._scram.first()
        user, password = self.credentials.username, self.credentials.password
        return b"\0" + user.encode("utf-8") + b"\0" + password.encode("utf-8")

    def next(self, answer: bytes) -> bytes | None:
        """The next token after the server's ``answer``; None when complete."""
        self._round += 1
        if self._scram is None:
            return None
        if self._round == 1:
            return self._scram.final(answer)
        self._scram.verify(answer)
        return None
