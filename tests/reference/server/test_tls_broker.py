"""``lethe broker`` serves SSL and SASL_SSL listeners configured as Kafka configures them.

Certificates are made by the tests (tests/tls_support.py). The SSL listener has a
PKCS12 keystore, the SASL_SSL one an encrypted PEM keystore file, both chosen with
listener-prefixed settings (``listener.name.<l>.ssl.*``) over a broker-wide
truststore. Bad input at the edge (a plaintext client, a missing or untrusted client
certificate, a handshake that never comes) closes that connection, is logged, and
the broker keeps serving; a keystore the broker cannot use stops it before anything
is initialised, exit status 1, as Kafka's startup fails on its config.
"""

from __future__ import annotations

import socket
import ssl
import struct
from pathlib import Path

import pytest
from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.client.errors import AuthenticationError, TargetUnreachableError
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.metadata import MetadataRequest, MetadataResponse
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_formats.security.sasl_client import SaslCredentials
from lethe_formats.security.tls import client_context
from tls_support import (
    ADMIN,
    KEY_PASSWORD,
    STORE_PASSWORD,
    Certs,
    CliBroker,
    broker_settings,
)

API_VERSIONS_V0 = struct.pack(">hhih", 18, 0, 7, 1) + b"x"


def trusting(tls_certs: Certs, client_cert: bool = False) -> ssl.SSLContext:
    context = client_context(
        {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls_certs.ca)}
    )
    if client_cert:
        context.load_cert_chain(tls_certs.client_cert, tls_certs.client_key)
    return context


def open_connection(address: str, **kwargs: object) -> KafkaConnection:
    host, _, port = address.rpartition(":")
    return KafkaConnection.open(host, int(port), request_timeout=30, **kwargs)  # type: ignore[arg-type]


def metadata_brokers(connection: KafkaConnection) -> list[int]:
    answer = connection.call(MetadataRequest(topics=()), MetadataResponse)
    return [broker.port for broker in answer.brokers]


def test_ssl_and_sasl_ssl_listeners_serve_tls_and_every_sasl_mechanism(
    tmp_path: Path, tls_certs: Certs
) -> None:
    with CliBroker(tmp_path, broker_settings(tls_certs)) as broker:
        ssl_address, sasl_address = broker.address("SSL"), broker.address("SASL_SSL")
        with open_connection(ssl_address, tls=trusting(tls_certs, client_cert=True)) as conn:
            # Metadata on a listener advertises that listener's address
            assert metadata_brokers(conn) == [broker.ports["SSL"]]
        for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            credentials = SaslCredentials(*ADMIN, mechanism)
            with open_connection(sasl_address, tls=trusting(tls_certs), sasl=credentials) as conn:
                assert metadata_brokers(conn) == [broker.ports["SASL_SSL"]]
            wrong = SaslCredentials(ADMIN[0], "wrong", mechanism)
            with pytest.raises(AuthenticationError, match="SASL_AUTHENTICATION_FAILED"):
                open_connection(sasl_address, tls=trusting(tls_certs), sasl=wrong)
        # an unsupported mechanism: 33 with the enabled list in Kafka 4.0.0's order (a
        # HashSet's, seen on a real 4.0.0 with the same sasl.enabled.mechanisms)
        with open_connection(sasl_address, tls=trusting(tls_certs)) as conn:
            refused = conn.call(SaslHandshakeRequest("GSSAPI"), SaslHandshakeResponse, version=1)
        assert refused.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert list(refused.mechanisms) == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]
        # the listener speaks TLS only: a SASL client without TLS gets no answer
        with pytest.raises(TargetUnreachableError):
            open_connection(sasl_address, sasl=SaslCredentials(*ADMIN), connect_timeout=5)


def plaintext_is_dropped(address: str) -> bytes:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(API_VERSIONS_V0)) + API_VERSIONS_V0)
        return sock.recv(100)


