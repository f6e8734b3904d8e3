"""TLS for the tests: certificates made by the tests and ``lethe broker`` started from the CLI.

:func:`make_certs` writes (the ``cryptography`` package) a CA, a server
certificate for 127.0.0.1 and localhost, and client certificates, as the stores
Kafka's ``ssl.*`` settings name (PEM keystore files, PKCS12) and as the separate
PEM files clients take (``--ssl-cafile`` / ``--ssl-certfile`` / ...).
:class:`CliBroker` runs ``lethe broker --config FILE`` in a subprocess, its log
in a file (so a chatty broker never blocks on a full pipe), and knows the port
of each listener from its ``event=listening`` line.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
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


#: SASL accounts of :func:`broker_settings` (PLAIN and SCRAM alike)
ADMIN = ("admin", "admin-secret")
ALICE = ("alice", "alice-secret")
_PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" '
    'user_alice="alice-secret";'
)
_SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'user_admin="admin-secret" user_alice="alice-secret";'
)


def broker_settings(certs: Certs, **extra: str) -> dict[str, str]:
    """An SSL listener (PKCS12 keystore, client auth requested) and a SASL_SSL one
    (encrypted PEM keystore file; PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), both trusting
    the test CA, each on a free port; ``extra`` settings added or replaced."""
    settings = {
        "listeners": "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs.ca),
        "listener.name.ssl.ssl.keystore.type": "PKCS12",
        "listener.name.ssl.ssl.keystore.location": str(certs.server_p12),
        "listener.name.ssl.ssl.keystore.password": STORE_PASSWORD,
        "listener.name.ssl.ssl.client.auth": "requested",
        "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
        "listener.name.sasl_ssl.ssl.keystore.location": str(certs.server_pem_encrypted),
        "listener.name.sasl_ssl.ssl.key.password": KEY_PASSWORD,
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": _PLAIN_JAAS,
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": _SCRAM_JAAS,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": _SCRAM_JAAS,
    }
    return settings | extra


def write_properties(path: Path, settings: Mapping[str, str]) -> Path:
    """A Java properties file (values here never need escaping but backslashes)."""
    lines = (f"{key}={value.replace(chr(92), chr(92) * 2)}\n" for key, value in settings.items())
    path.write_text("".join(lines))
    return path


class CliBroker:
    """``lethe broker`` in a subprocess; use as a context manager (SIGTERM, exit 0)."""

    def __init__(self, directory: Path, settings: Mapping[str, str]) -> None:
        self.directory = directory
        self.config = write_properties(directory / "server.properties", settings)
        self.log = directory / "broker.log"
        self.log_dir = directory / "logs"
        self.ports: dict[str, int] = {}
        self._main = settings.get("listeners", "PLAINTEXT://").split("://")[0].upper()
        self.process: subprocess.Popen[bytes] | None = None

    def run(self, timeout_s: float = 120) -> int:
        """Start and wait for the exit (a broker that must refuse to start)."""
        with self.log.open("wb") as out:
            done = subprocess.run(self._command(), stderr=out, timeout=timeout_s, check=False)
        return done.returncode

    def __enter__(self) -> CliBroker:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(self._command(), stderr=out, env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = next((x for x in self.text().splitlines() if "event=listening" in x), None)
            if line is not None:
                self.ports = listening_ports(line)
                self.ports.setdefault(self._main, self.ports["main"])
                return self
            if self.process.poll() is not None:
                raise AssertionError(f"lethe broker exited: {self.text()}")
            time.sleep(0.05)
        raise AssertionError(f"lethe broker did not listen: {self.text()}")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(60) == 0, self.text()

    def _command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "lethe_tools.cli",
            "broker",
            "--log-dir",
            str(self.log_dir),
            "--config",
            str(self.config),
        ]

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def address(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def wait_for_log(self, fragment: str, count: int = 1, timeout_s: float = 60) -> str:
        """Bounded wait until ``fragment`` occurs ``count`` times in the log."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = self.text()
            if text.count(fragment) >= count:
                return text
            time.sleep(0.05)
        raise AssertionError(f"{fragment!r} x{count} not logged: {self.text()}")


def listening_ports(line: str) -> dict[str, int]:
    """``event=listening ... port=P1 listeners=SASL_SSL:P2`` -> ports by listener name
    (the main listener under the first name of ``listeners``)."""
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    ports = {"main": int(fields["port"])}
    for entry in filter(None, fields.get("listeners", "").split(",")):
        name, port = entry.rsplit(":", 1)
        ports[name] = int(port)
    return ports
