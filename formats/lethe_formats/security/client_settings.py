"""A client's security from Kafka's client properties or from command-line options.

Theory of operation
-------------------
Kafka's clients and tools (``--command-config FILE``) take their security from
properties; lethe's clients read the same names, so one file serves both:

=============================== ==========================================================
``security.protocol``           PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
``ssl.truststore.*``            the CAs trusted (:mod:`.keystores`: PEM or PKCS12; none:
                                the system's CAs)
``ssl.keystore.*``,             a client certificate for mutual TLS (PEM file or inline,
``ssl.key.password``            or PKCS12)
``ssl.endpoint.identification   https (default): the broker's certificate must name the
.algorithm``                    host connected to; empty: not checked
``sasl.mechanism``              PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Kafka's default,
                                GSSAPI, is not implemented: an error naming it)
``sasl.jaas.config``            ``<LoginModule> <flag> username="..." password="...";``
                                with ``...plain.PlainLoginModule`` for PLAIN and
                                ``...scram.ScramLoginModule`` for SCRAM
=============================== ==========================================================

:func:`security_from_options` builds the same from the options of ``lethe
conformance run`` and the pytest plugin (``--ssl-cafile``, ``--ssl-certfile``,
``--ssl-keyfile``, ``--ssl-key-password``, ``--sasl-mechanism``, ...), which
name PEM files as Python's ``ssl`` takes them.

A setting that cannot be honoured is a :class:`ClientSecurityError` naming
it, never dropped silently.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lethe_formats.security.keystores import SslConfigError
from lethe_formats.security.sasl_client import CLIENT_MECHANISMS, PLAIN, SaslCredentials
from lethe_formats.security.tls import client_context
from lethe_formats.storage.java_properties import JavaPropertiesError, parse_java_properties

__all__ = [
    "LOGIN_MODULES",
    "SECURITY_PROTOCOLS",
    "ClientSecurity",
    "ClientSecurityError",
    "client_security",
    "parse_jaas_credentials",
    "security_from_file",
    "security_from_options",
]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
#: mechanism -> the login module its sasl.jaas.config names
LOGIN_MODULES = {
    PLAIN: PLAIN_LOGIN_MODULE,
    "SCRAM-SHA-256": SCRAM_LOGIN_MODULE,
    "SCRAM-SHA-512": SCRAM_LOGIN_MODULE,
}
_JAAS_FLAGS = ("required", "requisite", "sufficient", "optional")
_JAAS_TOKEN = re.compile(
    r'\s*(?:(?P<key>[^\s=;"]+)\s*=\s*(?:"(?P<quoted>[^"]*)"|(?P<bare>[^\s;"]+))|(?P<end>;))'
)


class ClientSecurityError(ValueError):
    """A security setting the client cannot use (Kafka's ``ConfigException``)."""


@dataclass(frozen=True, slots=True)
class ClientSecurity:
    """How to reach a listener: its protocol, SASL identity, TLS context."""

    protocol: str = "PLAINTEXT"
    sasl: SaslCredentials | None = None
    tls: ssl.SSLContext | None = None


def _protocol(value: str) -> str:
    if value.strip().upper() not in SECURITY_PROTOCOLS:
        raise ClientSecurityError(
            f"Invalid value {value.strip()} for configuration security.protocol: "
            f"String must be one of: {', '.join(SECURITY_PROTOCOLS)}"
        )
    return value.strip().upper()


def _mechanism(value: str) -> str:
    mechanism = value.strip()
    if mechanism not in CLIENT_MECHANISMS:
        raise ClientSecurityError(
            f"sasl.mechanism={mechanism} is not supported by lethe's client "
            f"({', '.join(CLIENT_MECHANISMS)})"
        )
    return mechanism


def client_security(properties: Mapping[str, str]) -> ClientSecurity:
    """The security Kafka's client properties describe (module docstring)."""
    protocol = _protocol(properties.get("security.protocol", "PLAINTEXT"))
    sasl = None
    if protocol.startswith("SASL_"):
        mechanism = _mechanism(properties.get("sasl.mechanism", "GSSAPI"))
        jaas = properties.get("sasl.jaas.config")
        if jaas is None:
            raise ClientSecurityError(
                f"security.protocol={protocol} with sasl.mechanism={mechanism} "
                "needs sasl.jaas.config"
            )
        sasl = parse_jaas_credentials(jaas, mechanism)
    tls = None
    if protocol.endswith("SSL"):
        settings = {key: value for key, value in properties.items() if key.startswith("ssl.")}
        try:
            tls = client_context(settings)
        except SslConfigError as error:
            raise ClientSecurityError(str(error)) from None
    return ClientSecurity(protocol, sasl, tls)


def security_from_options(
    protocol: str | None = None,
    *,
    cafile: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    key_password: str | None = None,
    mechanism: str | None = None,
    username: str | None = None,
    password: str | None = None,
) -> ClientSecurity:
    """The security of command-line options (PEM files); the protocol defaults to
    SASL_PLAINTEXT when credentials are given, PLAINTEXT otherwise."""
    if (username is None) != (password is None):
        raise ClientSecurityError("a SASL user name and password go together")
    chosen = _protocol(protocol or ("SASL_PLAINTEXT" if username else "PLAINTEXT"))
    if chosen.startswith("SASL_") and username is None:
        raise ClientSecurityError(f"security protocol {chosen} needs a SASL user name and password")
    if username is not None and not chosen.startswith("SASL_"):
        raise ClientSecurityError(f"security protocol {chosen} takes no SASL user name")
    if mechanism is not None and username is None:
        raise ClientSecurityError("a SASL mechanism needs a SASL user name and password")
    tls_given = any(v is not None for v in (cafile, certfile, keyfile, key_password))
    if tls_given and not chosen.endswith("SSL"):
        raise ClientSecurityError(f"TLS files need security protocol SSL or SASL_SSL, not {chosen}")
    sasl = None
    if username is not None and password is not None:
        sasl = SaslCredentials(username, password, _mechanism(mechanism or PLAIN))
    tls = None
    if chosen.endswith("SSL"):
        tls = _pem_context(cafile, certfile, keyfile, key_password)
    return ClientSecurity(chosen, sasl, tls)


def _pem_context(
    cafile: str | None, certfile: str | None, keyfile: str | None, key_password: str | None
) -> ssl.SSLContext:
    settings = {} if cafile is None else {"ssl.truststore.type": "PEM"}
    if cafile is not None:
        settings["ssl.truststore.location"] = cafile
    try:
        context = client_context(settings)
    except SslConfigError as error:
        raise ClientSecurityError(str(error)) from None
    if (keyfile is not None or key_password is not None) and certfile is None:
        raise ClientSecurityError("a client key file or key password needs its certificate file")
    if certfile is not None:
        try:
            context.load_cert_chain(certfile, keyfile, password=key_password)
        except (OSError, ssl.SSLError) as error:
            raise ClientSecurityError(
                f"cannot load the client certificate {certfile} / key {keyfile}: {error} "
                "(a wrong or missing key password?)"
            ) from None
    return context


def parse_jaas_credentials(text: str, mechanism: str) -> SaslCredentials:
    """User name and password of a one-entry JAAS line for ``mechanism``'s login module."""
    parts = text.strip().split(None, 2)
    if len(parts) < 2:
        raise ClientSecurityError(
            f"sasl.jaas.config: expected '<LoginModule> <flag> ...;': {text!r}"
        )
    module, flag = parts[0], parts[1].rstrip(";")
    expected = LOGIN_MODULES[mechanism]
    if module != expected:
        raise ClientSecurityError(
            f"sasl.jaas.config: login module {module} does not go with "
            f"sasl.mechanism={mechanism} (expected {expected})"
        )
    if flag.lower() not in _JAAS_FLAGS:
        raise ClientSecurityError(f"sasl.jaas.config: invalid control flag {flag!r}")
    rest = parts[2] if len(parts) > 2 else (";" if parts[1].endswith(";") else "")
    options = _jaas_options(rest)
    missing = [key for key in ("username", "password") if key not in options]
    if missing:
        name = module.rsplit(".", 1)[-1]
        raise ClientSecurityError(f"sasl.jaas.config: {name} needs {' and '.join(missing)}")
    return SaslCredentials(options["username"], options["password"], mechanism)


def _jaas_options(rest: str) -> dict[str, str]:
    options: dict[str, str] = {}
    position = 0
    while position < len(rest.rstrip()):
        match = _JAAS_TOKEN.match(rest, position)
        if match is None:
            raise ClientSecurityError(f"sasl.jaas.config: cannot parse {rest[position:]!r}")
        position = match.end()
        if match.group("end"):
            if rest[position:].strip():
                raise ClientSecurityError("sasl.jaas.config: only one login module is allowed")
            return options
        value = match.group("quoted")
        options[match.group("key")] = value if value is not None else match.group("bare")
    raise ClientSecurityError("sasl.jaas.config: the entry must end with ';'")


def security_from_file(path: str) -> ClientSecurity:
    """:func:`client_security` of a properties file (``--command-config``), read as
    Kafka's tools read it (ISO-8859-1, Java properties syntax)."""
    try:
        text = Path(path).read_bytes().decode("latin-1")
    except OSError as error:
        raise ClientSecurityError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        properties = parse_java_properties(text).as_dict()
    except JavaPropertiesError as error:
        raise ClientSecurityError(f"{path}: {error}") from None
    return client_security(properties)