def tls_exchange(address: str, context: ssl.SSLContext) -> bytes:
    """An ApiVersions v0 over TLS; what came back (b"" when the broker closed)."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        try:
            with context.wrap_socket(raw, server_hostname=host) as sock:
                sock.sendall(struct.pack(">i", len(API_VERSIONS_V0)) + API_VERSIONS_V0)
                return sock.recv(100)
        except (ssl.SSLError, ConnectionError):
            return b""


def test_bad_clients_are_disconnected_and_logged_and_the_broker_keeps_serving(
    tmp_path: Path, tls_certs: Certs
) -> None:
    settings = broker_settings(
        tls_certs,
        **{
            "listener.name.ssl.ssl.client.auth": "required",
            "connections.max.idle.ms": "1500",
        },
    )
    with CliBroker(tmp_path, settings) as broker:
        address = broker.address("SSL")
        assert plaintext_is_dropped(address) == b""
        assert tls_exchange(address, trusting(tls_certs)) == b""  # no client certificate
        rogue = trusting(tls_certs)
        rogue.load_cert_chain(tls_certs.rogue_cert, tls_certs.rogue_key)
        assert tls_exchange(address, rogue) == b""  # a certificate from another CA
        host, _, port = address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=30) as silent:
            assert silent.recv(100) == b""  # closed after connections.max.idle.ms
        log = broker.wait_for_log("event=tls-handshake-failed", count=4)
        assert "WRONG_VERSION_NUMBER" in log
        assert "no handshake within connections.max.idle.ms" in log
        answer = tls_exchange(address, trusting(tls_certs, client_cert=True))
        assert answer[4:8] == struct.pack(">i", 7)  # the correlation id: still serving
        assert "connection-crashed" not in broker.text()


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        (
            {"listener.name.ssl.ssl.keystore.type": "JKS"},
            "listener SSL: ssl.keystore.type=JKS is not supported: lethe has no pure-Python "
            "JKS reader",
        ),
        (
            {"listener.name.sasl_ssl.ssl.key.password": "wrong"},
            "listener SASL_SSL: Invalid PEM keystore configs",
        ),
        (
            {"listener.name.ssl.ssl.keystore.password": "wrong"},
            "listener SSL: Failed to load SSL keystore",
        ),
        (
            {"listener.name.ssl.ssl.client.auth": "maybe"},
            "Invalid value maybe for configuration ssl.client.auth",
        ),
        (
            {"listener.name.ssl.ssl.keystore.location": "/nonexistent/server.p12"},
            "Failed to load SSL keystore /nonexistent/server.p12",
        ),
    ],
)
def test_an_unusable_keystore_stops_the_start_with_nothing_initialised(
    tmp_path: Path, tls_certs: Certs, override: dict[str, str], fragment: str
) -> None:
    broker = CliBroker(tmp_path, broker_settings(tls_certs, **override))
    assert broker.run() == 1
    text = broker.text()
    assert "event=start-failed" in text and fragment in text, text
    assert "Traceback" not in text
    assert not broker.log_dir.exists()  # nothing initialised
    assert STORE_PASSWORD not in text and KEY_PASSWORD not in text  # no secret in the log


def test_mapping_rules_name_the_certificate_principal_that_acls_see(
    tmp_path: Path, tls_certs: Certs
) -> None:
    """``CN=alice-client,OU=tests,O=lethe`` mapped to ``alice-client``, a super user: its
    CreateTopics is allowed; a TLS client without a certificate (ANONYMOUS) is refused."""
    settings = broker_settings(
        tls_certs,
        **{
            "listener.name.ssl.ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=.*$/$1/,DEFAULT",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:alice-client",
            "allow.everyone.if.no.acl.found": "false",
        },
    )
    with CliBroker(tmp_path, settings) as broker:
        address = broker.address("SSL")
        with open_connection(address, tls=trusting(tls_certs, client_cert=True)) as conn:
            created = calls.create_topic(conn, "mapped", 1, {})
        assert created.topics[0].error_code == ErrorCode.NONE
        with open_connection(address, tls=trusting(tls_certs)) as conn:
            refused = calls.create_topic(conn, "anonymous", 1, {})
        assert refused.topics[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_a_certificate_no_rule_maps_is_disconnected(tmp_path: Path, tls_certs: Certs) -> None:
    rules = {"listener.name.ssl.ssl.principal.mapping.rules": "RULE:^OU=(.*)$/$1/"}
    with CliBroker(tmp_path, broker_settings(tls_certs, **rules)) as broker:
        assert tls_exchange(broker.address("SSL"), trusting(tls_certs, client_cert=True)) == b""
        log = broker.wait_for_log("event=tls-principal-unmapped")
        assert "No rules apply to CN=alice-client,OU=tests,O=lethe" in log
