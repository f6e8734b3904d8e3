"""Keystores and truststores as Kafka's ``ssl.*`` settings describe them, read into PEM.

Theory of operation
-------------------
Kafka's ``DefaultSslEngineFactory`` takes a keystore (this side's certificate
chain and private key) and a truststore (the certificates it trusts) in one of
three types; lethe reads them into PEM text that Python's ``ssl`` loads:

=========== ============================================ =========================================
type        keystore                                     truststore
=========== ============================================ =========================================
PEM         ``ssl.keystore.location`` (a file holding     ``ssl.truststore.location`` (a file of
            the PKCS#8 key and the chain), or inline      certificates) or inline
            ``ssl.keystore.key`` +                        ``ssl.truststore.certificates``;
            ``ssl.keystore.certificate.chain``; an        a password is an error
            ``ENCRYPTED PRIVATE KEY`` needs
            ``ssl.key.password``; a store password is
            an error
PKCS12      ``ssl.keystore.location`` +                   ``ssl.truststore.location``
            ``ssl.keystore.password`` (the key's          (+ ``ssl.truststore.password``)
            password: ``ssl.key.password`` if set)
JKS         refused: no pure-Python, permissively licensed reader; convert it with
            ``keytool -importkeystore -deststoretype PKCS12`` or use PEM. (JKS is Kafka's
            default type: give ``ssl.keystore.type`` / ``ssl.truststore.type`` explicitly.)
=========== ============================================ =========================================

The combinations Kafka refuses are refused with Kafka's messages
(:class:`SslConfigError`): a key without a chain, a location and an inline
key, a PEM store with a store password, a store location without its
password (PKCS12 keystore), a password without a store. As in Kafka, only
``-----BEGIN PRIVATE KEY-----`` / ``-----BEGIN ENCRYPTED PRIVATE KEY-----``
(PKCS#8) keys are read from PEM; a PKCS#1 ``RSA PRIVATE KEY`` is "Private key
not provided".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

__all__ = ["KeyMaterial", "SslConfigError", "load_keystore", "load_truststore"]

PEM = "PEM"
PKCS12 = "PKCS12"
JKS = "JKS"
_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)
_KEY = re.compile(
    rb"-----BEGIN (ENCRYPTED )?PRIVATE KEY-----.+?-----END (?:ENCRYPTED )?PRIVATE KEY-----", re.S
)


class SslConfigError(ValueError):
    """An ``ssl.*`` setting Kafka would refuse (its InvalidConfigurationException), or a
    store lethe cannot read; the message names the setting or file."""


@dataclass(frozen=True, slots=True)
class KeyMaterial:
    """A certificate chain (leaf first) and its unencrypted PKCS#8 key, both PEM."""

    chain_pem: bytes
    key_pem: bytes

    def __repr__(self) -> str:
        return f"KeyMaterial(certificates={len(_CERT.findall(self.chain_pem))}, key=***)"


def _type(settings: Mapping[str, str], key: str) -> str:
    value = settings.get(key, JKS).strip().upper() or JKS
    if value == JKS:
        raise SslConfigError(
            f"{key}=JKS is not supported: lethe has no pure-Python JKS reader; "
            f"set {key}=PKCS12 or PEM (keytool -importkeystore -deststoretype PKCS12 converts)"
        )
    if value not in (PEM, PKCS12):
        raise SslConfigError(f"{key}={value} is not supported (PEM, PKCS12)")
    return value


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise SslConfigError(f"Failed to load SSL {what} {path}: {error}") from None


def load_keystore(settings: Mapping[str, str]) -> KeyMaterial | None:
    """This side's chain and key from ``ssl.keystore.*`` / ``ssl.key.password``; None if
    no keystore is configured (Kafka's clients run so against brokers without client auth)."""
    key, chain = settings.get("ssl.keystore.key"), settings.get("ssl.keystore.certificate.chain")
    path, password = settings.get("ssl.keystore.location"), settings.get("ssl.keystore.password")
    key_password = settings.get("ssl.key.password")
    if key is None and chain is None and path is None:
        if password is None:
            return None
        raise SslConfigError("SSL key store is not specified, but key store password is specified.")
    kind = _type(settings, "ssl.keystore.type")
    if key is not None:
        if kind != PEM:
            raise SslConfigError(
                f"SSL private key can be specified only for PEM, but key store type is {kind}."
            )
        if chain is None:
            raise SslConfigError(
                "SSL private key is specified, but certificate chain is not specified."
            )
        if path is not None:
            raise SslConfigError(
                "Both SSL key store location and separate private key are specified."
            )
        if password is not None:
            raise SslConfigError(
                "SSL key store password cannot be specified with PEM format, "
                "only key password may be specified."
            )
        return _pem_keystore(chain.encode(), key.encode(), key_password, "ssl.keystore.key")
    if chain is not None:
        raise SslConfigError("SSL certificate chain is specified, but private key is not specified")
    if path is None:
        raise SslConfigError("SSL key store is not specified, but key store password is specified.")
    if kind == PEM:
        if password is not None:
            raise SslConfigError(
                "SSL key store password cannot be specified with PEM format, "
                "only key password may be specified"
            )
        text = _read(path, "keystore")
        return _pem_keystore(text, text, key_password, path)
    if password is None:
        raise SslConfigError("SSL key store is specified, but key store password is not specified.")
    return _pkcs12_keystore(_read(path, "keystore"), path, password, key_password)


