"""Certificates made by the tests (the ``cryptography`` package): a CA, a server
certificate for 127.0.0.1 and localhost, and client certificates, written as the
stores Kafka's ``ssl.*`` settings name (PEM keystore files, PKCS12), plus the
separate PEM files clients take (``--ssl-cafile`` / ``--ssl-certfile`` / ...)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

KEY_PASSWORD = "key-secret"
STORE_PASSWORD = "store-secret"
#: the client certificate's subject, and the principal Kafka derives from it (RFC 2253)
CLIENT_SUBJECT = [("O", "lethe"), ("OU", "tests"), ("CN", "alice-client")]
CLIENT_PRINCIPAL = "User:CN=alice-client,OU=tests,O=lethe"
_OIDS = {
    "CN": NameOID.COMMON_NAME,
    "O": NameOID.ORGANIZATION_NAME,
    "OU": NameOID.ORGANIZATIONAL_UNIT_NAME,
}
_START = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
_END = datetime.datetime(2099, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Certs:
    """Paths of everything :func:`make_certs` wrote."""

    dir: Path
    ca: Path  # CA certificate (PEM): truststore / --ssl-cafile
    server_pem: Path  # server key (PKCS#8, unencrypted) + chain: ssl.keystore.type=PEM
    server_pem_encrypted: Path  # the same, key encrypted with KEY_PASSWORD
    server_p12: Path  # PKCS12, STORE_PASSWORD
    client_cert: Path
    client_key: Path  # unencrypted
    client_key_encrypted: Path  # encrypted with KEY_PASSWORD
    client_p12: Path  # PKCS12 keystore, STORE_PASSWORD
    rogue_cert: Path  # a client certificate from another CA
    rogue_key: Path
    server_chain: str  # inline ssl.keystore.certificate.chain
    server_key: str  # inline ssl.keystore.key (unencrypted)


def _name(pairs: list[tuple[str, str]]) -> x509.Name:
    return x509.Name([x509.NameAttribute(_OIDS[k], v) for k, v in pairs])


def _cert(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    hosts: bool = False,
) -> x509.Certificate:
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_START)
        .not_valid_after(_END)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if hosts:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption()
        if password is None
        else serialization.BestAvailableEncryption(password.encode())
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_certs(directory: Path) -> Certs:
    """Write a CA, a server and client certificates into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, server_key, client_key, rogue_key = (
        ec.generate_private_key(ec.SECP256R1()) for _ in range(4)
    )
    ca_name = _name([("O", "lethe"), ("CN", "lethe test CA")])
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    server = _cert(_name([("CN", "localhost")]), server_key, ca_name, ca_key, hosts=True)
    client = _cert(_name(CLIENT_SUBJECT), client_key, ca_name, ca_key)
    rogue_name = _name([("CN", "rogue CA")])
    rogue = _cert(_name([("CN", "mallory")]), rogue_key, rogue_name, rogue_key)
    chain = _pem(server) + _pem(ca)
    files = {
        "ca.pem": _pem(ca),
        "server.pem": _key_pem(server_key) + chain,
        "server-encrypted.pem": _key_pem(server_key, KEY_PASSWORD) + chain,
        "server.p12": pkcs12.serialize_key_and_certificates(
            b"server",
            server_key,
            server,
            [ca],
            serialization.BestAvailableEncryption(STORE_PASSWORD.encode()),
        ),
        "client.crt": _pem(client),
        "client.key": _key_pem(client_key),
        "client-encrypted.key": _key_pem(client_key, KEY_PASSWORD),
        "client.p12": pkcs12.serialize_key_and_certificates(
            b"client",
            client_key,
            client,
            [ca],
            serialization.BestAvailableEncryption(STORE_PASSWORD.encode()),
        ),
        "rogue.crt": _pem(rogue),
        "rogue.key": _key_pem(rogue_key),
    }
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return Certs(
        directory,
        directory / "ca.pem",
        directory / "server.pem",
        directory / "server-encrypted.pem",
        directory / "server.p12",
        directory / "client.crt",
        directory / "client.key",
        directory / "client-encrypted.key",
        directory / "client.p12",
        directory / "rogue.crt",
        directory / "rogue.key",
        chain.decode(),
        _key_pem(server_key).decode(),
    )
