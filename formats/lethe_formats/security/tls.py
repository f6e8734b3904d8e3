"""TLS contexts from Kafka's ``ssl.*`` settings, and the principal of a client certificate.

Theory of operation
-------------------
:func:`server_context` and :func:`client_context` turn one side's settings
(already resolved: a broker's listener-prefixed ``listener.name.<l>.ssl.*``
over its ``ssl.*``, a client's properties) into an ``ssl.SSLContext``, with
the stores of :mod:`.keystores`. Python's ``ssl`` (OpenSSL) stands in for
Java's JSSE, so the settings map as far as it allows:

=================================== ===============================================
``ssl.client.auth``                 none / requested / required -> CERT_NONE /
                                    CERT_OPTIONAL / CERT_REQUIRED (server)
``ssl.enabled.protocols``           TLSv1.2,TLSv1.3 (Kafka's default): the lowest and
                                    highest named bound the versions OpenSSL offers (a
                                    range: OpenSSL cannot skip a version in between)
``ssl.protocol``                    TLSv1.3 (default) or TLS: no extra bound;
                                    TLSv1.2, TLSv1.1, TLSv1: the highest version
``ssl.endpoint.identification       https (default): the client checks the broker's
.algorithm``                        host name against its certificate; empty: no check
``ssl.cipher.suites``               Java's suite names; not mapped to OpenSSL's, so a
                                    non-empty value is refused rather than ignored
=================================== ===============================================

A keystore's chain and key are loaded through a private temporary directory
(Python's ``ssl`` reads them only from files) that is removed at once.
Without a truststore the system's default CAs are trusted (Java's default
truststore is the JVM's ``cacerts``).

Principal. Kafka's ``DefaultKafkaPrincipalBuilder`` names an SSL connection
``User:`` + the client certificate's subject as ``X500Principal.getName()``
prints it (RFC 2253: most specific RDN first, keywords CN, C, L, ST, O, OU,
STREET, DC, UID, any other attribute as ``<OID>=#<hex of its DER value>``),
passed through ``ssl.principal.mapping.rules`` (:mod:`.principal_mapping`:
``DEFAULT``, the DN unchanged, and ``RULE:pattern/replacement/[LU]``). A
connection without a verified client certificate is ``User:ANONYMOUS``.
:func:`certificate_principal` computes the name from the DER certificate.
"""

from __future__ import annotations

import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path

from cryptography import x509

from lethe_formats.security.keystores import (
    KeyMaterial,
    SslConfigError,
    load_keystore,
    load_truststore,
)
from lethe_formats.security.principal_mapping import principal_mapper

__all__ = [
    "ANONYMOUS",
    "SslConfigError",
    "certificate_principal",
    "check_principal_mapping",
    "client_context",
    "server_context",
]

ANONYMOUS = "User:ANONYMOUS"
_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}
#: RFC 2253's keywords, as Java's X500Principal.getName() prints them
_KEYWORDS = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.9": "STREET",
    "0.9.2342.19200300.100.1.25": "DC",
    "0.9.2342.19200300.100.1.1": "UID",
}


def server_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """A broker listener's context: keystore required, client auth as configured."""
    keystore = load_keystore(settings)
    if keystore is None:
        raise SslConfigError(
            "an SSL listener needs a keystore (ssl.keystore.location or ssl.keystore.key)"
        )
    auth = settings.get("ssl.client.auth", "none").strip().lower() or "none"
    if auth not in _CLIENT_AUTH:
        raise SslConfigError(
            f"Invalid value {auth} for configuration ssl.client.auth: "
            "String must be one of: required, requested, none"
        )
    check_principal_mapping(settings)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _common(context, settings, keystore)
    context.verify_mode = _CLIENT_AUTH[auth]
    return context


