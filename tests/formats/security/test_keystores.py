"""Keystores and truststores as Kafka's ``ssl.*`` settings name them: the PEM and PKCS12
forms load (and make working TLS contexts), JKS and the combinations Kafka's
``DefaultSslEngineFactory`` refuses are refused with its messages, wrong passwords say so."""

from __future__ import annotations

import contextlib
import re
import ssl
from pathlib import Path

import pytest
from lethe_formats.security.client_settings import (
    ClientSecurityError,
    client_security,
    security_from_options,
)
from lethe_formats.security.keystores import SslConfigError, load_keystore, load_truststore
from lethe_formats.security.sasl_client import SaslCredentials
from lethe_formats.security.tls import client_context, server_context
from tls_support import KEY_PASSWORD, STORE_PASSWORD, Certs


def handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> str:
    """Run a TLS handshake in memory; the client's view of the server's subject CN."""
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    client_side = client.wrap_bio(c_in, c_out, server_hostname="localhost")
    server_side = server.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):
        for side, outbox, peer_in in ((client_side, c_out, s_in), (server_side, s_out, c_in)):
            with contextlib.suppress(ssl.SSLWantReadError):
                side.do_handshake()
            peer_in.write(outbox.read())
    cert = client_side.getpeercert()
    assert cert is not None
    return str(dict(pair[0] for pair in cert["subject"])["commonName"])


def pem_store(tls_certs: Certs) -> dict[str, str]:
    return {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls_certs.ca)}


@pytest.mark.parametrize(
    "keystore",
    [
        pytest.param(
            lambda c: {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(c.server_pem)},
            id="pem-file",
        ),
        pytest.param(
            lambda c: {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(c.server_pem_encrypted),
                "ssl.key.password": KEY_PASSWORD,
            },
            id="pem-file-encrypted-key",
        ),
        pytest.param(
            lambda c: {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.certificate.chain": c.server_chain,
                "ssl.keystore.key": c.server_key,
            },
            id="pem-inline",
        ),
        pytest.param(
            lambda c: {
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": str(c.server_p12),
                "ssl.keystore.password": STORE_PASSWORD,
            },
            id="pkcs12",
        ),
    ],
)
def test_every_keystore_form_serves_a_handshake(tls_certs: Certs, keystore: object) -> None:
    settings = keystore(tls_certs)  # type: ignore[operator]
    server = server_context(settings | pem_store(tls_certs))
    assert handshake(server, client_context(pem_store(tls_certs))) == "localhost"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"ssl.keystore.location": "x.jks", "ssl.keystore.password": "p"},
            "ssl.keystore.type=JKS is not supported",
        ),
        (
            {"ssl.keystore.type": "PKCS12", "ssl.keystore.key": "k"},
            "SSL private key can be specified only for PEM, but key store type is PKCS12.",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k"},
            "SSL private key is specified, but certificate chain is not specified.",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": "c"},
            "SSL certificate chain is specified, but private key is not specified",
        ),
        (
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": "f",
                "ssl.keystore.password": "p",
            },
            "SSL key store password cannot be specified with PEM format",
        ),
        (
            {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "f"},
            "SSL key store is specified, but key store password is not specified.",
        ),
        (
            {"ssl.keystore.password": "p"},
            "SSL key store is not specified, but key store password is specified.",
        ),
    ],
)
def test_combinations_kafka_refuses_are_refused_with_its_message(
    settings: dict[str, str], message: str
) -> None:
    with pytest.raises(SslConfigError, match=re.escape(message)):
        load_keystore(settings)


