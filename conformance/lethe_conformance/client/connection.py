"""A blocking Kafka protocol connection for the conformance runner, on lethe_formats only.

Theory of operation
-------------------
One TCP connection to one broker. A request is framed (``framing.frame``),
written whole, and the client reads frames until one is complete; it never
pipelines, so exactly one request is in flight and the response must carry
that request's correlation id. Anything else means the target answered
nonsense, and the connection is closed (the stream cannot be trusted again)::

    send   size | api_key api_version correlation_id client_id [tags] | body
    recv   size | correlation_id [tags] | body        (header v0/v1 by API and version)

Every wait is bounded: the TCP connect by ``connect_timeout``, each response by
the request's ``timeout`` (default ``request_timeout``). Running out raises
:class:`~lethe_conformance.client.errors.TargetTimeoutError`.

Versions. :meth:`KafkaConnection.open` sends ApiVersions at the highest version
lethe defines (retrying at the target's highest if it answers
UNSUPPORTED_VERSION, KIP-511) and keeps the table. :meth:`request` uses the
highest common version unless the caller names one; a named version is sent
as asked, advertised or not, so scenarios can probe any version. To send a
version or API lethe_formats has no definition for, :meth:`request_raw` takes
the body bytes and returns the response body bytes.

TLS (``SSL`` / ``SASL_SSL`` listeners): with ``tls`` (an ``ssl.SSLContext``,
:func:`lethe_formats.security.tls.client_context` builds one from Kafka's
client settings) the TCP connection is wrapped before ApiVersions; the
handshake is bounded by ``connect_timeout`` and a failure (untrusted or
misnamed server certificate, refused client certificate, a plaintext port)
is :class:`~lethe_conformance.client.errors.TargetUnreachableError` naming it.

SASL (``SASL_PLAINTEXT`` / ``SASL_SSL``): SaslHandshake v1 with the
credentials' mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), then its
tokens in SaslAuthenticate requests (:class:`lethe_formats.security.sasl_client.SaslClient`).

Not thread-safe: one connection per thread.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from typing import TypeVar

from lethe_formats.errors import FormatError
from lethe_formats.protocol.api_keys import ApiKey, api_name
from lethe_formats.protocol.compiler import decode, decode_prefix, encode
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.error_codes import ErrorCode, error_name
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_formats.protocol.registry import api, header_versions
from lethe_formats.protocol.schema import Struct, message_info
from lethe_formats.security.sasl_client import SaslClient, SaslCredentials, ScramError

from lethe_conformance.client.errors import (
    AuthenticationError,
    ConnectionClosedError,
    TargetNonsenseError,
    TargetTimeoutError,
    TargetUnreachableError,
    UnsupportedApiError,
)
from lethe_conformance.client.versions import common_version

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "KafkaConnection", "PlainCredentials"]

CLIENT_ID = "lethe-conformance"
CLIENT_SOFTWARE = ("lethe-conformance", "0.1.0")
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_REQUEST_TIMEOUT = 15.0
_RECV_SIZE = 65536

R = TypeVar("R", bound=Struct)


#: SASL credentials (the name predates SCRAM: ``mechanism`` defaults to PLAIN)
PlainCredentials = SaslCredentials


class KafkaConnection:
    """A connected, version-negotiated connection; create it with :meth:`open`."""

    def __init__(self, sock: socket.socket, target: str, request_timeout: float) -> None:
        self.target = target
        self.request_timeout = request_timeout
        self._sock: socket.socket | None = sock
        self._buffer = FrameBuffer()
        self._next_correlation_id = 1
        self._waiting = "no response in time"
        #: api key -> (min, max) the target advertised in ApiVersions
        self.versions: dict[int, tuple[int, int]] = {}

    @classmethod
    def open(
        cls,
        host: str,
        port: int,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        sasl: SaslCredentials | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> KafkaConnection:
        """Connect (over TLS when ``tls`` is given), negotiate versions, and
        authenticate when ``sasl`` is given."""
        target = f"{host}:{port}"
        try:
            sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as error:
            raise TargetUnreachableError(target, None, f"cannot connect: {error}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock = _wrap(sock, tls, host, target)
        connection = cls(sock, target, request_timeout)
        try:
            connection._negotiate()
            if sasl is not None:
                connection._authenticate(sasl)
        except BaseException:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> KafkaConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- versions ---------------------------------------------------------------------------

    def supports(self, api_key: int) -> bool:
        """Whether the target advertised any version of ``api_key``."""
        return api_key in self.versions

    def version_for(self, api_key: int) -> int:
        """The highest version of ``api_key`` both sides speak (UnsupportedApiError if none)."""
        spec = api(api_key)
        ours = (spec.min_version, spec.max_version)
        theirs = self.versions.get(api_key)
        chosen = common_version(ours, theirs)
        if chosen is None:
            raise UnsupportedApiError(self.target, api_key, theirs, ours)
        return chosen

    # --- requests ---------------------------------------------------------------------------

    def request(
        self, body: Struct, *, version: int | None = None, timeout: float | None = None
    ) -> Struct:
        """Send ``body``; the decoded response body. ``version`` None = negotiated.

        A version lethe_formats cannot encode raises its ``UnsupportedVersionError``
        before anything is sent (a caller's mistake, not the target's).
        """
        api_key = message_info(type(body)).api_key
        assert api_key is not None, "request bodies carry their API key"
        chosen = self.version_for(api_key) if version is None else version
        header = RequestHeader(api_key, chosen, self._take_correlation_id(), CLIENT_ID)
        payload = self._exchange(api_key, encode_request(header, body), timeout)
        try:
            answer, decoded = decode_response(api_key, chosen, payload)
        except FormatError as error:
            raise self._nonsense(api_key, f"undecodable v{chosen} response: {error}") from None
        self._check_correlation(api_key, header.correlation_id, answer.correlation_id)
        return decoded

    def call(
        self,
        body: Struct,
        response_type: type[R],
        *,
        version: int | None = None,
        timeout: float | None = None,
    ) -> R:
        """:meth:`request`, typed: the response body as ``response_type``."""
        response = self.request(body, version=version, timeout=timeout)
        if not isinstance(response, response_type):  # pragma: no cover - registry pairs them
            raise TypeError(f"expected {response_type.__name__}, got {type(response).__name__}")
        return response

    def request_raw(
        self,
        api_key: int,
        version: int,
        body: bytes,
        *,
        flexible: bool | None = None,
        timeout: float | None = None,
    ) -> bytes:
        """Send hand-made body bytes; the response body bytes (after its header).

        The header versions follow the API's flexible versions when lethe knows
        the API; otherwise ``flexible`` must say whether the version is flexible.
        """
        request_header_version, response_header_version = self._header_versions(
            api_key, version, flexible
        )
        header = RequestHeader(api_key, version, self._take_correlation_id(), CLIENT_ID)
        payload = self._exchange(api_key, encode(header, request_header_version) + body, timeout)
        try:
            answer, offset = decode_prefix(ResponseHeader, response_header_version, payload)
        except FormatError as error:
            raise self._nonsense(api_key, f"undecodable response header: {error}") from None
        self._check_correlation(api_key, header.correlation_id, answer.correlation_id)
        return payload[offset:]

    # --- internals --------------------------------------------------------------------------

    def _header_versions(
        self, api_key: int, version: int, flexible: bool | None
    ) -> tuple[int, int]:
        if flexible is None:
            return header_versions(api_key, version)
        response = 0 if api_key == ApiKey.API_VERSIONS or not flexible else 1
        return (2 if flexible else 1), response

    def _take_correlation_id(self) -> int:
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (self._next_correlation_id + 1) & 0x7FFFFFFF
        return correlation_id

    def _exchange(self, api_key: int, payload: bytes, timeout: float | None) -> bytes:
        sock = self._require_socket(api_key)
        try:
            sock.sendall(frame(payload))
        except OSError as error:
            self.close()
            detail = f"send failed: {error}"
            raise TargetUnreachableError(self.target, api_name(api_key), detail) from None
        wait = self.request_timeout if timeout is None else timeout
        self._waiting = f"no response within {wait:g} s"
        return self._receive(api_key, time.monotonic() + wait)

    def _receive(self, api_key: int, deadline: float) -> bytes:
        name = api_name(api_key)
        while True:
            try:
                payload = self._buffer.next_frame()
            except FormatError as error:
                raise self._nonsense(api_key, f"bad response frame: {error}") from None
            if payload is not None:
                return payload
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise TargetTimeoutError(self.target, name, self._waiting)
            data = self._recv(api_key, remaining)
            self._buffer.feed(data)

    def _recv(self, api_key: int, remaining: float) -> bytes:
        name = api_name(api_key)
        sock = self._require_socket(api_key)
        sock.settimeout(remaining)
        try:
            data = sock.recv(_RECV_SIZE)
        except TimeoutError:
            self.close()
            raise TargetTimeoutError(self.target, name, self._waiting) from None
        except OSError as error:
            self.close()
            raise TargetUnreachableError(self.target, name, f"receive failed: {error}") from None
        if not data:
            self.close()
            raise ConnectionClosedError(
                self.target,
                name,
                "the target closed the connection",
                advertised=api_key in self.versions,
            )
        return data

    def _require_socket(self, api_key: int) -> socket.socket:
        if self._sock is None:
            raise TargetUnreachableError(self.target, api_name(api_key), "connection is closed")
        return self._sock

    def _check_correlation(self, api_key: int, sent: int, received: int) -> None:
        if sent != received:
            raise self._nonsense(
                api_key, f"response has correlation id {received}, the request had {sent}"
            )

    def _nonsense(self, api_key: int, detail: str) -> TargetNonsenseError:
        self.close()
        return TargetNonsenseError(self.target, api_name(api_key), detail)

    def _negotiate(self) -> None:
        spec = api(ApiKey.API_VERSIONS)
        response = self._api_versions(spec.max_version)
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
            theirs = {key.api_key: key.max_version for key in response.api_keys}
            response = self._api_versions(min(spec.max_version, theirs.get(ApiKey.API_VERSIONS, 0)))
        if response.error_code != ErrorCode.NONE:
            raise self._nonsense(
                ApiKey.API_VERSIONS, f"ApiVersions failed: {error_name(response.error_code)}"
            )
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}

    def _api_versions(self, version: int) -> ApiVersionsResponse:
        """ApiVersions at ``version``; an UNSUPPORTED_VERSION answer is a v0 body (KIP-511)."""
        body = encode(ApiVersionsRequest(*CLIENT_SOFTWARE), version)
        payload = self.request_raw(ApiKey.API_VERSIONS, version, body)
        if len(payload) >= 2 and struct.unpack_from(">h", payload)[0] == (
            ErrorCode.UNSUPPORTED_VERSION
        ):
            version = 0
        try:
            decoded = decode(ApiVersionsResponse, version, payload)
        except FormatError as error:
            raise self._nonsense(ApiKey.API_VERSIONS, f"undecodable: {error}") from None
        return decoded

    def _authenticate(self, credentials: SaslCredentials) -> None:
        mechanism = credentials.mechanism
        handshake = self.call(SaslHandshakeRequest(mechanism), SaslHandshakeResponse, version=1)
        if handshake.error_code != ErrorCode.NONE:
            raise AuthenticationError(
                self.target,
                "SASL_HANDSHAKE",
                f"{mechanism} refused ({error_name(handshake.error_code)}), "
                f"enabled mechanisms {list(handshake.mechanisms)}",
            )
        client = SaslClient(credentials)
        token: bytes | None = client.first()
        while token is not None:
            answer = self.call(SaslAuthenticateRequest(token), SaslAuthenticateResponse)
            if answer.error_code != ErrorCode.NONE:
                raise AuthenticationError(
                    self.target,
                    "SASL_AUTHENTICATE",
                    f"{error_name(answer.error_code)}: {answer.error_message}",
                )
            try:
                token = client.next(answer.auth_bytes)
            except ScramError as error:
                self.close()
                raise AuthenticationError(self.target, "SASL_AUTHENTICATE", str(error)) from None


def _wrap(sock: socket.socket, tls: ssl.SSLContext, host: str, target: str) -> socket.socket:
    """``sock`` after a client TLS handshake (bounded by the socket's connect timeout)."""
    try:
        return tls.wrap_socket(sock, server_hostname=host)
    except (ssl.SSLError, ssl.CertificateError, OSError) as error:
        sock.close()
        raise TargetUnreachableError(target, None, f"TLS handshake failed: {error}") from None
