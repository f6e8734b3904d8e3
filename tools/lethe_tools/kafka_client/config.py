"""Client settings, read from a Java properties file as Kafka's tools read ``--command-config``.

Theory of operation
-------------------
Kafka's tools pass the properties file straight to ``Admin.create``; the Java
client validates each key it knows and ignores (with a warning) the rest.
:func:`client_config` does the same for the handful of keys lethe's client acts
on, with Kafka's defaults, and raises :class:`ClientConfigError` with a message
naming the key and the value for anything it cannot honour, so a setting is
never dropped silently:

============================== ======= ==========================================
key                            default used for
============================== ======= ==========================================
bootstrap.servers              --      where the first Metadata request goes
client.id                      ""      the request header's client id
security.protocol              PLAIN.. PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
ssl.truststore.*, ssl.keystore --      TLS: trusted CAs, client certificate (PEM, PKCS12)
.*, ssl.key.password, ssl.end..
sasl.mechanism                 GSSAPI  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
sasl.jaas.config               --      Plain/ScramLoginModule username / password
request.timeout.ms             30000   one request's wait for its response
default.api.timeout.ms         60000   a whole admin call, retries included
retry.backoff.ms               100     first pause between retries
retry.backoff.max.ms           1000    longest pause (exponential growth, x2)
socket.connection.setup...ms   10000   TCP connect timeout
============================== ======= ==========================================

The security settings are read by :mod:`lethe_formats.security.client_settings`
(shared with the conformance runner's ``--command-config``): ``sasl.jaas.config``
has JAAS syntax, ``<LoginModule class> <flag> key="value" ... ;``, with
``username`` and ``password`` of ``...plain.PlainLoginModule`` for PLAIN and
``...scram.ScramLoginModule`` for SCRAM.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from lethe_formats.security.client_settings import (
    SECURITY_PROTOCOLS,
    ClientSecurityError,
    client_security,
)
from lethe_formats.security.sasl_client import SaslCredentials

__all__ = [
    "SECURITY_PROTOCOLS",
    "ClientConfig",
    "ClientConfigError",
    "SaslCredentials",
    "client_config",
    "parse_bootstrap_servers",
]

_INT_DEFAULTS = {
    "request.timeout.ms": 30_000,
    "default.api.timeout.ms": 60_000,
    "retry.backoff.ms": 100,
    "retry.backoff.max.ms": 1_000,
    "socket.connection.setup.timeout.ms": 10_000,
}


class ClientConfigError(ValueError):
    """A setting the client cannot use (Kafka's ``ConfigException``)."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """What the client needs to know; see the module docstring for each key."""

    bootstrap_servers: tuple[tuple[str, int], ...]
    client_id: str = ""
    security_protocol: str = "PLAINTEXT"
    sasl: SaslCredentials | None = None
    tls: ssl.SSLContext | None = None
    request_timeout_ms: int = 30_000
    default_api_timeout_ms: int = 60_000
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1_000
    connect_timeout_ms: int = 10_000


def parse_bootstrap_servers(value: str) -> tuple[tuple[str, int], ...]:
    """``host:port[,host:port...]`` (``[v6addr]:port`` too) as Kafka's ClientUtils reads it."""
    servers = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        match = re.fullmatch(r"\[?([^\[\]]*?)\]?:(\d+)", entry)
        if match is None or not match.group(1) or int(match.group(2)) > 65535:
            raise ClientConfigError(f"Invalid url in bootstrap.servers: {entry}")
        servers.append((match.group(1), int(match.group(2))))
    if not servers:
        raise ClientConfigError("No resolvable bootstrap urls given in bootstrap.servers")
    return tuple(servers)


def _int_setting(properties: Mapping[str, str], key: str) -> int:
    raw = properties.get(key)
    if raw is None:
        return _INT_DEFAULTS[key]
    try:
        value = int(raw.strip())
    except ValueError:
        raise ClientConfigError(
            f"Invalid value {raw} for configuration {key}: Not a number of type INT"
        ) from None
    if not 0 <= value <= 2**31 - 1:
        raise ClientConfigError(f"Invalid value {raw} for configuration {key}: out of range")
    return value


def client_config(properties: Mapping[str, str], bootstrap_servers: str) -> ClientConfig:
    """A :class:`ClientConfig` from properties (the file's keys) and the bootstrap list."""
    try:
        security = client_security(properties)
    except ClientSecurityError as error:
        raise ClientConfigError(str(error)) from None
    return ClientConfig(
        bootstrap_servers=parse_bootstrap_servers(bootstrap_servers),
        client_id=properties.get("client.id", ""),
        security_protocol=security.protocol,
        sasl=security.sasl,
        tls=security.tls,
        request_timeout_ms=_int_setting(properties, "request.timeout.ms"),
        default_api_timeout_ms=_int_setting(properties, "default.api.timeout.ms"),
        retry_backoff_ms=_int_setting(properties, "retry.backoff.ms"),
        retry_backoff_max_ms=_int_setting(properties, "retry.backoff.max.ms"),
        connect_timeout_ms=_int_setting(properties, "socket.connection.setup.timeout.ms"),
    )
