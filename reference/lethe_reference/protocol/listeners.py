"""Listener security settings: which listener speaks what, SASL users, TLS settings.

Theory of operation
-------------------
A Kafka broker serves several named listeners (``listeners=PLAINTEXT://:9092,
SASL_PLAINTEXT://:9093``); ``listener.security.protocol.map`` gives each name
its security protocol (by default a listener named after a protocol speaks
it). The reference broker serves PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL;
the server (:mod:`lethe_reference.server.app`) binds one socket per listener
and hands each connection the :class:`ListenerSecurity` of its listener.

TLS (SSL, SASL_SSL): every ``ssl.*`` setting is read listener-prefixed first
(``listener.name.<name lower-case>.ssl.keystore.location``), then broker-wide,
and kept in :attr:`ListenerSecurity.ssl_settings`; the server's edge turns
them into a TLS context (:mod:`lethe_formats.security.tls`: keystore types
PEM and PKCS12, truststores, ``ssl.client.auth``, enabled protocols) before
anything is initialised, so a bad keystore or password stops the start. The
protocol layer stays sans-IO: it sees the decrypted bytes and the
connection's principal (the client certificate's ``User:<RFC 2253 DN>`` on
SSL, the SASL user on SASL_SSL).

For a SASL listener the settings are read as Kafka reads them, listener-prefixed
first (``listener.name.<name lower-case>.<setting>``), then the broker-wide
name::

    sasl.enabled.mechanisms         the mechanisms offered: PLAIN, SCRAM-SHA-256,
                                    SCRAM-SHA-512 (Kafka's default, GSSAPI, is not
                                    implemented here)
    <name>.plain.sasl.jaas.config   Kafka's PlainLoginModule line; its options
                                    user_<name>="<password>" are the accounts, e.g.
        org.apache.kafka.common.security.plain.PlainLoginModule required
            username="admin" password="admin-secret"
            user_admin="admin-secret" user_alice="alice-secret";

SCRAM: Kafka keeps SCRAM credentials in its metadata log, set with
AlterUserScramCredentials (``kafka-configs.sh --entity-type users --alter
--add-config 'SCRAM-SHA-256=[...]'``); the reference broker keeps those in its
log dir and, besides, reads fixed accounts from
``<name>.scram-sha-256.sasl.jaas.config`` (or ``-512``) as
``user_<name>="<password>"`` options, a lethe-specific reading of that line
(:mod:`.scram`). A line without users (Kafka's ``ScramLoginModule required;``)
is valid: every user then comes from AlterUserScramCredentials.

Another mechanism, or an enabled one without its JAAS line, is a config error
(:class:`ListenerConfigError`): the broker refuses to start, as Kafka refuses
when a login module is missing.

:func:`configured_listeners` reads Kafka's ``listeners`` setting
(``NAME://host:port`` entries, comma-separated, each name's protocol from
``listener.security.protocol.map``) as Kafka does: every entry is served, the
first one is the broker's main listener (``lethe broker --listen`` only fills in
when the setting is absent), names in ``controller.listener.names`` are left out
(a single reference node has no controller quorum to serve), and a name given
twice is a config error. :func:`advertised_listeners` reads
``advertised.listeners`` the same way: the address Metadata hands out per
listener name (a listener not named there advertises its own address).
:func:`secured_listeners` is the SASL subset (SASL_PLAINTEXT and SASL_SSL).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lethe_reference.protocol.scram import MECHANISMS, ScramCredential, scram_credential

__all__ = [
    "PLAIN",
    "PLAINTEXT",
    "SASL_PLAINTEXT",
    "SASL_SSL",
    "SSL",
    "ListenerConfigError",
    "ListenerSecurity",
    "advertised_listeners",
    "configured_listeners",
    "listener_security",
    "parse_jaas_users",
    "secured_listeners",
]

PLAINTEXT = "PLAINTEXT"
SASL_PLAINTEXT = "SASL_PLAINTEXT"
SSL = "SSL"
SASL_SSL = "SASL_SSL"
PROTOCOLS = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
PLAIN = "PLAIN"
IMPLEMENTED_MECHANISMS = frozenset({PLAIN, *MECHANISMS})
_OPTION = re.compile(r'([A-Za-z_][\w.-]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


class ListenerConfigError(ValueError):
    """A SASL listener the reference broker cannot serve as configured."""


@dataclass(frozen=True, slots=True)
class ListenerSecurity:
    """One listener's name, protocol, (SASL) mechanisms and accounts, (TLS) settings."""

    name: str = PLAINTEXT
    protocol: str = PLAINTEXT
    mechanisms: tuple[str, ...] = ()
    plain_users: Mapping[str, str] = field(default_factory=dict)
    #: SCRAM mechanism -> user -> credential
    scram_users: Mapping[str, Mapping[str, ScramCredential]] = field(default_factory=dict)
    #: the resolved ``ssl.*`` settings of a TLS listener (listener-prefixed ones first)
    ssl_settings: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def sasl(self) -> bool:
        return self.protocol in (SASL_PLAINTEXT, SASL_SSL)

    @property
    def tls(self) -> bool:
        return self.protocol in (SSL, SASL_SSL)


def parse_jaas_users(jaas: str) -> dict[str, str]:
    """The ``user_<name>="<password>"`` options of a PlainLoginModule line."""
    users = {}
    for key, value in _OPTION.findall(jaas):
        if key.startswith("user_") and len(key) > len("user_"):
            users[key[len("user_") :]] = re.sub(r"\\(.)", r"\1", value)
    return users


def _value(layers: Sequence[Mapping[str, str]], name: str) -> str | None:
    for layer in layers:
        if name in layer:
            return layer[name]
    return None


def listener_security(
    layers: Sequence[Mapping[str, str]], name: str, protocol: str
) -> ListenerSecurity:
    """The settings of listener ``name`` from raw config layers (highest priority first)."""
    if protocol not in PROTOCOLS:
        raise ListenerConfigError(f"listener {name}: security protocol {protocol} is not served")
    tls = _ssl_settings(layers, name) if protocol in (SSL, SASL_SSL) else {}
    if protocol in (PLAINTEXT, SSL):
        return ListenerSecurity(name, protocol, ssl_settings=tls)
    prefix = f"listener.name.{name.lower()}."
    text = _value(layers, prefix + "sasl.enabled.mechanisms")
    if text is None:
        text = _value(layers, "sasl.enabled.mechanisms") or "GSSAPI"
    mechanisms = tuple(m.strip() for m in text.split(",") if m.strip())
    unknown = [m for m in mechanisms if m not in IMPLEMENTED_MECHANISMS]
    if unknown or not mechanisms:
        raise ListenerConfigError(
            f"listener {name}: SASL mechanisms {unknown or mechanisms} are not implemented "
            f"(set {prefix}sasl.enabled.mechanisms=PLAIN)"
        )
    accounts = {}
    for mechanism in mechanisms:
        key = f"{prefix}{mechanism.lower()}.sasl.jaas.config"
        jaas = _value(layers, key)
        if jaas is None:
            raise ListenerConfigError(f"listener {name}: {key} is not set")
        accounts[mechanism] = parse_jaas_users(jaas)
    scram = {
        m: {user: scram_credential(pw, MECHANISMS[m]) for user, pw in users.items()}
        for m, users in accounts.items()
        if m in MECHANISMS
    }
    return ListenerSecurity(name, protocol, mechanisms, accounts.get(PLAIN, {}), scram, tls)


def _ssl_settings(layers: Sequence[Mapping[str, str]], name: str) -> dict[str, str]:
    """Every ``ssl.*`` setting of listener ``name``: for each key, the listener-prefixed
    value if any layer has one, else the broker-wide one (Kafka's lookup order)."""
    prefix = f"listener.name.{name.lower()}."
    keys = {
        key[len(prefix) :] if key.startswith(prefix) else key for layer in layers for key in layer
    }
    out = {}
    for key in sorted(k for k in keys if k.startswith("ssl.")):
        value = _value(layers, prefix + key)
        out[key] = value if value is not None else _value(layers, key)
    return {key: value for key, value in out.items() if value is not None}


def _protocol_map(layers: Sequence[Mapping[str, str]]) -> dict[str, str]:
    text = _value(layers, "listener.security.protocol.map") or ""
    pairs = (entry.split(":", 1) for entry in text.split(",") if ":" in entry)
    mapped = {name.strip().upper(): proto.strip().upper() for name, proto in pairs}
    return {protocol: protocol for protocol in PROTOCOLS} | mapped


def _endpoints(text: str) -> list[tuple[str, str, int]]:
    """``NAME://host:port,...`` -> (upper-case name, host, port); ListenerConfigError
    for an entry that is not of that form or a name given twice."""
    out: list[tuple[str, str, int]] = []
    for entry in text.split(","):
        name, sep, address = entry.strip().partition("://")
        host, colon, port = address.rpartition(":")
        if not sep or not name or not colon or not port.isdigit():
            if entry.strip():
                raise ListenerConfigError(f"listener {entry.strip()!r} is not NAME://HOST:PORT")
            continue
        if any(name.upper() == seen for seen, _, _ in out):
            raise ListenerConfigError(f"Each listener must have a different name: {text}")
        out.append((name.upper(), host.strip("[]"), int(port)))
    return out


def configured_listeners(
    layers: Sequence[Mapping[str, str]],
) -> list[tuple[ListenerSecurity, str, int]]:
    """(settings, host, port) of every listener in ``listeners``, in order (the first
    is the main one); an empty host binds every interface (``0.0.0.0``)."""
    protocols = _protocol_map(layers)
    controllers = {
        name.strip().upper()
        for name in (_value(layers, "controller.listener.names") or "").split(",")
    }
    out = []
    for name, host, port in _endpoints(_value(layers, "listeners") or ""):
        if name in controllers:
            continue
        security = listener_security(layers, name, protocols.get(name, name))
        out.append((security, host or "0.0.0.0", port))
    return out


def advertised_listeners(layers: Sequence[Mapping[str, str]]) -> dict[str, tuple[str, int]]:
    """``advertised.listeners`` by listener name: the (host, port) clients are told."""
    text = _value(layers, "advertised.listeners") or ""
    return {name: (host, port) for name, host, port in _endpoints(text)}


def secured_listeners(
    layers: Sequence[Mapping[str, str]],
) -> list[tuple[ListenerSecurity, str, int]]:
    """(settings, host, port) of every SASL listener in ``listeners``."""
    return [entry for entry in configured_listeners(layers) if entry[0].sasl]