def test_wrong_passwords_and_missing_files_name_what_failed(tls_certs: Certs) -> None:
    with pytest.raises(SslConfigError, match="Private key could not be loaded"):
        load_keystore(
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(tls_certs.server_pem_encrypted),
                "ssl.key.password": "wrong",
            }
        )
    with pytest.raises(SslConfigError, match=r"encrypted and ssl\.key\.password is not set"):
        load_keystore(
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(tls_certs.server_pem_encrypted),
            }
        )
    with pytest.raises(
        SslConfigError, match=re.escape(f"Failed to load SSL keystore {tls_certs.server_p12}")
    ):
        load_keystore(
            {
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": str(tls_certs.server_p12),
                "ssl.keystore.password": "wrong",
            }
        )
    with pytest.raises(
        SslConfigError, match=re.escape("Failed to load SSL keystore /nonexistent.pem")
    ):
        load_keystore({"ssl.keystore.type": "PEM", "ssl.keystore.location": "/nonexistent.pem"})
    with pytest.raises(SslConfigError, match="At least one certificate expected"):
        load_truststore({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "none"})
    with pytest.raises(SslConfigError, match="trust store password cannot be specified for PEM"):
        load_truststore(pem_store(tls_certs) | {"ssl.truststore.password": "p"})


def test_a_pkcs12_truststore_is_read(tls_certs: Certs) -> None:
    trusted = load_truststore(
        {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(tls_certs.server_p12),
            "ssl.truststore.password": STORE_PASSWORD,
        }
    )
    assert trusted is not None
    assert (
        trusted == tls_certs.server_chain.encode().replace(b"\n\n", b"\n")
        or trusted.count(b"BEGIN CERTIFICATE") == 2
    )


def test_client_properties_give_protocol_mechanism_credentials_and_tls(tls_certs: Certs) -> None:
    security = client_security(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            'required username="alice" password="alice-secret";',
        }
        | pem_store(tls_certs)
    )
    assert security.protocol == "SASL_SSL"
    assert security.sasl == SaslCredentials("alice", "alice-secret", "SCRAM-SHA-512")
    assert security.tls is not None and security.tls.check_hostname


@pytest.mark.parametrize(
    ("properties", "fragment"),
    [
        ({"security.protocol": "SASL_SSL"}, "sasl.mechanism=GSSAPI is not supported"),
        (
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
                'required username="a" password="b";',
            },
            "does not go with sasl.mechanism=SCRAM-SHA-256",
        ),
        ({"security.protocol": "SSL", "ssl.truststore.location": "t.jks"}, "JKS"),
        ({"security.protocol": "SSL", "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}, "cipher"),
        ({"security.protocol": "SSL", "ssl.enabled.protocols": "SSLv3"}, "SSLv3"),
    ],
)
def test_unusable_client_properties_name_the_setting(
    properties: dict[str, str], fragment: str
) -> None:
    with pytest.raises(ClientSecurityError, match=fragment):
        client_security(properties)


def test_options_with_a_client_certificate_and_key_password(
    tls_certs: Certs, tmp_path: Path
) -> None:
    security = security_from_options(
        "SSL",
        cafile=str(tls_certs.ca),
        certfile=str(tls_certs.client_cert),
        keyfile=str(tls_certs.client_key_encrypted),
        key_password=KEY_PASSWORD,
    )
    assert security.tls is not None and security.sasl is None
    with pytest.raises(ClientSecurityError, match="wrong or missing key password"):
        security_from_options(
            "SSL",
            cafile=str(tls_certs.ca),
            certfile=str(tls_certs.client_cert),
            keyfile=str(tls_certs.client_key_encrypted),
            key_password="wrong",
        )
    with pytest.raises(ClientSecurityError, match="TLS files need security protocol SSL"):
        security_from_options(cafile=str(tls_certs.ca))
    with pytest.raises(ClientSecurityError, match="key password needs its certificate file"):
        security_from_options("SSL", cafile=str(tls_certs.ca), key_password=KEY_PASSWORD)
    with pytest.raises(ClientSecurityError, match="a SASL mechanism needs a SASL user"):
        security_from_options("SSL", cafile=str(tls_certs.ca), mechanism="SCRAM-SHA-256")