def client_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """A client's context: truststore (or the system CAs), optional keystore (mutual TLS)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _common(context, settings, load_keystore(settings))
    algorithm = settings.get("ssl.endpoint.identification.algorithm", "https").strip()
    context.check_hostname = algorithm.lower() == "https"
    if algorithm and algorithm.lower() != "https":
        raise SslConfigError(
            f"ssl.endpoint.identification.algorithm={algorithm} is not supported (https or empty)"
        )
    return context


def _common(context: ssl.SSLContext, settings: Mapping[str, str], keys: KeyMaterial | None) -> None:
    low, high = _protocols(settings)
    context.minimum_version, context.maximum_version = low, high
    ciphers = settings.get("ssl.cipher.suites", "").strip()
    if ciphers:
        raise SslConfigError(
            f"ssl.cipher.suites={ciphers} is not supported (Java suite names are not mapped "
            "to OpenSSL's); leave it unset for the defaults"
        )
    trusted = load_truststore(settings)
    if trusted is not None:
        context.load_verify_locations(cadata=trusted.decode("ascii"))
    else:
        context.load_default_certs()
    if keys is not None:
        _load_chain(context, keys)


def _protocols(settings: Mapping[str, str]) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    text = settings.get("ssl.enabled.protocols", "TLSv1.2,TLSv1.3")
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in _VERSIONS]
    if unknown or not names:
        raise SslConfigError(
            f"ssl.enabled.protocols={text}: {unknown or 'none'} not supported "
            f"(one or more of {', '.join(_VERSIONS)})"
        )
    versions = sorted(_VERSIONS[name] for name in names)
    protocol = settings.get("ssl.protocol", "TLSv1.3").strip()
    if protocol not in ("TLS", *_VERSIONS):
        raise SslConfigError(
            f"ssl.protocol={protocol} is not supported (TLS, {', '.join(_VERSIONS)})"
        )
    high = min(versions[-1], _VERSIONS.get(protocol, ssl.TLSVersion.TLSv1_3))
    if high < versions[0]:
        raise SslConfigError(f"ssl.protocol={protocol} allows none of ssl.enabled.protocols={text}")
    return versions[0], high


def _load_chain(context: ssl.SSLContext, keys: KeyMaterial) -> None:
    with tempfile.TemporaryDirectory(prefix="lethe-tls-") as scratch:
        chain, key = Path(scratch, "chain.pem"), Path(scratch, "key.pem")
        key.touch(mode=0o600)
        key.write_bytes(keys.key_pem)
        chain.write_bytes(keys.chain_pem)
        try:
            context.load_cert_chain(chain, key)
        except ssl.SSLError as error:
            raise SslConfigError(
                f"the keystore's key does not match its certificate: {error}"
            ) from None


def check_principal_mapping(settings: Mapping[str, str]) -> None:
    """``ssl.principal.mapping.rules`` must parse (:mod:`.principal_mapping`)."""
    rules = settings.get("ssl.principal.mapping.rules", "DEFAULT")
    try:
        principal_mapper(rules)
    except ValueError as error:
        raise SslConfigError(f"ssl.principal.mapping.rules={rules}: {error}") from None


def certificate_principal(der: bytes | None, rules: str = "DEFAULT") -> str:
    """``User:`` + the RFC 2253 subject of a DER certificate, mapped by ``rules``
    (``ssl.principal.mapping.rules``); ANONYMOUS without a certificate.
    NoMatchingRuleError if no rule maps the subject."""
    if not der:
        return ANONYMOUS
    return "User:" + principal_mapper(rules).name(certificate_dn(der))


def certificate_dn(der: bytes) -> str:
    """The certificate's subject as Java's ``X500Principal.getName()`` prints it."""
    subject = x509.load_der_x509_certificate(der).subject
    rdns = [
        "+".join(_attribute(attribute) for attribute in rdn) for rdn in reversed(list(subject.rdns))
    ]
    return ",".join(rdns)


def _attribute(attribute: x509.NameAttribute[str | bytes]) -> str:
    oid = attribute.oid.dotted_string
    value = attribute.value
    keyword = _KEYWORDS.get(oid)
    if keyword is not None and isinstance(value, str):
        return f"{keyword}={_escape(value)}"
    return f"{oid}=#{_der_value(attribute).hex()}"


def _escape(value: str) -> str:
    out = "".join("\\" + ch if ch in ',+="\\<>;' else ch for ch in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def _der_value(attribute: x509.NameAttribute[str | bytes]) -> bytes:
    """The attribute value's DER (tag, length, content), as Java's hex form shows it."""
    tag = int(attribute._type.value)
    value = attribute.value
    if isinstance(value, bytes):
        content = value
    elif tag == 30:  # BMPString
        content = value.encode("utf-16-be")
    elif tag == 28:  # UniversalString
        content = value.encode("utf-32-be")
    else:
        content = value.encode("utf-8")
    size = len(content)
    length = bytes([size]) if size < 128 else _long_length(size)
    return bytes([tag]) + length + content


def _long_length(size: int) -> bytes:
    raw = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw
