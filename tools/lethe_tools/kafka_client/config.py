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
security.protocol              PLAIN.. PLAINTEXT; SASL_PLAINTEXT (PLAIN) parsed
sasl.mechanism                 GSSAPI  only PLAIN is accepted
sasl.jaas.config               --      PlainLoginModule username / password
request.timeout.ms             30000   one request's wait for its response
default.api.timeout.ms         60000   a whole admin call, retries included
retry.backoff.ms               100     first pause between retries
retry.backoff.max.ms           1000    longest pause (exponential growth, x2)
socket.connection.setup...ms   10000   TCP connect timeout
============================== ======= ==========================================

``sasl.jaas.config`` has JAAS syntax: ``<LoginModule class> <flag> key="value"
... ;``. Only ``org.apache.kafka.common.security.plain.PlainLoginModule`` with
``username`` and ``password`` is meaningful for PLAIN.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "PLAIN_LOGIN_MODULE",
    "SECURITY_PROTOCOLS",
    "ClientConfig",
    "ClientConfigError",
    "PlainCredentials",
    "client_config",
    "parse_bootstrap_servers",
    "parse_plain_jaas",
]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SUPPORTED_PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT")
_JAAS_FLAGS = ("required", "requisite", "sufficient", "optional")
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
class PlainCredentials:
    """SASL/PLAIN identity from ``sasl.jaas.config``."""

    username: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """What the client needs to know; see the module docstring for each key."""

    bootstrap_servers: tuple[tuple[str, int], ...]
    client_id: str = ""
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "GSSAPI"
    plain: PlainCredentials | None = None
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


def _security_protocol(properties: Mapping[str, str]) -> str:
    value = properties.get("security.protocol", "PLAINTEXT").strip()
    if value.upper() not in SECURITY_PROTOCOLS:
        raise ClientConfigError(
            f"Invalid value {value} for configuration security.protocol: "
            f"String must be one of: {', '.join(SECURITY_PROTOCOLS)}"
        )
    value = value.upper()
    if value not in _SUPPORTED_PROTOCOLS:
        raise ClientConfigError(
            f"security.protocol={value} is not supported by lethe's client "
            f"(TLS is not implemented); use {' or '.join(_SUPPORTED_PROTOCOLS)}"
        )
    return value


def _sasl(properties: Mapping[str, str], protocol: str) -> tuple[str, PlainCredentials | None]:
    mechanism = properties.get("sasl.mechanism", "GSSAPI").strip()
    if not protocol.startswith("SASL_"):
        return mechanism, None
    if mechanism != "PLAIN":
        raise ClientConfigError(
            f"sasl.mechanism={mechanism} is not supported by lethe's client (only PLAIN)"
        )
    jaas = properties.get("sasl.jaas.config")
    if jaas is None:
        raise ClientConfigError(
            "security.protocol=SASL_PLAINTEXT with sasl.mechanism=PLAIN needs sasl.jaas.config"
        )
    return mechanism, parse_plain_jaas(jaas)


_JAAS_TOKEN = re.compile(
    r'\s*(?:(?P<key>[^\s=;"]+)\s*=\s*(?:"(?P<quoted>[^"]*)"|(?P<bare>[^\s;"]+))|(?P<end>;))'
)


def parse_plain_jaas(text: str) -> PlainCredentials:
    """Username and password of a one-entry ``PlainLoginModule`` JAAS configuration."""
    parts = text.strip().split(None, 2)
    if len(parts) < 2:
        raise ClientConfigError(f"sasl.jaas.config: expected '<LoginModule> <flag> ...;': {text!r}")
    module, flag = parts[0], parts[1].rstrip(";")
    if module != PLAIN_LOGIN_MODULE:
        raise ClientConfigError(
            f"sasl.jaas.config: login module {module} does not go with sasl.mechanism=PLAIN "
            f"(expected {PLAIN_LOGIN_MODULE})"
        )
    if flag.lower() not in _JAAS_FLAGS:
        raise ClientConfigError(f"sasl.jaas.config: invalid control flag {flag!r}")
    options = _jaas_options(parts[2] if len(parts) > 2 else (";" if parts[1].endswith(";") else ""))
    missing = [key for key in ("username", "password") if key not in options]
    if missing:
        raise ClientConfigError(f"sasl.jaas.config: PlainLoginModule needs {' and '.join(missing)}")
    return PlainCredentials(options["username"], options["password"])


def _jaas_options(rest: str) -> dict[str, str]:
    options: dict[str, str] = {}
    position = 0
    while position < len(rest.rstrip()):
        match = _JAAS_TOKEN.match(rest, position)
        if match is None:
            raise ClientConfigError(f"sasl.jaas.config: cannot parse {rest[position:]!r}")
        position = match.end()
        if match.group("end"):
            if rest[position:].strip():
                raise ClientConfigError("sasl.jaas.config: only one login module is allowed")
            return options
        value = match.group("quoted")
        options[match.group("key")] = value if value is not None else match.group("bare")
    raise ClientConfigError("sasl.jaas.config: the entry must end with ';'")


def client_config(properties: Mapping[str, str], bootstrap_servers: str) -> ClientConfig:
    """A :class:`ClientConfig` from properties (the file's keys) and the bootstrap list."""
    protocol = _security_protocol(properties)
    mechanism, plain = _sasl(properties, protocol)
    return ClientConfig(
        bootstrap_servers=parse_bootstrap_servers(bootstrap_servers),
        client_id=properties.get("client.id", ""),
        security_protocol=protocol,
        sasl_mechanism=mechanism,
        plain=plain,
        request_timeout_ms=_int_setting(properties, "request.timeout.ms"),
        default_api_timeout_ms=_int_setting(properties, "default.api.timeout.ms"),
        retry_backoff_ms=_int_setting(properties, "retry.backoff.ms"),
        retry_backoff_max_ms=_int_setting(properties, "retry.backoff.max.ms"),
        connect_timeout_ms=_int_setting(properties, "socket.connection.setup.timeout.ms"),
    )
