"""One blocking TCP connection to one broker: framing, correlation ids, version choice.

Theory of operation
-------------------
A Kafka connection is a stream of size-prefixed frames (``lethe_formats.protocol
.framing``). The client writes one request and reads frames until the response
with the same correlation id arrives; lethe's tools never pipeline, so exactly
one request is in flight and any other correlation id means the stream is
broken. Every wait is bounded: the TCP connect by ``connect_timeout`` and each
response by the request's own timeout (``request.timeout.ms``); running out is
:class:`ResponseTimeoutError`, which the caller may retry like the Java client does.

Versions. Right after connecting the client sends ApiVersions at the highest
version lethe defines. A broker that does not speak it answers
UNSUPPORTED_VERSION with the body encoded at v0 (KIP-511) listing its own
range, and the client asks again at the broker's highest. Every later request
uses, per API, the highest version both sides support::

    lethe  [lo_c ........ hi_c]
    broker        [lo_b ............ hi_b]
    used                   = min(hi_c, hi_b), if >= max(lo_c, lo_b)

TLS (``security.protocol=SSL`` / ``SASL_SSL``): the TCP connection is wrapped
with the configured ``ssl.SSLContext`` before anything is sent; a failed
handshake (untrusted or misnamed broker certificate, client certificate
refused, a plaintext port) is :class:`AuthenticationFailedError` holding
Java's ``SslAuthenticationException``, not retriable, as in Kafka's client.

SASL (``SASL_PLAINTEXT`` / ``SASL_SSL``), as Java's ``SaslClientAuthenticator``
does it: after ApiVersions, SaslHandshake v1 with the mechanism (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512), then its tokens in SaslAuthenticate requests
(:class:`lethe_formats.security.sasl_client.SaslClient`: PLAIN's RFC 4616
``NUL username NUL password``, SCRAM's two rounds). A refusal is
:class:`AuthenticationFailedError` holding the Java exception the client would
throw (``UnsupportedSaslMechanismException: Client SASL mechanism 'PLAIN' not
enabled in the server, enabled mechanisms are [...]``, or the broker's
``error_message`` in a ``SaslAuthenticationException``); it is not retriable.

Errors. Socket failures and a closed connection are :class:`ConnectionLostError`
(Java's ``DisconnectException``, retriable); undecodable bytes raise the
protocol layer's ``FormatError``; an API neither side can speak is
:class:`NoCommonVersionError`.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from typing import TypeVar, cast

from lethe_formats.protocol.api_keys import ApiKey, api_name
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.error_codes import ErrorCode, error_name
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct, message_info
from lethe_formats.security.sasl_client import SaslClient, ScramError

from lethe_tools.kafka_client.config import SaslCredentials
from lethe_tools.kafka_client.java_errors import JavaException, java_exception

__all__ = [
    "CLIENT_SOFTWARE_NAME",
    "AuthenticationFailedError",
    "BrokerConnection",
    "ClientError",
    "ConnectionLostError",
    "NoCommonVersionError",
    "ResponseTimeoutError",
]

CLIENT_SOFTWARE_NAME = "lethe"
CLIENT_SOFTWARE_VERSION = "0.1.0"
_RECV_SIZE = 65536

R = TypeVar("R", bound=Struct)


class ClientError(Exception):
    """Base of the client's own failures (not Kafka error codes)."""


class ConnectionLostError(ClientError):
    """Could not connect, or the connection broke (Java: DisconnectException)."""


class ResponseTimeoutError(ClientError):
    """No response within the request's timeout (Java: TimeoutException)."""


class NoCommonVersionError(ClientError):
    """The broker speaks no version of an API that lethe also speaks."""


class AuthenticationFailedError(ClientError):
    """SASL refused; ``java`` is the exception Kafka's Java client would raise."""

    def __init__(self, java: JavaException) -> None:
        super().__init__(str(java))
        self.java = java