def load_truststore(settings: Mapping[str, str]) -> bytes | None:
    """The trusted certificates (PEM) from ``ssl.truststore.*``; None if not configured."""
    certs, path = (
        settings.get("ssl.truststore.certificates"),
        settings.get("ssl.truststore.location"),
    )
    password = settings.get("ssl.truststore.password")
    if certs is None and path is None:
        if password is not None:
            raise SslConfigError(
                "SSL trust store is not specified, but trust store password is specified."
            )
        return None
    kind = _type(settings, "ssl.truststore.type")
    if certs is not None or kind == PEM:
        if certs is not None and kind != PEM:
            raise SslConfigError(
                f"SSL trust store certs can be specified only for PEM, but trust store type is "
                f"{kind}."
            )
        if certs is not None and path is not None:
            raise SslConfigError(
                "Both SSL trust store location and separate trust certificates are specified."
            )
        if password is not None:
            raise SslConfigError("SSL trust store password cannot be specified for PEM format.")
        text = certs.encode() if certs is not None else _read(str(path), "truststore")
        found = _CERT.findall(text)
        if not found:
            raise SslConfigError(
                f"Invalid PEM truststore configs ({path or 'ssl.truststore.certificates'}): "
                "At least one certificate expected, but none found"
            )
        return b"\n".join(found) + b"\n"
    return _pkcs12_truststore(_read(str(path), "truststore"), str(path), password)


def _pem_keystore(chain: bytes, key: bytes, key_password: str | None, where: str) -> KeyMaterial:

    certs = _CERT.findall(chain)
    keys = _KEY.findall(key)
    if not certs:
        raise SslConfigError(
            f"Invalid PEM keystore configs ({where}): At least one certificate expected, "
            "but none found"
        )
    if len(keys) != 1:
        detail = (
            "Private key not provided"
            if not keys
            else f"Expected one private key, but found {len(keys)}"
        )
        raise SslConfigError(f"Invalid PEM keystore configs ({where}): {detail}")
    block = _KEY.search(key)
    assert block is not None
    encrypted = block.group(1) is not None
    if encrypted and key_password is None:
        raise SslConfigError(
            f"Invalid PEM keystore configs ({where}): the private key is encrypted and "
            "ssl.key.password is not set"
        )
    try:
        private = serialization.load_pem_private_key(
            block.group(0), key_password.encode() if encrypted and key_password else None
        )
    except (ValueError, TypeError) as error:
        raise SslConfigError(
            f"Invalid PEM keystore configs ({where}): Private key could not be loaded "
            f"(wrong ssl.key.password?): {error}"
        ) from None
    return KeyMaterial(b"\n".join(certs) + b"\n", _pkcs8(private))


def _pkcs8(private: PrivateKeyTypes) -> bytes:
    return private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _load_pkcs12(
    data: bytes, path: str, passwords: Sequence[str | None]
) -> pkcs12.PKCS12KeyAndCertificates:
    for password in passwords:
        try:
            return pkcs12.load_pkcs12(data, None if password is None else password.encode())
        except (ValueError, TypeError):
            continue
    raise SslConfigError(
        f"Failed to load SSL keystore {path} of type PKCS12: wrong password or not a PKCS12 file"
    )


def _pkcs12_keystore(
    data: bytes, path: str, password: str, key_password: str | None
) -> KeyMaterial:

    tried = [password] if key_password in (None, password) else [password, key_password]
    store = _load_pkcs12(data, path, tried)
    key, cert = store.key, store.cert
    if key is None or cert is None:
        raise SslConfigError(f"Failed to load SSL keystore {path}: no private key entry in it")
    chain = [cert.certificate] + [c.certificate for c in store.additional_certs]
    pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)
    return KeyMaterial(pem, _pkcs8(key))


def _pkcs12_truststore(data: bytes, path: str, password: str | None) -> bytes:

    store = _load_pkcs12(data, path, [password, None] if password else [None])
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.insert(0, store.cert.certificate)
    if not certs:
        raise SslConfigError(f"Failed to load SSL truststore {path}: no certificate in it")
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)
