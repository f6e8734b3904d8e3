"""The runner's security options, shared by ``lethe conformance run`` and the pytest plugin.

Theory of operation
-------------------
A target behind TLS or SASL is reached either with explicit options (PEM files
as Python's ``ssl`` takes them) or with a Kafka client properties file, as
Kafka's own tools take ``--command-config``::

    --security-protocol SSL|SASL_SSL|SASL_PLAINTEXT   (default: SASL_PLAINTEXT when a
                                                       SASL user is given, else PLAINTEXT)
    --ssl-cafile / --ssl-certfile / --ssl-keyfile / --ssl-key-password
    --sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 --sasl-username --sasl-password
    --command-config FILE       security.protocol, ssl.truststore.*, ssl.keystore.*,
                                ssl.key.password, sasl.mechanism, sasl.jaas.config

The two ways do not mix (one source of truth per run). The second principal
(``--user-sasl-user``, capability ``principals``) authenticates with the same
mechanism over the same TLS settings. :func:`run_security` returns what the
bootstrap target needs; a setting that cannot be used raises
:class:`~lethe_formats.security.client_settings.ClientSecurityError` naming it.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from lethe_formats.security.client_settings import (
    SECURITY_PROTOCOLS,
    ClientSecurity,
    ClientSecurityError,
    security_from_file,
    security_from_options,
)
from lethe_formats.security.sasl_client import CLIENT_MECHANISMS, SaslCredentials

__all__ = [
    "OPTIONS",
    "ClientSecurityError",
    "RunSecurity",
    "SecurityOptions",
    "add_security_options",
    "read_security_options",
    "run_security",
]


@dataclass(frozen=True, slots=True)
class SecurityOptions:
    """The options as given (None: not given)."""

    command_config: str | None = None
    protocol: str | None = None
    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    key_password: str | None = None
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    user_username: str | None = None
    user_password: str | None = None


@dataclass(frozen=True, slots=True)
class Option:
    """One command-line option: its names (without ``--``), the field it fills, how."""

    names: tuple[str, ...]
    field: str
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None


#: the options, once, for ``lethe conformance run`` and (``lethe-`` in front) the plugin
OPTIONS = (
    Option(
        ("security-protocol",),
        "protocol",
        "default SASL_PLAINTEXT with a SASL user, else PLAINTEXT",
        choices=SECURITY_PROTOCOLS,
    ),
    Option(("ssl-cafile",), "cafile", "CA certificates to trust (PEM)", "PEM"),
    Option(("ssl-certfile",), "certfile", "client certificate for mutual TLS (PEM)", "PEM"),
    Option(("ssl-keyfile",), "keyfile", "the client certificate's key (PEM)", "PEM"),
    Option(("ssl-key-password",), "key_password", "the key file's password", "P"),
    Option(("sasl-mechanism",), "mechanism", "default PLAIN", choices=CLIENT_MECHANISMS),
    Option(("sasl-username", "sasl-user"), "username", "SASL user name", "U"),
    Option(("sasl-password",), "password", "SASL password", "P"),
    Option(
        ("user-sasl-username", "user-sasl-user"),
        "user_username",
        "a second SASL principal with no ACLs (capability principals; the first "
        "user must be allowed everything)",
        "U",
    ),
    Option(("user-sasl-password",), "user_password", "the second principal's password", "P"),
    Option(
        ("command-config",),
        "command_config",
        "Kafka client properties (security.protocol, ssl.truststore.*, ssl.keystore.*, "
        "ssl.key.password, sasl.mechanism, sasl.jaas.config) instead of the options above",
        "FILE",
    ),
)


def add_security_options(add: Callable[..., Any], prefix: str = "") -> None:
    """Declare :data:`OPTIONS` with ``add`` (argparse's ``add_argument`` or pytest's
    ``addoption``), each name as ``--<prefix><name>``; the value lands in
    ``<prefix as identifier><field>``."""
    for option in OPTIONS:
        add(
            *(f"--{prefix}{name}" for name in option.names),
            dest=_dest(prefix, option),
            metavar=option.metavar,
            choices=option.choices,
            help=option.help,
        )


def read_security_options(get: Callable[[str], Any], prefix: str = "") -> SecurityOptions:
    """The :class:`SecurityOptions` declared by :func:`add_security_options`, read with
    ``get(dest)`` (``getattr`` on argparse's namespace, ``config.getoption``)."""
    by_field = {option.field: get(_dest(prefix, option)) for option in OPTIONS}
    return SecurityOptions(**{f.name: by_field.get(f.name) for f in fields(SecurityOptions)})


def _dest(prefix: str, option: Option) -> str:
    return (prefix + option.field).replace("-", "_")


@dataclass(frozen=True, slots=True)
class RunSecurity:
    """What the target is given: credentials of both principals and the TLS context."""

    sasl: SaslCredentials | None = None
    user: SaslCredentials | None = None
    tls: ssl.SSLContext | None = None

    @property
    def any(self) -> bool:
        return self.sasl is not None or self.user is not None or self.tls is not None


def run_security(options: SecurityOptions) -> RunSecurity:
    """The run's security from its options (module docstring)."""
    if (options.user_username is None) != (options.user_password is None):
        raise ClientSecurityError("the second principal's user name and password go together")
    explicit = (
        options.protocol,
        options.cafile,
        options.certfile,
        options.keyfile,
        options.key_password,
        options.mechanism,
        options.username,
        options.password,
    )
    security: ClientSecurity
    if options.command_config is not None:
        if any(value is not None for value in explicit):
            raise ClientSecurityError(
                "--command-config gives the security settings: no --security-protocol, "
                "--ssl-* or --sasl-* options with it"
            )
        security = security_from_file(options.command_config)
    else:
        security = security_from_options(
            options.protocol,
            cafile=options.cafile,
            certfile=options.certfile,
            keyfile=options.keyfile,
            key_password=options.key_password,
            mechanism=options.mechanism,
            username=options.username,
            password=options.password,
        )
    user = None
    if options.user_username is not None and options.user_password is not None:
        if security.sasl is None:
            raise ClientSecurityError("a second principal needs the first one's SASL settings")
        user = SaslCredentials(
            options.user_username, options.user_password, security.sasl.mechanism
        )
    return RunSecurity(security.sasl, user, security.tls)