class BrokerConnection:
    """A connected, version-negotiated connection; use :meth:`open`."""

    def __init__(self, sock: socket.socket, address: tuple[str, int], client_id: str) -> None:
        self.address = address
        self.client_id = client_id
        self._sock = sock
        self._buffer = FrameBuffer()
        self._next_correlation_id = 0
        #: api key -> (min, max) the broker advertised
        self.broker_versions: dict[int, tuple[int, int]] = {}

    @classmethod
    def open(
        cls,
        host: str,
        port: int,
        *,
        client_id: str,
        connect_timeout: float,
        request_timeout: float,
        sasl: SaslCredentials | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> BrokerConnection:
        """Connect (over TLS with ``tls``), negotiate versions, authenticate with ``sasl``."""
        try:
            sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as error:
            raise ConnectionLostError(
                f"Connection to {host}:{port} could not be established: {error}"
            ) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock = _wrap(sock, tls, host, port)
        connection = cls(sock, (host, port), client_id)
        try:
            connection._negotiate(request_timeout)
            if sasl is not None:
                connection._authenticate(sasl, request_timeout)
        except BaseException:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> BrokerConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def version_for(self, api_key: int) -> int:
        """The highest version of ``api_key`` both lethe and the broker support."""
        spec = api(api_key)
        advertised = self.broker_versions.get(api_key)
        if advertised is not None:
            low, high = max(spec.min_version, advertised[0]), min(spec.max_version, advertised[1])
            if low <= high:
                return high
        raise NoCommonVersionError(
            f"{api_name(api_key)}: broker {self.address[0]}:{self.address[1]} supports "
            f"{advertised if advertised else 'no version'}, lethe {spec.versions}"
        )

    def request(self, body: R, *, timeout: float, version: int | None = None) -> Struct:
        """Send ``body`` and return the decoded response body (blocking, bounded)."""
        api_key = message_info(type(body)).api_key
        assert api_key is not None, "request bodies carry their API key"
        chosen = self.version_for(api_key) if version is None else version
        correlation_id = self._send(api_key, chosen, body)
        payload = self._receive(time.monotonic() + timeout)
        header, response = decode_response(api_key, chosen, payload)
        if header.correlation_id != correlation_id:
            self.close()
            raise ConnectionLostError(
                f"correlation id {header.correlation_id} does not match request {correlation_id}"
            )
        return response

    def _send(self, api_key: int, version: int, body: Struct) -> int:
        correlation_id = self._next_correlation_id
        self._next_correlation_id += 1
        header = RequestHeader(api_key, version, correlation_id, self.client_id)
        try:
            self._sock.sendall(frame(encode_request(header, body)))
        except OSError as error:
            raise ConnectionLostError(f"send to {self._where()} failed: {error}") from None
        return correlation_id

    def _receive(self, deadline: float) -> bytes:
        while (payload := self._buffer.next_frame()) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ResponseTimeoutError(f"no response from {self._where()} in time")
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(_RECV_SIZE)
            except TimeoutError:
                raise ResponseTimeoutError(f"no response from {self._where()} in time") from None
            except OSError as error:
                raise ConnectionLostError(f"receive from {self._where()} failed: {error}") from None
            if not data:
                raise ConnectionLostError(f"{self._where()} closed the connection")
            self._buffer.feed(data)
        return payload

    def _negotiate(self, timeout: float) -> None:
        spec = api(ApiKey.API_VERSIONS)
        request = ApiVersionsRequest(CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION)
        response = self._api_versions(request, spec.max_version, timeout)
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
            theirs = {key.api_key: key.max_version for key in response.api_keys}
            retry = min(spec.max_version, theirs.get(ApiKey.API_VERSIONS, 0))
            response = self._api_versions(request, retry, timeout)
        if response.error_code != ErrorCode.NONE:
            raise ConnectionLostError(
                f"ApiVersions to {self._where()} failed with error code {response.error_code}"
            )
        self.broker_versions = {
            key.api_key: (key.min_version, key.max_version) for key in response.api_keys
        }

    def _api_versions(
        self, request: ApiVersionsRequest, version: int, timeout: float
    ) -> ApiVersionsResponse:
        """ApiVersions at ``version``; an UNSUPPORTED_VERSION reply is read as v0."""
        correlation_id = self._send(ApiKey.API_VERSIONS, version, request)
        payload = self._receive(time.monotonic() + timeout)
        if len(payload) >= 6 and struct.unpack_from(">h", payload, 4)[0] == (
            ErrorCode.UNSUPPORTED_VERSION
        ):
            version = 0
        header, body = decode_response(ApiKey.API_VERSIONS, version, payload)
        if header.correlation_id != correlation_id:
            raise ConnectionLostError(
                f"correlation id mismatch in ApiVersions from {self._where()}"
            )
        return cast(ApiVersionsResponse, body)

    def _authenticate(self, sasl: SaslCredentials, timeout: float) -> None:
        handshake = cast(
            SaslHandshakeResponse,
            self.request(SaslHandshakeRequest(sasl.mechanism), timeout=timeout, version=1),
        )
        if handshake.error_code != ErrorCode.NONE:
            raise AuthenticationFailedError(_handshake_refusal(handshake, sasl.mechanism))
        client = SaslClient(sasl)
        token: bytes | None = client.first()
        while token is not None:
            answer = cast(
                SaslAuthenticateResponse,
                self.request(SaslAuthenticateRequest(token), timeout=timeout),
            )
            if answer.error_code != ErrorCode.NONE:
                raise AuthenticationFailedError(
                    java_exception(answer.error_code, answer.error_message)
                )
            try:
                token = client.next(answer.auth_bytes)
            except ScramError as error:
                raise AuthenticationFailedError(
                    java_exception(ErrorCode.SASL_AUTHENTICATION_FAILED, str(error))
                ) from None

    def _where(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"


def _wrap(sock: socket.socket, tls: ssl.SSLContext, host: str, port: int) -> socket.socket:
    """``sock`` after the TLS handshake (bounded by the connect timeout still set on it)."""
    try:
        return tls.wrap_socket(sock, server_hostname=host)
    except (ssl.SSLError, ssl.CertificateError, OSError) as error:
        sock.close()
        raise AuthenticationFailedError(
            JavaException(
                "org.apache.kafka.common.errors.SslAuthenticationException",
                f"SSL handshake failed with {host}:{port}: {error}",
            )
        ) from None


def _handshake_refusal(response: SaslHandshakeResponse, mechanism: str) -> JavaException:
    """``SaslClientAuthenticator.handleSaslHandshakeResponse``'s exceptions."""
    enabled = "[" + ", ".join(response.mechanisms) + "]"
    code = response.error_code
    if code == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
        return java_exception(
            code,
            f"Client SASL mechanism '{mechanism}' not enabled in the server, "
            f"enabled mechanisms are {enabled}",
        )
    if code == ErrorCode.ILLEGAL_SASL_STATE:
        return java_exception(
            code,
            f"Unexpected handshake request with client mechanism {mechanism}, "
            f"enabled mechanisms are {enabled}",
        )
    return java_exception(
        ErrorCode.ILLEGAL_SASL_STATE,
        f"Unknown error code {error_name(code)}, client mechanism is {mechanism}, "
        f"enabled mechanisms are {enabled}",
    )
