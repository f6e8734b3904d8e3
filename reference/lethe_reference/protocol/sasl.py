"""The server side of Kafka's SASL exchange on one connection, as a table (sans-IO).

Theory of operation
-------------------
On a SASL_PLAINTEXT listener a connection starts unauthenticated; Kafka's
``SaslServerAuthenticator`` reads its first requests before any handler sees
them. :class:`SaslAuthenticator` is that part: :meth:`~SaslAuthenticator.receive`
takes one decoded request and returns a :class:`SaslAction` (what the session
must do), moving through::

    state                 request            action                          next state
    HANDSHAKE_OR_VERSIONS ApiVersions        dispatch (normal answer)        HANDSHAKE_REQUEST *
    HANDSHAKE_OR_VERSIONS SaslHandshake      see below
    HANDSHAKE_OR_VERSIONS any other          close, no answer                FAILED
    HANDSHAKE_REQUEST     SaslHandshake      see below
    HANDSHAKE_REQUEST     any other          close, no answer                FAILED
    AUTHENTICATE          SaslAuthenticate   evaluate the token (below)
    AUTHENTICATE          any other          that API's error response with  FAILED
                                             ILLEGAL_SASL_STATE (34), then close
    FAILED                anything           close                           FAILED

    * an ApiVersions at a version the broker does not know is answered
      (UNSUPPORTED_VERSION) and the state stays, so the client can retry.

SaslHandshake (v0 or v1): a mechanism the listener enables is answered NONE
with the enabled list (-> AUTHENTICATE), in the order Kafka sends it: Kafka
copies ``sasl.enabled.mechanisms`` through a ``java.util.HashSet``
(``SaslServerAuthenticator``), so the list comes in that set's iteration
order, not the configured one (:func:`java_hash_set_order`; Kafka 4.0.0
answers ``PLAIN,SCRAM-SHA-256,SCRAM-SHA-512`` as
``[PLAIN, SCRAM-SHA-512, SCRAM-SHA-256]``); any other UNSUPPORTED_SASL_MECHANISM
(33) with the list, then the connection closes. A v0 handshake announces raw
token frames instead of SaslAuthenticate requests (:attr:`SaslAuthenticator.raw_tokens`):
the client's next frame is the bare token (:meth:`SaslAuthenticator.receive_token`),
answered by a bare frame with the server's token (empty for PLAIN) on success;
a failure has no way to carry an error, so the connection is just closed,
as Kafka does.

SaslAuthenticate with a PLAIN token ``[authzid] NUL authcid NUL passwd``
(RFC 4616), checked in the order of Kafka's ``PlainSaslServer.evaluateResponse``;
every failure is SASL_AUTHENTICATION_FAILED (58) with the message below, an
empty auth_bytes, then the connection is closed (Kafka's
``SaslAuthenticationException`` path of ``SaslServerAuthenticator``)::

    not exactly 3 NUL-separated parts      "Invalid SASL/PLAIN response: expected 3 tokens, got N"
                                           (N counts at most 4 parts: "a\0b\0c\0" is 4)
    empty user name                        "Authentication failed: username not specified"
    empty password                         "Authentication failed: password not specified"
    unknown user or wrong password         "Authentication failed: Invalid username or password"
    authzid given and not the user name    "Authentication failed: Client requested an
                                           authorization id that is different from username"
    otherwise                              NONE, error message "" (not null, as on
                                           Kafka's wire), empty auth bytes, session lifetime 0
                                           (no re-authentication) -> COMPLETE, principal User:<name>

The token is decoded as UTF-8 with invalid sequences replaced (Java's
``new String(bytes, UTF_8)``); NUL never occurs inside a multi-byte sequence,
so the split is the same either way.

SCRAM-SHA-256/512 (:mod:`.scram`): two SaslAuthenticate rounds; the first
answers NONE with the server-first message, the second with the server-final
one and completes. Every SCRAM failure is Kafka's generic 58 message.
The SCRAM users are the broker's credentials (AlterUserScramCredentials, kept
by :mod:`lethe_reference.cluster.scram_credentials`, looked up when the
handshake names the mechanism, so a user added a moment ago can log in), then
the listener's JAAS users (:mod:`.listeners`).

A failure is answered, then the connection is closed, as Kafka does. Once
COMPLETE, requests go to the handlers; SaslHandshake/SaslAuthenticate there
are ILLEGAL_SASL_STATE (:mod:`lethe_reference.handlers.cluster`).
"""

from __future__ import annotations

import enum
import hmac
import struct
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lethe_formats.protocol.api_keys import ApiKey, api_name
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from lethe_formats.protocol.messages.sasl_handshake import SaslHandshakeResponse
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct

from lethe_reference.protocol.listeners import PLAIN, ListenerSecurity
from lethe_reference.protocol.scram import MECHANISMS, ScramCredential, ScramError, ScramServer

__all__ = ["GENERIC_FAILURE", "SaslAction", "SaslAuthenticator", "SaslState"]

GENERIC_FAILURE = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism "
)
_BAD_PASSWORD = "Authentication failed: Invalid username or password"
_NO_USER = "Authentication failed: username not specified"
_NO_PASSWORD = "Authentication failed: password not specified"
_TOKEN_COUNT = "Invalid SASL/PLAIN response: expected 3 tokens, got {}"
_OTHER_AUTHZID = (
    "Authentication failed: Client requested an authorization id that is different from username"
)


class SaslState(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


def _java_string_hash(text: str) -> int:
    value = 0
    for unit in struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H", text.encode("utf-16-be")):
        value = (31 * value + unit) & 0xFFFFFFFF
    return value


def java_hash_set_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """``new ArrayList<>(new HashSet<>(names))``: duplicates dropped, then by bucket of a
    ``HashMap`` of capacity max(16, next power of two >= n/0.75 + 1), colliding names in
    insertion order (String.hashCode, spread by ``h ^ (h >>> 16)``)."""
    unique = list(dict.fromkeys(names))
    capacity = 16
    while capacity < int(len(unique) / 0.75) + 1:
        capacity *= 2

    def bucket(name: str) -> int:
        code = _java_string_hash(name)
        return (code ^ (code >> 16)) & (capacity - 1)

    return tuple(sorted(unique, key=bucket))


@dataclass(frozen=True, slots=True)
class SaslAction:
    """What the session does with one request while authenticating.

    ``dispatch``: answer it as the handlers would (ApiVersions). ``response``:
    send this. ``refuse``: send the request's own error response with this
    (code, message). ``close``: close the connection (after sending, if anything).
    """

    dispatch: bool = False
    response: Struct | None = None
    refuse: tuple[ErrorCode, str] | None = None
    close: bool = False
    reason: str = ""


class SaslAuthenticator:
    """One connection's SASL server state; see the module docstring."""

    def __init__(
        self,
        listener: ListenerSecurity,
        scram_credentials: Callable[[str], Mapping[str, ScramCredential]] | None = None,
    ) -> None:
        self.listener = listener
        #: mechanism -> the broker's SCRAM users (AlterUserScramCredentials), looked up
        #: before the listener's own JAAS users
        self._scram_credentials = scram_credentials
        self.state = SaslState.HANDSHAKE_OR_VERSIONS
        self.mechanism: str | None = None
        self.principal: str | None = None
        #: SaslHandshake v0: tokens travel as raw frames, not SaslAuthenticate requests
        self.raw_tokens = False
        self._scram: ScramServer | None = None

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def receive(self, api_key: int, api_version: int, request: Any) -> SaslAction:
        """The action for one decoded request (the table of the module docstring)."""
        if self.state is SaslState.AUTHENTICATE:
            return self._authenticating(api_key, request)
        if self.state in (SaslState.HANDSHAKE_OR_VERSIONS, SaslState.HANDSHAKE):
            return self._handshaking(api_key, api_version, request)
        return self._fail(f"{api_name(api_key)} in SASL state {self.state.value}")

    # --- handshake ----------------------------------------------------------------------

    def _handshaking(self, api_key: int, api_version: int, request: Any) -> SaslAction:
        if api_key == ApiKey.API_VERSIONS:
            if self.state is not SaslState.HANDSHAKE_OR_VERSIONS:
                return self._fail(
                    "Unexpected ApiVersions request received during SASL authentication "
                    f"state {self.state.value}"
                )
            if api_version in api(ApiKey.API_VERSIONS).versions:
                self.state = SaslState.HANDSHAKE
            return SaslAction(dispatch=True)
        if api_key != ApiKey.SASL_HANDSHAKE:
            return self._fail(
                f"Unexpected Kafka request of type {api_name(api_key)} during SASL handshake."
            )
        enabled = java_hash_set_order(self.listener.mechanisms)
        if request.mechanism not in enabled:
            self.state = SaslState.FAILED
            return SaslAction(
                response=SaslHandshakeResponse(ErrorCode.UNSUPPORTED_SASL_MECHANISM, enabled),
                close=True,
                reason=f"Unsupported SASL mechanism {request.mechanism}",
            )
        self.mechanism = request.mechanism
        if request.mechanism in MECHANISMS:
            users = self.listener.scram_users.get(request.mechanism, {})
            if self._scram_credentials is not None:
                users = ChainMap(dict(self._scram_credentials(request.mechanism)), dict(users))
            self._scram = ScramServer(request.mechanism, users)
        self.state = SaslState.AUTHENTICATE
        self.raw_tokens = api_version == 0
        return SaslAction(response=SaslHandshakeResponse(ErrorCode.NONE, enabled))

    # --- authentication -----------------------------------------------------------------

    def _authenticating(self, api_key: int, request: Any) -> SaslAction:
        if api_key != ApiKey.SASL_AUTHENTICATE:
            message = (
                f"Unexpected Kafka request of type {api_name(api_key)} during SASL authentication."
            )
            self.state = SaslState.FAILED
            return SaslAction(
                refuse=(ErrorCode.ILLEGAL_SASL_STATE, message), close=True, reason=message
            )
        answer, problem = self._evaluate(bytes(request.auth_bytes))
        if answer is None:
            self.state = SaslState.FAILED
            message = problem if self.mechanism == PLAIN else GENERIC_FAILURE + str(self.mechanism)
            failed = SaslAuthenticateResponse(ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"")
            return SaslAction(response=failed, close=True, reason=problem)
        # error_message "" (not null): the schema's default, which Kafka leaves in place
        return SaslAction(response=SaslAuthenticateResponse(ErrorCode.NONE, "", answer, 0))

    def _evaluate(self, token: bytes) -> tuple[bytes | None, str]:
        """(the server's token, or None on failure; the failure reason). Sets COMPLETE and
        the principal once the mechanism is done."""
        if self._scram is not None:
            try:
                answer = self._scram.evaluate(token)
            except ScramError as error:
                return None, str(error)
            if self._scram.complete:
                self.state = SaslState.COMPLETE
                self.principal = f"User:{self._scram.username}"
            return answer, ""
        problem = self._check_plain(token)
        if problem is not None:
            return None, problem
        self.state = SaslState.COMPLETE
        return b"", ""

    def receive_token(self, token: bytes) -> tuple[bytes | None, str]:
        """A raw token after SaslHandshake v0: (the server's token to send, or None to
        close; the failure reason, "" on success)."""
        if self.state is not SaslState.AUTHENTICATE or not self.raw_tokens:
            reason = f"raw SASL token in state {self.state.value}"
            self.state = SaslState.FAILED
            return None, reason
        answer, problem = self._evaluate(token)
        if answer is None:
            self.state = SaslState.FAILED
        return answer, problem

    def _check_plain(self, token: bytes) -> str | None:
        """None when the token authenticates (``self.principal`` set), else the message."""
        parts = _split_plain(token.decode("utf-8", errors="replace"))
        if len(parts) != 3:
            return _TOKEN_COUNT.format(len(parts))
        authzid, user, password = parts
        if not user:
            return _NO_USER
        if not password:
            return _NO_PASSWORD
        expected = self.listener.plain_users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            return _BAD_PASSWORD
        if authzid and authzid != user:
            return _OTHER_AUTHZID
        self.principal = f"User:{user}"
        return None

    def _fail(self, reason: str) -> SaslAction:
        self.state = SaslState.FAILED
        return SaslAction(close=True, reason=reason)


def _split_plain(text: str) -> list[str]:
    """The NUL-separated parts, counting at most four (``PlainSaslServer.extractTokens``
    stops after the fourth, so "a\\0b\\0c\\0d\\0e" is four parts, the last "d")."""
    return text.split("\0", 4)[:4]
